/**
 * The retention sweep, on SQLite and on PostgreSQL: with the clock moved on, exactly the records
 * past their kind's limit go — rows, files and campaigns — and what is still in use stays however
 * old: a call in progress and its transcript, a running or paused campaign, the stop list.
 */
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { AuditLog } from '../src/privacy/audit-log.js';
import { z } from 'zod';
import { ConfigError } from '../src/errors.js';
import {
  CALL_RECORD_MIN_MS,
  RETENTION_BATCH,
  retentionSettingsFromEnv,
  RetentionSweepError,
  startRetentionSweeper,
  sweepRetention,
  type RetentionDeps,
  type RetentionSettings,
} from '../src/privacy/retention.js';
import { CallRepository } from '../src/store/call-repository.js';
import { CampaignRepository, type NewContact } from '../src/store/campaign-repository.js';
import { DeliveryRepository } from '../src/store/delivery-repository.js';
import { ReportRepository } from '../src/store/report-repository.js';
import type { Db } from '../src/store/schema.js';
import { openStore, type Store } from '../src/store/store.js';
import { callProgress, callSummary, stored } from './helpers/reports.js';
import { freshStore, freshStoreLocation, storeKinds, type StoreKind } from './helpers/stores.js';

const DAY = 86_400_000;
const silent = pino({ level: 'silent' });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-retention-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function store(kind: StoreKind): Promise<Store> {
  const opened = await freshStore(kind);
  cleanups.push(() => opened.close());
  return opened;
}

/** A logger whose lines a test reads, and waits for, instead of sleeping. */
function capturedLog(): { log: Logger; lines: Record<string, unknown>[]; raw: string[]; next(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> } {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const waiting: { predicate: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString();
      raw.push(text);
      const line = z.record(z.string(), z.unknown()).parse(JSON.parse(text));
      lines.push(line);
      for (const waiter of [...waiting]) {
        if (!waiter.predicate(line)) continue;
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(line);
      }
      done();
    },
  });
  return {
    log: pino({ level: 'info' }, stream),
    lines,
    raw,
    // Only lines written from now on: a test awaits the next sweep, not one already logged.
    next: (predicate) => new Promise((resolve) => waiting.push({ predicate, resolve })),
  };
}

const settingsSchema = z.object({ name: z.string() });
type Settings = z.infer<typeof settingsSchema>;

function contacts(n: number, prefix = '49151000'): NewContact[] {
  return Array.from({ length: n }, (_, i) => ({ number: `${prefix}${String(i).padStart(5, '0')}`, variables: { name: `Person ${i}` } }));
}

/** A complete campaign of `n` contacts, written at `at`, left in `state` (changed at `at` too). */
async function campaign(repository: CampaignRepository<Settings>, id: string, n: number, state: 'running' | 'paused' | 'done', at: Date): Promise<void> {
  await repository.beginCampaign(id, { name: id }, { merged: 0, zones: [] }, at);
  await repository.insertContacts(id, contacts(n), 0, () => false, at);
  await repository.completeCampaign(id, at);
  if (state === 'paused') await repository.setState(id, 'paused', at, ['running']);
  if (state === 'done') await repository.setState(id, 'done', at, ['running']);
}

async function count(db: Db, table: 'calls' | 'reports' | 'deliveries' | 'campaigns' | 'campaign_contacts' | 'stop_list'): Promise<number> {
  const row = await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function ids(db: Db, table: 'calls' | 'reports'): Promise<string[]> {
  return (await db.selectFrom(table).select('call_id').orderBy('call_id').execute()).map((row) => row.call_id);
}

/** `db`, calling `before` each time a delete is built: a test stops a sweep exactly there. */
function onDelete(db: Db, before: () => void): Db {
  return new Proxy(db, {
    get(target, property) {
      // Bound to the real instance: Kysely keeps its state in private fields, which a proxy as `this` cannot reach.
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== 'deleteFrom') return bound;
      return (...args: unknown[]): unknown => {
        before();
        return bound(...args);
      };
    },
  });
}

