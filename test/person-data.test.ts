import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { sql } from 'kysely';
import { erasePersonData, exportPersonData } from '../src/privacy/person-data.js';
import { journalBacklog } from '../src/store/journal-backlog.js';
import { storeJournalDir, storeJournalRoot } from '../src/store/store-journal-dir.js';
import { WriteJournal } from '../src/store/write-journal.js';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { callSummary, stored } from './helpers/reports.js';
import { freshStore } from './helpers/stores.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startReportReceiver, type ReportReceiver } from './helpers/report-receiver.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'person-data-admin-token-0123456789';
const SECRET = 'person-data-report-secret-0123456789';
/** The person asking: stored as the service sends it, asked for as people write it. */
const ANNA = { stored: '4915112345678', written: '+49 (0)151 1234-5678', otherForm: '0049 151 12345678', words: 'My secret word is pineapple' };
const BERT = { stored: '4917099999999', words: 'Hello there, this is banana speaking' };


let env: TestHotline | undefined;
let receiver: ReportReceiver | undefined;
let store: TestStoreLocation | undefined;

afterEach(async () => {
  await env?.close();
  await receiver?.close();
  await store?.remove();
  env = receiver = store = undefined;
});

async function call(from: string, words: string): Promise<string> {
  const service = await FakeVoiceService.connect(env!.hotline.wsUrl);
  service.start({ from_phone_number: from });
  await service.next();
  service.say(words);
  await service.nextOfType('speak');
  service.end('caller_hangup');
  await service.close();
  return service.sessionId;
}

