/**
 * The embedded database: one file, its schema brought up to date on open,
 * and the repositories' rows read back as they were written.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { CallRepository } from '../src/store/call-repository.js';
import { Database } from '../src/store/database.js';
import { DeliveryRepository } from '../src/store/delivery-repository.js';
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/migrations.js';
import { ReportRepository } from '../src/store/report-repository.js';
import { callSummary } from './helpers/reports.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-store-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function open(file = ':memory:'): Database {
  const db = Database.open(file, logger);
  cleanups.push(() => db.close());
  return db;
}

describe('Database.open', () => {
  test('creates the file and its folder, in WAL mode, with the schema up to date', async () => {
    const file = path.join(await tempDir(), 'nested', 'deeper', 'hotline.db');
    const db = open(file);
    expect(db.sql.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.sql.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.sql.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.sql.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
    const tables = db.sql.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual(['calls', 'campaign_contacts', 'campaign_tally', 'campaigns', 'deliveries', 'reports', 'stop_list']);
  });

  test('a second open of the same file keeps its rows and runs no migration again', async () => {
    const file = path.join(await tempDir(), 'hotline.db');
    const first = Database.open(file, logger);
    new CallRepository(first).save(callSummary());
    first.close();
    const second = open(file);
    expect(new CallRepository(second).get('call-1')?.sessionId).toBe('call-1');
    expect(second.sql.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
  });

  test('calls stored before calls had ids of their own keep their session id as call id, with their report and deliveries', async () => {
    const file = path.join(await tempDir(), 'hotline.db');
    const old = new BetterSqlite3(file);
    // The schema as the release before call ids left it (steps 1 to 4), with one reported call.
    for (const step of SQLITE_MIGRATIONS.slice(0, 4)) old.exec(step);
    old.pragma('user_version = 4');
    old.prepare(
      `INSERT INTO calls (session_id, direction, started_at, ended_at, duration_ms, end_reason, turns, barge_ins, tool_runs, transcript_file)
       VALUES ('old-1', 'inbound', '2026-11-20T10:00:00.000Z', '2026-11-20T10:01:00.000Z', 60000, 'caller_hung_up', '[]', 0, '[]', '/t/old-1.jsonl')`,
    ).run();
    old.prepare(`INSERT INTO reports (session_id, created_at, fields_status, body) VALUES ('old-1', '2026-11-20T10:01:01.000Z', 'skipped', '{}')`).run();
    old.prepare(
      `INSERT INTO deliveries (id, session_id, url, body, created_at, next_attempt_at, status) VALUES ('d1', 'old-1', 'https://r.test', '{}', '2026-11-20T10:01:01.000Z', 0, 'delivered')`,
    ).run();
    old.close();

    const db = open(file);
    expect(new CallRepository(db).get('old-1')).toMatchObject({ callId: 'old-1', sessionId: 'old-1', endReason: 'caller_hung_up' });
    expect(new ReportRepository(db).get('old-1')).toMatchObject({ callId: 'old-1', sessionId: 'old-1', fieldsStatus: 'skipped' });
    expect(new DeliveryRepository(db).forCall('old-1').map((d) => d.id)).toEqual(['d1']);
    // A later call with the same session id is stored beside it.
    new CallRepository(db).save(callSummary({ sessionId: 'old-1', callId: 'new-1' }));
    expect(new CallRepository(db).ofSessionId('old-1').map((c) => c.callId)).toEqual(['old-1', 'new-1']);
    expect(db.sql.pragma('foreign_key_check')).toEqual([]);
  });

  test('a file written by a newer Hotline stops the start with what to do', async () => {
    const file = path.join(await tempDir(), 'hotline.db');
    const newer = new BetterSqlite3(file);
    newer.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);
    newer.close();
    expect(() => Database.open(file, logger)).toThrow(ConfigError);
    expect(() => Database.open(file, logger)).toThrow(/newer than this Hotline knows .*run the Hotline release that wrote it/);
  });

  test('a file that cannot be created stops the start naming DATABASE_FILE', async () => {
    const blocker = path.join(await tempDir(), 'a-file');
    await writeFile(blocker, 'not a folder');
    expect(() => Database.open(path.join(blocker, 'hotline.db'), logger)).toThrow(
      /^DATABASE_FILE .*a-file\/hotline\.db lies below a file, not a folder \(\w+: .*\): set DATABASE_FILE to a file in a folder$/,
    );
  });

  test('close is idempotent', () => {
    const db = Database.open(':memory:', logger);
    db.close();
    db.close();
    expect(db.open).toBe(false);
  });
});

describe('CallRepository', () => {
  test('a call reads back as it was summed up', () => {
    const calls = new CallRepository(open());
    const call = callSummary({ variables: { name: 'Ada' }, tags: { campaign: 'c1' } });
    calls.save(call);
    expect(calls.get('call-1')).toEqual(call);
    const bare = callSummary({ sessionId: 'bare', from: undefined, to: undefined, serviceReason: undefined, turns: [], toolRuns: [] });
    calls.save(bare);
    expect(calls.get('bare')).toEqual(bare);
    expect(calls.get('nobody')).toBeUndefined();
  });

  test('a session that ends again replaces its row', () => {
    const calls = new CallRepository(open());
    calls.save(callSummary({ endReason: 'connection_lost' }));
    calls.save(callSummary({ endReason: 'agent_hung_up', bargeIns: 4 }));
    expect(calls.get('call-1')).toMatchObject({ endReason: 'agent_hung_up', bargeIns: 4 });
    expect(calls.listRecent(10)).toHaveLength(1);
  });

  test('the latest calls first, paged by ended_at', () => {
    const calls = new CallRepository(open());
    for (const minute of [1, 3, 2]) {
      calls.save(callSummary({ sessionId: `m${minute}`, endedAt: `2026-11-22T03:0${minute}:00.000Z` }));
    }
    expect(calls.listRecent(2).map((c) => c.sessionId)).toEqual(['m3', 'm2']);
    expect(calls.listRecent(2, '2026-11-22T03:02:00.000Z').map((c) => c.sessionId)).toEqual(['m1']);
  });

  test('calls without a report, since a time', () => {
    const db = open();
    const calls = new CallRepository(db);
    calls.save(callSummary({ sessionId: 'old', endedAt: '2026-11-20T00:00:00.000Z' }));
    calls.save(callSummary({ sessionId: 'reported' }));
    calls.save(callSummary({ sessionId: 'unreported' }));
    new ReportRepository(db).save({
      callId: 'reported',
      sessionId: 'reported',
      createdAt: '2026-11-22T03:06:00.000Z',
      summary: null,
      fields: null,
      fieldsStatus: 'skipped',
      fieldsError: null,
      body: '{}',
    });
    expect(calls.withoutReport('2026-11-21T00:00:00.000Z', 10).map((c) => c.sessionId)).toEqual(['unreported']);
  });
});

describe('ReportRepository', () => {
  test('a report reads back as stored, and belongs to a call', () => {
    const db = open();
    const reports = new ReportRepository(db);
    const report = {
      callId: 'call-1',
      sessionId: 'call-1',
      createdAt: '2026-11-22T03:06:00.000Z',
      summary: 'Ada asked about her order.',
      fields: { callback_wanted: true, customer_number: 'K 17', sentiment: 'neutral', minutes: 2 },
      fieldsStatus: 'ok' as const,
      fieldsError: null,
      body: '{"version":1}',
    };
    expect(() => reports.save(report)).toThrow(/FOREIGN KEY/);
    new CallRepository(db).save(callSummary());
    reports.save(report);
    expect(reports.get('call-1')).toEqual(report);
    reports.save({ ...report, summary: null, fields: null, fieldsStatus: 'failed', fieldsError: 'shutdown' });
    expect(reports.get('call-1')).toMatchObject({ fields: null, fieldsStatus: 'failed', fieldsError: 'shutdown' });
  });
});

describe('DeliveryRepository', () => {
  const delivery = (id: string, nextAttemptAt: number) => ({
    id,
    callId: 'call-1',
    sessionId: 'call-1',
    url: 'https://example.test/hook',
    body: '{}',
    createdAt: '2026-11-22T03:06:00.000Z',
    nextAttemptAt,
  });

  test('due rows in order; the next due time; retries, deliveries and give-ups', () => {
    const deliveries = new DeliveryRepository(open());
    expect(deliveries.nextDueAt()).toBeUndefined();
    deliveries.add(delivery('b', 2000));
    deliveries.add(delivery('a', 1000));
    deliveries.add(delivery('later', 9000));
    expect(deliveries.due(2500, 10).map((d) => d.id)).toEqual(['a', 'b']);
    expect(deliveries.due(2500, 1).map((d) => d.id)).toEqual(['a']);
    expect(deliveries.nextDueAt()).toBe(1000);

    deliveries.retryAt('a', 'https://example.test/new', 1, 5000, 'HTTP 503');
    deliveries.delivered('b', 'https://example.test/hook', 1, '2026-11-22T03:06:01.000Z');
    expect(deliveries.get('a')).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: 5000,
      lastError: 'HTTP 503',
      url: 'https://example.test/new',
    });
    expect(deliveries.get('b')).toMatchObject({ status: 'delivered', attempts: 1, deliveredAt: '2026-11-22T03:06:01.000Z', lastError: null });
    expect(deliveries.nextDueAt()).toBe(5000);

    deliveries.failed('a', 'https://example.test/new', 7, 'HTTP 410');
    expect(deliveries.get('a')).toMatchObject({ status: 'failed', attempts: 7, lastError: 'HTTP 410' });
    expect(deliveries.due(10_000, 10).map((d) => d.id)).toEqual(['later']);
    expect(deliveries.forSession('call-1').map((d) => d.id).sort()).toEqual(['a', 'b', 'later']);
  });

  test('dueAllAt brings every pending delivery forward, never back', () => {
    const deliveries = new DeliveryRepository(open());
    deliveries.add(delivery('waiting', 9000));
    deliveries.add(delivery('overdue', 100));
    deliveries.dueAllAt(500);
    expect(deliveries.get('waiting')?.nextAttemptAt).toBe(500);
    expect(deliveries.get('overdue')?.nextAttemptAt).toBe(100);
  });
});