/** A transcript file last written `ageMs` before `from`. */
async function fileAged(file: string, from: number, ageMs: number): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, '{"role":"user","text":"my number is 4915100000001"}\n');
  const at = new Date(from - ageMs);
  await utimes(file, at, at);
  return file;
}

describe('retentionSettingsFromEnv', () => {
  test('nothing set keeps everything', () => {
    expect(retentionSettingsFromEnv({})).toEqual({});
    expect(retentionSettingsFromEnv({ RETENTION_DAYS: '', RETENTION_CALLS_DAYS: '  ' })).toEqual({});
  });

  test('RETENTION_DAYS is every kind\'s default', () => {
    expect(retentionSettingsFromEnv({ RETENTION_DAYS: '30' })).toEqual({ transcripts: 30, reports: 30, calls: 30, deliveries: 30, campaigns: 30, audit: 30 });
  });

  test('a kind\'s own value overrides it; empty inherits it; forever keeps that kind', () => {
    expect(
      retentionSettingsFromEnv({
        RETENTION_DAYS: ' 30 ',
        RETENTION_TRANSCRIPTS_DAYS: '0.5',
        RETENTION_REPORTS_DAYS: '.25',
        RETENTION_CALLS_DAYS: '',
        RETENTION_DELIVERIES_DAYS: '7.',
        RETENTION_AUDIT_DAYS: 'Forever',
      }),
    ).toEqual({ transcripts: 0.5, reports: 0.25, calls: 30, deliveries: 7, campaigns: 30 });
  });

  test('a kind alone, with no default: only that kind has a limit', () => {
    expect(retentionSettingsFromEnv({ RETENTION_REPORTS_DAYS: '2', RETENTION_DAYS: 'forever' })).toEqual({ reports: 2 });
  });

  test.each([
    ['RETENTION_DAYS', '0'],
    ['RETENTION_DAYS', '-1'],
    ['RETENTION_CALLS_DAYS', '30d'],
    ['RETENTION_REPORTS_DAYS', '1e3'],
    ['RETENTION_TRANSCRIPTS_DAYS', 'Infinity'],
    ['RETENTION_DELIVERIES_DAYS', 'NaN'],
    ['RETENTION_CAMPAIGNS_DAYS', '36526'],
    ['RETENTION_AUDIT_DAYS', 'never'],
    ['RETENTION_CALLS_DAYS', '0.0'],
  ])('%s=%s is refused with what it takes', (name, value) => {
    const read = () => retentionSettingsFromEnv({ RETENTION_DAYS: '30', [name]: value });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(new RegExp(`^${name} must be a number of days greater than 0 and at most 36525 .*"forever".*\\(got "${value.replace('.', '\\.')}"\\)$`));
  });
});