async function api(pathname: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${env!.hotline.url}${pathname}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** A dashboard session of the admin (the password is the admin token). */
async function logIn(): Promise<string> {
  const login = await fetch(`${env!.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password: ADMIN }).toString(),
  });
  return (login.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** Every file under the folder, read whole. */
async function filesUnder(dir: string): Promise<{ file: string; text: string }[]> {
  const out: { file: string; text: string }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, text: await readFile(file, 'utf8') });
  }
  return out;
}

/** Every row of every table the database has (asked of the database, so a table added later is searched too). */
async function everyRow(): Promise<string> {
  const { db, dialect } = env!.hotline.store;
  const names =
    dialect === 'sqlite'
      ? await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(db)
      : await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`.execute(db);
  const tables = names.rows.map((row) => row.name).sort();
  expect(tables).toEqual(expect.arrayContaining(['calls', 'reports', 'deliveries', 'campaign_contacts', 'audit_log', 'erasures']));
  const dumps: string[] = [];
  for (const table of tables) dumps.push(`${table}: ${JSON.stringify((await sql`SELECT * FROM ${sql.table(table)}`.execute(db)).rows)}`);
  return dumps.join('\n');
}

describe.each(await storeKinds())('a person’s data by their number (%s)', (kind) => {
  test('export returns every call of theirs and no one else’s; erasure by another written form leaves no trace, and other callers are untouched', async () => {
    store = await freshStoreLocation(kind);
    receiver = await startReportReceiver(SECRET);
    // The receiver is down: the reports wait as future deliveries.
    receiver.status = 503;
    env = await startTestHotline(
      scriptByUserText({ [ANNA.words]: { content: 'Noted, thank you.' }, [BERT.words]: { content: 'Hello Bert.' } }),
      { ADMIN_TOKEN: ADMIN, REPORT_WEBHOOK_URL: receiver.url, REPORT_WEBHOOK_SECRET: SECRET, ...store.env },
    );
    await call(ANNA.stored, ANNA.words);
    await call(ANNA.stored, ANNA.words);
    await call(BERT.stored, BERT.words);
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    // Each call's report waits for delivery.
    await expect.poll(async () => (await env!.hotline.store.db.selectFrom('deliveries').select('id').execute()).length, { timeout: 10_000 }).toBe(3);

    const exported = await api('/api/people/export', { number: ANNA.written });
    expect(exported.status).toBe(200);
    const document = exported.json as { number: string; calls: { call: { from_number: string }; transcript: { text?: string }[]; report: unknown; deliveries: unknown[] }[] };
    expect(document.number).toBe(ANNA.stored);
    expect(document.calls).toHaveLength(2);
    for (const one of document.calls) {
      expect(one.call.from_number).toBe(ANNA.stored);
      expect(one.transcript.map((line) => line.text)).toContain(ANNA.words);
      expect(one.report).toBeDefined();
      expect(one.deliveries).toHaveLength(1);
    }
    expect(JSON.stringify(document)).not.toContain('banana');

    const dry = await api('/api/people/erase', { number: ANNA.otherForm, dryRun: true });
    expect(dry).toMatchObject({ status: 200, json: { dryRun: true, counts: { calls: 2, transcripts: 2, reports: 2, deliveries: 2 } } });
    expect(await everyRow()).toContain('pineapple');

    const erased = await api('/api/people/erase', { number: ANNA.otherForm });
    expect(erased).toMatchObject({ status: 200, json: { counts: { calls: 2, transcripts: 2, reports: 2, deliveries: 2 }, leftInProgress: 0 } });

    const rows = await everyRow();
    for (const trace of [ANNA.stored, '15112345678', 'pineapple']) expect(rows).not.toContain(trace);
    expect(rows).toContain('banana');
    expect(rows).toContain(BERT.stored);
    const files = await filesUnder(env.transcriptsDir);
    for (const { file, text } of files) for (const trace of ['15112345678', 'pineapple']) expect(text, file).not.toContain(trace);
    expect(files.some(({ text }) => text.includes('banana'))).toBe(true);
    // The erasure itself is on record, without whose.
    expect(rows).toMatch(/erasures: \[\{"id":"[^"]+","erased_at":"[^"]+","actor":"api","counts":"\{\\"calls\\":2/);
    // The export and the erasure are on record, as the API's, naming no one.
    expect(rows).toMatch(/"actor":"api","role":"admin","action":"export_person"/);
    expect(rows).toMatch(/"actor":"api","role":"admin","action":"erase_person"/);

    // The receiver is back: what is still to be delivered carries nothing of hers.
    receiver.status = 200;
    expect((await api('/api/reports/redeliver', {})).status).toBe(202);
    await expect.poll(() => receiver!.received.filter((r) => r.status === 200).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    const delivered = receiver.received.filter((r) => r.status === 200).map((r) => r.body);
    expect(delivered.some((body) => body.includes('banana'))).toBe(true);
    for (const body of delivered) for (const trace of ['15112345678', 'pineapple']) expect(body).not.toContain(trace);
  });
});

describe.each(await storeKinds())('a request that cannot read everything (%s)', (kind) => {
  test('fails loudly, naming what could not be read, and an erasure then changes nothing', async () => {
    store = await freshStoreLocation(kind);
    env = await startTestHotline(scriptByUserText({ [ANNA.words]: { content: 'Noted, thank you.' } }), { ADMIN_TOKEN: ADMIN, ...store.env });
    const sessionId = await call(ANNA.stored, ANNA.words);
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.whenRecorded();
    // The call's row reaches the database after the call is recorded (through the write journal): an
    // export before that finds no call, and so no transcript to fail on.
    await expect
      .poll(async () => (await env!.hotline.store.db.selectFrom('calls').select('transcript_file').execute()).filter((row) => row.transcript_file).length, { timeout: 10_000 })
      .toBe(1);
    const transcript = path.join(env.transcriptsDir, transcriptFileName(sessionId));
    const journal = path.join(storeJournalRoot(env.transcriptsDir), 'replica-x');
    await mkdir(journal, { recursive: true });
    const unreadable: [string, () => Promise<void>, () => Promise<void>, RegExp][] = [
      // A file that cannot be read: here one turned into a folder (the tests run as root, whom no permission stops).
      ['the transcript', () => rm(transcript).then(() => mkdir(transcript)), () => rm(transcript, { recursive: true }).then(() => writeFile(transcript, '{}\n')), /transcript .* is not a file|transcript of call .* could not be read/],
      ["the journal's refused records", () => mkdir(path.join(journal, 'rejected.jsonl')), () => rm(path.join(journal, 'rejected.jsonl'), { recursive: true }), /store journal .*replica-x could not be read \(EISDIR\)/],
    ];
    for (const [what, breakIt, mendIt, message] of unreadable) {
      await breakIt();
      for (const [pathname, body] of [
        ['/api/people/export', { number: ANNA.written }],
        ['/api/people/erase', { number: ANNA.written, dryRun: true }],
        ['/api/people/erase', { number: ANNA.written }],
      ] as const) {
        const answer = await api(pathname, body);
        expect(answer.status, `${pathname} ${JSON.stringify(body)} with ${what} unreadable`).toBe(500);
        expect(String(answer.json.error)).toMatch(message);
        expect(String(answer.json.error)).toContain('nothing was changed');
      }
      // The People page says so too.
      const page = await fetch(`${env.hotline.url}/dashboard/people/export`, {
        method: 'POST',
        headers: { cookie: await logIn(), 'content-type': 'application/x-www-form-urlencoded', origin: env.hotline.url },
        body: new URLSearchParams({ number: ANNA.written }).toString(),
      });
      expect(page.status).toBe(500);
      expect(await page.text()).toMatch(message);
      expect(await everyRow()).toContain('pineapple');
      await mendIt();
    }
    const exported = await api('/api/people/export', { number: ANNA.written });
    expect(exported.status).toBe(200);
  });

  test('an erasure never loses a record the call writer refuses meanwhile, nor leaves one of the person’s', async () => {
    const opened = await freshStore(kind);
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-refused-'));
    const writer = new WriteJournal(storeJournalDir(dir, 'replica-1'), pino({ level: 'silent' }));
    try {
      const deps = { db: opened.db, dialect: opened.dialect, transcriptsDir: dir };
      const refused = (sessionId: string, from: string) => ({ call: stored(callSummary({ sessionId, from })), final: true });
      // As the call writer starts: the journal's folder is made, and what an earlier run left is looked for.
      expect(await writer.leftOver()).toEqual([]);
      writer.reject(refused('anna-refused', ANNA.stored), 'a bug');
      await expect.poll(async () => (await journalBacklog(storeJournalRoot(dir))).rejected).toBe(1);
      // The writer keeps refusing Bert's records while Anna is erased.
      let settled = false;
      const erasing = erasePersonData(deps, ANNA.written, { actor: 'test' }).finally(() => {
        settled = true;
      });
      let berts = 0;
      while (!settled) {
        writer.reject(refused(`bert-${berts++}`, BERT.stored), 'a bug');
        await sleep(1);
      }
      expect((await erasing).counts.refusedRecords).toBe(1);
      await writer.close();
      expect(berts).toBeGreaterThan(1);
      expect((await journalBacklog(storeJournalRoot(dir))).rejected).toBe(berts);
      expect((await exportPersonData(deps, BERT.stored)).refusedRecords).toHaveLength(berts);
      expect((await exportPersonData(deps, ANNA.written)).refusedRecords).toEqual([]);
    } finally {
      await writer.close();
      await opened.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
