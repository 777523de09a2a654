import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { sql } from 'kysely';
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

async function call(from: string, words: string): Promise<void> {
  const service = await FakeVoiceService.connect(env!.hotline.wsUrl);
  service.start({ from_phone_number: from });
  await service.next();
  service.say(words);
  await service.nextOfType('speak');
  service.end('caller_hangup');
  await service.close();
}

async function api(pathname: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${env!.hotline.url}${pathname}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
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