describe.each(await storeKinds())('the retention sweep on %s', (kind) => {
  /** The sweep's dependencies: the clock at `now`. */
  function deps(opened: Store, transcriptsDir: string, settings: RetentionSettings, now: number, log: Logger = silent): RetentionDeps {
    return { db: opened.db, dialect: opened.dialect, transcriptsDir, settings, now: () => now, log };
  }

  test('each kind loses exactly what is older than its own limit', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const { db } = opened;
    const t0 = Date.now();
    const ago = (days: number) => new Date(t0 - days * DAY).toISOString();
    const calls = new CallRepository(db);
    const reports = new ReportRepository(db);
    const deliveries = new DeliveryRepository(db);
    const campaigns = new CampaignRepository(opened, settingsSchema);

    const ended = (callId: string, endedDays: number, transcriptFile = path.join(dir, `${callId}.jsonl`)) =>
      calls.save(stored(callSummary({ sessionId: callId, startedAt: ago(endedDays + 0.01), endedAt: ago(endedDays), transcriptFile })));
    const report = (callId: string, createdDays: number) =>
      reports.save({ callId, sessionId: callId, createdAt: ago(createdDays), summary: 'Ada asked about her order.', fields: null, fieldsStatus: 'skipped', fieldsError: null, body: '{}' });

    // Calls (3 days) and reports (2 days), each on both sides of its cutoff.
    await ended('r-new', 1.76);
    await report('r-new', 1.75);
    await ended('r-old', 2.26);
    await report('r-old', 2.25);
    await ended('call-new', 2.75);
    await ended('call-old', 3.25);
    await report('call-old', 3.24);
    // In progress since long before every cutoff: it and its file stay.
    const goingFile = path.join(dir, 'going.jsonl');
    await calls.save(callProgress(1, { sessionId: 'going', startedAt: ago(100), transcriptFile: goingFile }));

    // Deliveries (4 days), whatever their status.
    const delivery = async (id: string, createdDays: number, status: 'pending' | 'delivered' | 'failed') => {
      await deliveries.add({ id, callId: 'r-new', sessionId: 'r-new', url: 'https://example.com/hook', body: '{}', createdAt: ago(createdDays), nextAttemptAt: t0 });
      if (status === 'delivered') await deliveries.delivered(id, 'https://example.com/hook', 1, ago(createdDays));
      if (status === 'failed') await deliveries.failed(id, 'https://example.com/hook', 9, 'HTTP 500');
    };
    await delivery('d-new', 3.75, 'pending');
    await delivery('d-old-pending', 4.25, 'pending');
    await delivery('d-old-delivered', 4.5, 'delivered');
    await delivery('d-old-failed', 30, 'failed');

    // Campaigns (5 days): only a done one last changed before the cutoff goes.
    await campaign(campaigns, 'done-old', 3, 'done', new Date(t0 - 5.25 * DAY));
    await campaign(campaigns, 'done-new', 2, 'done', new Date(t0 - 4.75 * DAY));
    await campaign(campaigns, 'running-old', 4, 'running', new Date(t0 - 50 * DAY));
    await campaign(campaigns, 'paused-old', 5, 'paused', new Date(t0 - 50 * DAY));
    // The stop list, however old, is the person's own wish: never swept.
    await campaigns.addToStopList('4915199999999', 'asked not to be called', new Date(t0 - 1000 * DAY));

    // Transcripts (1 day): only `.jsonl` files directly in the folder.
    await fileAged(path.join(dir, 'file-new.jsonl'), t0, 0.75 * DAY);
    await fileAged(path.join(dir, 'file-old.jsonl'), t0, 1.25 * DAY);
    await fileAged(path.join(dir, 'file-old.2.jsonl'), t0, 9 * DAY);
    await fileAged(goingFile, t0, 100 * DAY);
    await fileAged(path.join(dir, 'hotline.db'), t0, 100 * DAY);
    await fileAged(path.join(dir, 'notes.txt'), t0, 100 * DAY);
    await fileAged(path.join(dir, 'store-journal', 'replica-1', 'journal-1-1.jsonl'), t0, 100 * DAY);

    // The audit log (6 days): its own limit.
    const audit = (days: number) => new AuditLog(db, silent, () => new Date(t0 - days * DAY)).record({ actor: 'ada', role: 'admin', action: 'open_story', sessionId: `a-${days}` });
    await audit(5.75);
    await audit(6.25);

    const captured = capturedLog();
    const settings = { transcripts: 1, reports: 2, calls: 3, deliveries: 4, campaigns: 5, audit: 6 };
    const counts = await sweepRetention(deps(opened, dir, settings, t0, captured.log));

    expect(counts).toEqual({ transcripts: 2, reports: 2, calls: 1, deliveries: 3, campaigns: 1, campaignContacts: 3, audit: 1 });
    expect((await db.selectFrom('audit_log').select('session_id').execute()).map((row) => row.session_id)).toEqual(['a-5.75']);
    expect(await ids(db, 'calls')).toEqual(['call-new', 'going', 'r-new', 'r-old']);
    expect(await ids(db, 'reports')).toEqual(['r-new']);
    expect((await db.selectFrom('deliveries').select('id').execute()).map((row) => row.id)).toEqual(['d-new']);
    expect((await db.selectFrom('campaigns').select('id').orderBy('id').execute()).map((row) => row.id)).toEqual(['done-new', 'paused-old', 'running-old']);
    expect(await campaigns.contacts('done-old')).toEqual([]);
    expect(await db.selectFrom('campaign_tally').select('campaign_id').where('campaign_id', '=', 'done-old').execute()).toEqual([]);
    expect(await campaigns.contacts('running-old')).toHaveLength(4);
    expect(await campaigns.contacts('paused-old')).toHaveLength(5);
    expect(await campaigns.contacts('done-new')).toHaveLength(2);
    expect(await campaigns.isStopped('4915199999999')).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['file-new.jsonl', 'going.jsonl', 'hotline.db', 'notes.txt', 'store-journal']);
    expect(await readdir(path.join(dir, 'store-journal', 'replica-1'))).toEqual(['journal-1-1.jsonl']);

    // One line: counts and cutoffs, nothing a record held nor whose it was.
    const done = captured.lines.filter((line) => line.msg === 'retention sweep done');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ level: 30, counts, cutoffs: { transcripts: ago(1), reports: ago(2), calls: ago(3), deliveries: ago(4), campaigns: ago(5), audit: ago(6) } });
    expect(captured.raw.join('')).not.toMatch(/4915|Ada|Person|r-old|call-old|file-old|done-old|example\.com/);

    // Swept again at once: nothing more goes.
    expect(await sweepRetention(deps(opened, dir, settings, t0))).toEqual({ transcripts: 0, reports: 0, calls: 0, deliveries: 0, campaigns: 0, campaignContacts: 0, audit: 0 });
  });

  test('with the clock moved on, what was written today goes once it is older than the limit, and only then', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const { db } = opened;
    const calls = new CallRepository(db);
    const campaigns = new CampaignRepository(opened, settingsSchema);
    const now = new Date();
    // Written now, as Hotline writes them: the times are the repositories' and the file system's.
    const file = path.join(dir, 'today.jsonl');
    await writeFile(file, '{}\n');
    await calls.save(stored(callSummary({ sessionId: 'today', startedAt: new Date(now.getTime() - 60_000).toISOString(), endedAt: now.toISOString(), transcriptFile: file })));
    await new ReportRepository(db).save({ callId: 'today', sessionId: 'today', createdAt: now.toISOString(), summary: null, fields: null, fieldsStatus: 'skipped', fieldsError: null, body: '{}' });
    await new DeliveryRepository(db).add({ id: 'd', callId: 'today', sessionId: 'today', url: 'https://example.com/hook', body: '{}', createdAt: now.toISOString(), nextAttemptAt: now.getTime() });
    await campaign(campaigns, 'finished', 3, 'done', now);
    await campaign(campaigns, 'still-running', 3, 'running', now);
    const goingFile = path.join(dir, 'going.jsonl');
    await writeFile(goingFile, '{}\n');
    await calls.save(callProgress(1, { sessionId: 'going', startedAt: now.toISOString(), transcriptFile: goingFile }));
    await campaigns.addToStopList('4915199999999', 'asked not to be called', now);

    const settings = retentionSettingsFromEnv({ RETENTION_DAYS: '7' });
    const later = (days: number) => deps(opened, dir, settings, Date.now() + days * DAY);

    expect(await sweepRetention(later(6.9))).toEqual({ transcripts: 0, reports: 0, calls: 0, deliveries: 0, campaigns: 0, campaignContacts: 0, audit: 0 });
    expect(await sweepRetention(later(7.1))).toEqual({ transcripts: 1, reports: 1, calls: 1, deliveries: 1, campaigns: 1, campaignContacts: 3, audit: 0 });
    // A year on: the call in progress, its file, the running campaign and the stop list are all still there.
    expect(await sweepRetention(later(365))).toEqual({ transcripts: 0, reports: 0, calls: 0, deliveries: 0, campaigns: 0, campaignContacts: 0, audit: 0 });
    expect(await ids(db, 'calls')).toEqual(['going']);
    expect(await readdir(dir)).toEqual(['going.jsonl']);
    expect(await campaigns.contacts('still-running')).toHaveLength(3);
    expect(await count(db, 'stop_list')).toBe(1);
  });

  test('a call swept takes its report with it (counted), even when reports have no limit of their own', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const t0 = Date.now();
    const calls = new CallRepository(opened.db);
    const reports = new ReportRepository(opened.db);
    for (const [callId, days] of [
      ['old', 10],
      ['new', 1],
    ] as const) {
      await calls.save(stored(callSummary({ sessionId: callId, startedAt: new Date(t0 - days * DAY - 60_000).toISOString(), endedAt: new Date(t0 - days * DAY).toISOString() })));
      await reports.save({ callId, sessionId: callId, createdAt: new Date(t0 - days * DAY).toISOString(), summary: null, fields: null, fieldsStatus: 'skipped', fieldsError: null, body: '{}' });
    }
    expect(await sweepRetention(deps(opened, dir, { calls: 3 }, t0))).toMatchObject({ calls: 1, reports: 1 });
    expect(await ids(opened.db, 'reports')).toEqual(['new']);
  });

  test('calls, reports and transcripts are kept a day at least, for the report of a call that has none yet', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const t0 = Date.now();
    const calls = new CallRepository(opened.db);
    const reports = new ReportRepository(opened.db);
    for (const [callId, hours] of [
      ['recent', 18],
      ['past-a-day', 26],
    ] as const) {
      const at = new Date(t0 - hours * 3_600_000).toISOString();
      await calls.save(stored(callSummary({ sessionId: callId, startedAt: at, endedAt: at })));
      await reports.save({ callId, sessionId: callId, createdAt: at, summary: null, fields: null, fieldsStatus: 'skipped', fieldsError: null, body: '{}' });
      await fileAged(path.join(dir, `${callId}.jsonl`), t0, hours * 3_600_000);
    }
    expect(CALL_RECORD_MIN_MS).toBe(DAY);
    expect(await sweepRetention(deps(opened, dir, { calls: 0.25, reports: 0.25, transcripts: 0.25 }, t0))).toMatchObject({ calls: 1, reports: 1, transcripts: 1 });
    expect(await ids(opened.db, 'calls')).toEqual(['recent']);
    expect(await ids(opened.db, 'reports')).toEqual(['recent']);
    expect(await readdir(dir)).toEqual(['recent.jsonl']);
  });

  test('thousands of rows and files go in batches, none left behind', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const { db } = opened;
    const t0 = Date.now();
    const n = RETENTION_BATCH * 2 + 3;
    const old = new Date(t0 - 10 * DAY).toISOString();
    const rows = Array.from({ length: n }, (_, i) => ({ id: `d${i}`, session_id: 's', call_id: 's', url: 'https://example.com/hook', body: '{}', created_at: old, next_attempt_at: t0, status: 'delivered' as const }));
    for (let i = 0; i < n; i += RETENTION_BATCH) await db.insertInto('deliveries').values(rows.slice(i, i + RETENTION_BATCH)).execute();
    await new DeliveryRepository(db).add({ id: 'kept', callId: 's', sessionId: 's', url: 'https://example.com/hook', body: '{}', createdAt: new Date(t0).toISOString(), nextAttemptAt: t0 });
    const campaigns = new CampaignRepository(opened, settingsSchema);
    await campaign(campaigns, 'big', n, 'done', new Date(t0 - 10 * DAY));
    for (let i = 0; i < 150; i += 1) await fileAged(path.join(dir, `s${i}.jsonl`), t0, 10 * DAY);

    const counts = await sweepRetention(deps(opened, dir, { deliveries: 1, campaigns: 1, transcripts: 1 }, t0));
    expect(counts).toMatchObject({ deliveries: n, campaigns: 1, campaignContacts: n, transcripts: 150 });
    expect((await db.selectFrom('deliveries').select('id').execute()).map((row) => row.id)).toEqual(['kept']);
    expect(await count(db, 'campaign_contacts')).toBe(0);
    expect(await count(db, 'campaigns')).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });

  test('two processes sweeping one store together delete each row once', async () => {
    const location = await freshStoreLocation(kind);
    cleanups.push(() => location.remove());
    const first = await openStore(location.location, silent);
    cleanups.push(() => first.close());
    const second = await openStore(location.location, silent);
    cleanups.push(() => second.close());
    const dir = await tempDir();
    const t0 = Date.now();
    const n = RETENTION_BATCH * 3 + 7;
    const old = new Date(t0 - 10 * DAY).toISOString();
    const rows = Array.from({ length: n }, (_, i) => ({ id: `d${i}`, session_id: 's', call_id: 's', url: 'https://example.com/hook', body: '{}', created_at: old, next_attempt_at: t0, status: 'pending' as const }));
    for (let i = 0; i < n; i += RETENTION_BATCH) await first.db.insertInto('deliveries').values(rows.slice(i, i + RETENTION_BATCH)).execute();

    const [a, b] = await Promise.all([first, second].map((opened) => sweepRetention(deps(opened, dir, { deliveries: 1 }, t0))));
    expect(a!.deliveries + b!.deliveries).toBe(n);
    expect(await count(first.db, 'deliveries')).toBe(0);
  });

  test('a kind that fails leaves the others swept, and the sweep rejects naming it', async () => {
    const opened = await store(kind);
    const base = await tempDir();
    // The transcripts "folder" is a file: that kind cannot be swept.
    const notAFolder = path.join(base, 'transcripts');
    await writeFile(notAFolder, '');
    const t0 = Date.now();
    await new DeliveryRepository(opened.db).add({ id: 'd', callId: 's', sessionId: 's', url: 'https://example.com/hook', body: '{}', createdAt: new Date(t0 - 10 * DAY).toISOString(), nextAttemptAt: t0 });
    const captured = capturedLog();
    const sweep = sweepRetention(deps(opened, notAFolder, { transcripts: 1, deliveries: 1 }, t0, captured.log));
    await expect(sweep).rejects.toThrow(RetentionSweepError);
    await expect(sweep).rejects.toThrow(/^retention sweep failed for transcripts \(ENOTDIR/);
    await expect(sweep).rejects.toMatchObject({ code: 'retention_sweep_failed', counts: { deliveries: 1 } });
    expect(await count(opened.db, 'deliveries')).toBe(0);
    expect(captured.lines.find((line) => line.msg === 'retention sweep done')).toMatchObject({ counts: { deliveries: 1 }, failed: ['transcripts'] });
  });

  test('the sweeper: runNow sweeps; stop() ends a sweep between two batches and waits for it', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const t0 = Date.now();
    const n = RETENTION_BATCH * 4;
    const old = new Date(t0 - 10 * DAY).toISOString();
    const rows = Array.from({ length: n }, (_, i) => ({ id: `d${i}`, session_id: 's', call_id: 's', url: 'https://example.com/hook', body: '{}', created_at: old, next_attempt_at: t0, status: 'failed' as const }));
    for (let i = 0; i < n; i += RETENTION_BATCH) await opened.db.insertInto('deliveries').values(rows.slice(i, i + RETENTION_BATCH)).execute();

    // Stopped as its first delete is sent: that batch is one statement and completes, the next never starts.
    let stopping: Promise<void> | undefined;
    const db = onDelete(opened.db, () => {
      stopping ??= sweeper.stop();
    });
    const captured = capturedLog();
    // The timer's first sweep is far off: only runNow sweeps here.
    const sweeper = startRetentionSweeper({ ...deps(opened, dir, { deliveries: 1 }, t0, captured.log), db, firstDelayMs: 3_600_000 });
    const running = sweeper.runNow();
    // Asked again while it runs: the same sweep, never a second one beside it.
    expect(sweeper.runNow()).toBe(running);
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    await stopping;
    expect(await count(opened.db, 'deliveries')).toBe(n - RETENTION_BATCH);
    expect(captured.lines.at(-1)).toMatchObject({ msg: 'retention sweep stopped before it was done', stopped: true, counts: { deliveries: RETENTION_BATCH } });
    await expect(sweeper.runNow()).rejects.toMatchObject({ name: 'AbortError' });

    const again = startRetentionSweeper({ ...deps(opened, dir, { deliveries: 1 }, t0), firstDelayMs: 3_600_000 });
    cleanups.push(() => again.stop());
    expect(await again.runNow()).toMatchObject({ deliveries: n - RETENTION_BATCH });
    expect(await count(opened.db, 'deliveries')).toBe(0);
  });

  test('the sweeper\'s timer sweeps; a failed sweep is a warning and is tried again at the next interval', async () => {
    const opened = await store(kind);
    const base = await tempDir();
    // The transcripts "folder" is a file: every sweep fails until it is a folder.
    const dir = path.join(base, 'transcripts');
    await writeFile(dir, '');
    const t0 = Date.now();
    const captured = capturedLog();
    const warned = captured.next((line) => line.level === 40);
    const sweeper = startRetentionSweeper({ ...deps(opened, dir, { transcripts: 1 }, t0, captured.log), firstDelayMs: 0, intervalMs: 5 });
    cleanups.push(() => sweeper.stop());
    expect(await warned).toMatchObject({ msg: 'retention sweep failed; tried again at the next interval', err: { type: 'RetentionSweepError' } });
    expect(await captured.next((line) => line.level === 40)).toMatchObject({ err: { type: 'RetentionSweepError' } });

    // The folder fixed: a later interval's sweep deletes the old file in it.
    const swept = captured.next((line) => line.msg === 'retention sweep done' && z.object({ transcripts: z.literal(1) }).safeParse(line.counts).success);
    await rm(dir);
    await fileAged(path.join(dir, 'x.jsonl'), t0, 10 * DAY);
    expect(await swept).not.toHaveProperty('failed');
    await sweeper.stop();
    expect(await readdir(dir)).toEqual([]);
  });

  test('the sweeper says at start what it keeps: the limits, and a day at least for a call\'s record', async () => {
    const opened = await store(kind);
    const captured = capturedLog();
    const sweeper = startRetentionSweeper({ ...deps(opened, await tempDir(), { calls: 0.5, deliveries: 0.5, audit: 30 }, Date.now(), captured.log), firstDelayMs: 3_600_000 });
    await sweeper.stop();
    expect(captured.lines).toMatchObject([
      { msg: 'retention sweep on', days: { calls: 0.5, deliveries: 0.5, audit: 30, reports: 'forever', transcripts: 'forever', campaigns: 'forever' }, intervalMs: 3_600_000 },
      { msg: expect.stringMatching(/a day at least/), kinds: ['calls'] },
    ]);
  });

  test('with no limit at all, the sweeper says so once and never touches the store', async () => {
    const opened = await store(kind);
    const dir = await tempDir();
    const t0 = Date.now();
    await fileAged(path.join(dir, 'old.jsonl'), t0, 1000 * DAY);
    await new CallRepository(opened.db).save(stored(callSummary({ startedAt: new Date(t0 - 1000 * DAY).toISOString(), endedAt: new Date(t0 - 1000 * DAY).toISOString() })));
    const captured = capturedLog();
    const sweeper = startRetentionSweeper({ ...deps(opened, dir, retentionSettingsFromEnv({}), t0, captured.log), firstDelayMs: 0, intervalMs: 1 });
    expect(await sweeper.runNow()).toEqual({ transcripts: 0, reports: 0, calls: 0, deliveries: 0, campaigns: 0, campaignContacts: 0, audit: 0 });
    await sweeper.stop();
    expect(captured.lines.map((line) => line.msg)).toEqual(['retention sweep off: no RETENTION_DAYS nor RETENTION_<KIND>_DAYS set, records are kept until deleted by hand']);
    expect(await count(opened.db, 'calls')).toBe(1);
    expect(await readdir(dir)).toEqual(['old.jsonl']);
  });
});
