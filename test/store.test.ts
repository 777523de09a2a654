/**
 * The store's calls, reports and deliveries, on SQLite and on PostgreSQL: rows read back as they
 * were written, a call's snapshots ordered by revision.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError } from '../src/errors.js';
import type { CallSummary, TurnSummary } from '../src/call/ports/call-summary.js';
import { callCostUsd } from '../src/llm/prices.js';
import { CallRepository, callRowOf } from '../src/store/call-repository.js';
import { CallSearch } from '../src/store/call-search.js';
import { EXPORT_FORMAT, importStore } from '../src/store/store-transfer.js';
import { DeliveryRepository } from '../src/store/delivery-repository.js';
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/migrations.js';
import { ReportRepository, type StoredReport } from '../src/store/report-repository.js';
import { openStore, schemaVersion, type Store, type StoreLocation } from '../src/store/store.js';
import { POSTGRES_MIGRATIONS } from '../src/store/postgres/migrations.js';
import { callProgress, callSummary, stored } from './helpers/reports.js';
import { freshStore, freshStoreLocation, postgresReachable, storeKinds, type StoreKind } from './helpers/stores.js';

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

async function store(kind: StoreKind): Promise<Store> {
  const opened = await freshStore(kind);
  cleanups.push(() => opened.close());
  return opened;
}

function report(overrides: Partial<StoredReport> = {}): StoredReport {
  return {
    callId: 'call-1',
    sessionId: 'call-1',
    createdAt: '2026-11-22T03:06:00.000Z',
    summary: 'Ada asked about her order.',
    fields: { callback_wanted: true, customer_number: 'K 17', sentiment: 'neutral', minutes: 2 },
    fieldsStatus: 'ok',
    fieldsError: null,
    body: '{"version":1}',
    ...overrides,
  };
}

describe('the SQLite store opened', () => {
  test('creates the file and its folder, in WAL mode, with the schema up to date', async () => {
    const file = path.join(await tempDir(), 'nested', 'deeper', 'hotline.db');
    const opened = await openStore({ databaseFile: file }, logger);
    await opened.close();
    // Looked at from outside, as an operator's sqlite3 shell would.
    const db = new BetterSqlite3(file, { readonly: true });
    cleanups.push(() => db.close());
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
    expect(tables).toEqual(['audit_log', 'calls', 'campaign_contacts', 'campaign_tally', 'campaigns', 'dashboard_sessions', 'deliveries', 'erasures',
      'knowledge_fts', 'knowledge_fts_config', 'knowledge_fts_data', 'knowledge_fts_docsize', 'knowledge_fts_idx', 'knowledge_passages', 'knowledge_sources', 'knowledge_vocab',
      'outbound_requests', 'replicas', 'reports', 'staff', 'stop_list', 'webhook_sessions']);
  });

  test('its connection waits for another program\'s lock and keeps foreign keys', async () => {
    const opened = await openStore({ databaseFile: path.join(await tempDir(), 'hotline.db') }, logger);
    cleanups.push(() => opened.close());
    expect((await sql<{ timeout: number }>`PRAGMA busy_timeout`.execute(opened.db)).rows[0]).toEqual({ timeout: 5000 });
    expect((await sql<{ foreign_keys: number }>`PRAGMA foreign_keys`.execute(opened.db)).rows[0]).toEqual({ foreign_keys: 1 });
  });

  test('a file written by a newer Hotline stops the start with what to do', async () => {
    const file = path.join(await tempDir(), 'hotline.db');
    const newer = new BetterSqlite3(file);
    newer.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);
    newer.close();
    await expect(openStore({ databaseFile: file }, logger)).rejects.toThrow(ConfigError);
    await expect(openStore({ databaseFile: file }, logger)).rejects.toThrow(/newer than this Hotline knows .*run the Hotline release that wrote it/);
  });

  test('a file that cannot be created stops the start naming DATABASE_FILE', async () => {
    const blocker = path.join(await tempDir(), 'a-file');
    await writeFile(blocker, 'not a folder');
    await expect(openStore({ databaseFile: path.join(blocker, 'hotline.db') }, logger)).rejects.toThrow(
      /^DATABASE_FILE .*a-file\/hotline\.db lies below a file, not a folder \(\w+: .*\): set DATABASE_FILE to a file in a folder$/,
    );
  });

  test('two processes opening one new file together migrate it once', async () => {
    const file = path.join(await tempDir(), 'hotline.db');
    const both = await Promise.all([openStore({ databaseFile: file }, logger), openStore({ databaseFile: file }, logger)]);
    for (const opened of both) cleanups.push(() => opened.close());
    for (const opened of both) expect((await sql<{ user_version: number }>`PRAGMA user_version`.execute(opened.db)).rows[0]!.user_version).toBe(SQLITE_MIGRATIONS.length);
  });
});

describe.skipIf(!(await postgresReachable()))('the PostgreSQL store opened', () => {
  test('two processes migrating one new database together: each step applied once, under the advisory lock', async () => {
    const location = await freshStoreLocation('postgres');
    cleanups.push(() => location.remove());
    const both = await Promise.all([openStore(location.location, logger), openStore(location.location, logger)]);
    for (const opened of both) cleanups.push(() => opened.close());
    const { rows } = await sql<{ version: number }>`SELECT version FROM hotline_schema ORDER BY version`.execute(both[0]!.db);
    expect(rows.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((_, i) => i + 1));
    expect((await schemaVersion(both[1]!)).current).toBe(POSTGRES_MIGRATIONS.length);
  });
});

describe('SQLite files of earlier releases', () => {
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

    const opened = await openStore({ databaseFile: file }, logger);
    cleanups.push(() => opened.close());
    const calls = new CallRepository(opened.db);
    expect(await calls.get('old-1')).toMatchObject({ callId: 'old-1', sessionId: 'old-1', endReason: 'caller_hung_up' });
    expect(await new ReportRepository(opened.db).get('old-1')).toMatchObject({ callId: 'old-1', sessionId: 'old-1', fieldsStatus: 'skipped' });
    expect((await new DeliveryRepository(opened.db).forCall('old-1')).map((d) => d.id)).toEqual(['d1']);
    // A later call with the same session id is stored beside it.
    await calls.save(stored(callSummary({ sessionId: 'old-1', callId: 'new-1' })));
    expect((await calls.ofSessionId('old-1')).map((c) => c.callId)).toEqual(['old-1', 'new-1']);
    expect((await sql`PRAGMA foreign_key_check`.execute(opened.db)).rows).toEqual([]);
  });
});

/** Turns as the call core records them: each a cost in USD; `null` counted and not priced; 'uncounted' no counts at all. */
function turnsCosting(costs: readonly (number | null | 'uncounted')[]): TurnSummary[] {
  return costs.map((cost) => {
    const turn = { at: '2026-11-20T10:00:10.000Z', interrupted: false, failed: cost === 'uncounted' };
    if (cost === 'uncounted') return turn;
    const counted = { ...turn, tokens: { prompt: 1200, completion: 30, cached: 0 }, model: cost === null ? 'house-model' : 'gpt-4o-mini' };
    return cost === null ? counted : { ...counted, costUsd: cost };
  });
}

/** Calls as the release before `cost_usd` stored them, with what their cost is to be once it has the column. */
const CALLS_BEFORE_COST: readonly { id: string; turns: TurnSummary[]; ended: boolean; cost: number | null }[] = [
  { id: 'priced', turns: turnsCosting([0.0004, 0.0021]), ended: true, cost: 0.0025 },
  { id: 'unpriced', turns: turnsCosting([0.0004, null]), ended: true, cost: null },
  { id: 'uncounted', turns: turnsCosting(['uncounted']), ended: true, cost: null },
  { id: 'cut-short', turns: turnsCosting([0.003, 'uncounted']), ended: true, cost: 0.003 },
  { id: 'no-turn', turns: [], ended: true, cost: 0 },
  { id: 'going', turns: turnsCosting([0.01]), ended: false, cost: 0.01 },
];

/** The INSERT the release before would have made (no cost_usd); our own values, quoted as SQL literals. */
function insertBeforeCost(call: (typeof CALLS_BEFORE_COST)[number]): string {
  const text = (value: string) => `'${value.replaceAll("'", "''")}'`;
  const end = call.ended ? `'2026-11-20T10:01:00.000Z', 60000, 'caller_hung_up'` : 'NULL, NULL, NULL';
  return `INSERT INTO calls (call_id, session_id, direction, started_at, ended_at, duration_ms, end_reason, turns, barge_ins, tool_runs, transcript_file, revision)
    VALUES (${text(call.id)}, ${text(call.id)}, 'inbound', '2026-11-20T10:00:00.000Z', ${end}, ${text(JSON.stringify(call.turns))}, 0, '[]', '/t/x.jsonl', 1)`;
}

/** A store left as the release before `cost_usd` left it (SQLite step 10, PostgreSQL step 4), holding CALLS_BEFORE_COST. */
async function storeBeforeCost(kind: StoreKind): Promise<StoreLocation> {
  const place = await freshStoreLocation(kind);
  cleanups.push(() => place.remove());
  if (kind === 'sqlite') {
    const old = new BetterSqlite3(place.location.databaseFile);
    for (const step of SQLITE_MIGRATIONS.slice(0, 10)) old.exec(step);
    old.pragma('user_version = 10');
    for (const call of CALLS_BEFORE_COST) old.exec(insertBeforeCost(call));
    old.close();
    return place.location;
  }
  const client = new pg.Client({ connectionString: place.location.databaseUrl });
  await client.connect();
  try {
    await client.query('CREATE TABLE hotline_schema (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
    for (const [i, step] of POSTGRES_MIGRATIONS.slice(0, 4).entries()) {
      await client.query(step);
      await client.query('INSERT INTO hotline_schema (version, applied_at) VALUES ($1, $2)', [i + 1, '2026-11-20T00:00:00.000Z']);
    }
    for (const call of CALLS_BEFORE_COST) await client.query(insertBeforeCost(call));
  } finally {
    await client.end();
  }
  return place.location;
}

describe.each(await storeKinds())('a %s store of the release before calls had a cost', (kind) => {
  test("opened, each call's cost is filled from its stored turns, as a new write would work it out; unknown ones stay null", async () => {
    const opened = await openStore(await storeBeforeCost(kind), logger);
    cleanups.push(() => opened.close());
    expect(await schemaVersion(opened)).toEqual({ current: kind === 'sqlite' ? SQLITE_MIGRATIONS.length : POSTGRES_MIGRATIONS.length, latest: expect.any(Number) });
    const rows = await opened.db.selectFrom('calls').select(['call_id', 'cost_usd']).orderBy('call_id').execute();
    expect(rows.map((row) => row.call_id)).toEqual(CALLS_BEFORE_COST.map((call) => call.id).sort());
    for (const call of CALLS_BEFORE_COST) {
      const stored = rows.find((row) => row.call_id === call.id)!.cost_usd;
      // The migration's SQL and the writer's code (call-cost.ts) agree.
      const written = callCostUsd(call.turns);
      if (call.cost === null) {
        expect(stored, call.id).toBeNull();
        expect(written, call.id).toBeNull();
      } else {
        expect(stored, call.id).toBeCloseTo(call.cost, 12);
        expect(written, call.id).toBeCloseTo(call.cost, 12);
      }
    }
    // The history sums them: the ended calls of known cost, the two unknown ones counted apart.
    expect((await new CallSearch(opened).page({}, 10, 0)).cost).toEqual({ usd: expect.closeTo(0.0025 + 0.003 + 0, 12), unknown: 2, demo: 0 });
    // The call that was going on ends in this release: its row's cost is written with it.
    await new CallRepository(opened.db).save(stored(callSummary({ sessionId: 'going', turns: turnsCosting([0.01, 0.02]) }), 2));
    expect((await opened.db.selectFrom('calls').select('cost_usd').where('call_id', '=', 'going').executeTakeFirstOrThrow()).cost_usd).toBeCloseTo(0.03, 12);
  });
});

describe.each(await storeKinds())('the calls, reports and deliveries on %s', (kind) => {
  test('rows outlive a close and a new open of the store', async () => {
    const location = await freshStoreLocation(kind);
    cleanups.push(() => location.remove());
    const first = await openStore(location.location, logger);
    await new CallRepository(first.db).save(stored(callSummary()));
    await first.close();
    const second = await openStore(location.location, logger);
    cleanups.push(() => second.close());
    expect((await new CallRepository(second.db).get('call-1'))?.sessionId).toBe('call-1');
  });

  describe('CallRepository', () => {
    test('a call reads back as it was summed up', async () => {
      const calls = new CallRepository((await store(kind)).db);
      const call = callSummary({ variables: { name: 'Ada' }, tags: { campaign: 'c1' } });
      await calls.save(stored(call));
      expect(await calls.get('call-1')).toEqual(call);
      const bare = callSummary({ sessionId: 'bare', from: undefined, to: undefined, serviceReason: undefined, turns: [], toolRuns: [] });
      await calls.save(stored(bare));
      expect(await calls.get('bare')).toEqual(bare);
      expect(await calls.get('nobody')).toBeUndefined();
    });

    test('a later snapshot of the call replaces its row; one of the same revision too', async () => {
      const calls = new CallRepository((await store(kind)).db);
      await calls.save(stored(callSummary({ endReason: 'connection_lost' }), 1));
      await calls.save(stored(callSummary({ endReason: 'agent_hung_up', bargeIns: 4 }), 2));
      expect(await calls.get('call-1')).toMatchObject({ endReason: 'agent_hung_up', bargeIns: 4 });
      await calls.save(stored(callSummary({ endReason: 'transferred', bargeIns: 5 }), 2));
      expect(await calls.get('call-1')).toMatchObject({ endReason: 'transferred', bargeIns: 5 });
      expect(await calls.listRecent(10)).toHaveLength(1);
    });

    test('an older snapshot written after a newer one changes nothing', async () => {
      const calls = new CallRepository((await store(kind)).db);
      const ended = callSummary({ bargeIns: 3 });
      await calls.save(stored(ended, 7));
      // A slow write of the call while it went on, arriving late.
      await calls.save(callProgress(6, { bargeIns: 1, turns: [] }));
      await calls.save(stored(callSummary({ endReason: 'error', bargeIns: 0 }), 2));
      expect(await calls.get('call-1')).toEqual(ended);
      expect(await calls.inProgress(10)).toEqual([]);
    });

    test('a call in progress is not listed as ended; inProgress() lists it, oldest first; its end replaces it', async () => {
      const calls = new CallRepository((await store(kind)).db);
      await calls.save(callProgress(2, { sessionId: 'later', startedAt: '2026-11-22T03:10:00.000Z' }));
      await calls.save(callProgress(1, { sessionId: 'going', startedAt: '2026-11-22T03:00:00.000Z', tags: { campaign: 'c1' } }));
      await calls.save(stored(callSummary({ sessionId: 'done' })));

      expect(await calls.get('going')).toBeUndefined();
      expect(await calls.find('going')).toBeUndefined();
      expect(await calls.ofSessionId('going')).toEqual([]);
      expect((await calls.listRecent(10)).map((c) => c.callId)).toEqual(['done']);
      expect((await calls.withoutReport('2026-11-01T00:00:00.000Z', 10)).map((c) => c.callId)).toEqual(['done']);

      const going = await calls.inProgress(10);
      expect(going.map((c) => [c.callId, c.revision])).toEqual([
        ['going', 1],
        ['later', 2],
      ]);
      expect(going[0]).toEqual(callProgress(1, { sessionId: 'going', startedAt: '2026-11-22T03:00:00.000Z', tags: { campaign: 'c1' } }));
      expect(going[0]).not.toHaveProperty('endedAt');
      expect((await calls.inProgress(1)).map((c) => c.callId)).toEqual(['going']);

      await calls.save(stored(callSummary({ sessionId: 'going', startedAt: '2026-11-22T03:00:00.000Z', endReason: 'cut_off' }), 3));
      expect(await calls.get('going')).toMatchObject({ endReason: 'cut_off', durationMs: 65_788 });
      expect((await calls.inProgress(10)).map((c) => c.callId)).toEqual(['later']);
    });

    test('the latest calls first, paged by ended_at', async () => {
      const calls = new CallRepository((await store(kind)).db);
      for (const minute of [1, 3, 2]) {
        await calls.save(stored(callSummary({ sessionId: `m${minute}`, endedAt: `2026-11-22T03:0${minute}:00.000Z` })));
      }
      expect((await calls.listRecent(2)).map((c) => c.sessionId)).toEqual(['m3', 'm2']);
      expect((await calls.listRecent(2, '2026-11-22T03:02:00.000Z')).map((c) => c.sessionId)).toEqual(['m1']);
    });

    test('the calls of a session id, the earliest first; a link finds the latest', async () => {
      const calls = new CallRepository((await store(kind)).db);
      await calls.save(stored(callSummary({ sessionId: 's', callId: 'second', startedAt: '2026-11-22T04:00:00.000Z' })));
      await calls.save(stored(callSummary({ sessionId: 's', callId: 'first', startedAt: '2026-11-22T03:00:00.000Z' })));
      expect((await calls.ofSessionId('s')).map((c) => c.callId)).toEqual(['first', 'second']);
      expect((await calls.find('s'))?.callId).toBe('second');
      expect((await calls.find('first'))?.callId).toBe('first');
      expect(await calls.find('nobody')).toBeUndefined();
    });

    test("each snapshot writes the call's cost as its turns stand; an older one arriving late leaves it", async () => {
      const { db } = await store(kind);
      const calls = new CallRepository(db);
      const costOf = async (callId = 'call-1') => (await db.selectFrom('calls').select('cost_usd').where('call_id', '=', callId).executeTakeFirstOrThrow()).cost_usd;
      await calls.save(callProgress(1, { turns: turnsCosting([0.001]) }));
      expect(await costOf()).toBeCloseTo(0.001, 12);
      await calls.save(stored(callSummary({ turns: turnsCosting([0.001, 0.004]) }), 3));
      expect(await costOf()).toBeCloseTo(0.005, 12);
      await calls.save(callProgress(2, { turns: turnsCosting([0.001]) }));
      expect(await costOf()).toBeCloseTo(0.005, 12);
      // The helpers' call has a turn whose model has no price: its cost is not known, not $0.0004.
      await calls.save(stored(callSummary({ sessionId: 'unpriced' })));
      expect(await costOf('unpriced')).toBeNull();
      // The summary read back is the call as it was summed up: the column is the store's, not the record's.
      expect(await calls.get('unpriced')).toEqual(callSummary({ sessionId: 'unpriced' }));
    });

    test("an export made before calls had a cost is imported with each call's cost worked out from its turns", async () => {
      const target = await store(kind);
      const header = { format: EXPORT_FORMAT, version: 1, dialect: 'sqlite', schema: 10, exportedAt: '2026-11-20T00:00:00.000Z' };
      const rowBefore = (call: CallSummary) => {
        const { cost_usd: _cost, ...row } = callRowOf(stored(call));
        return { table: 'calls', row: { ...row, owner: null } };
      };
      const lines = [
        header,
        rowBefore(callSummary({ sessionId: 'priced', turns: turnsCosting([0.002, 0.003]) })),
        rowBefore(callSummary({ sessionId: 'unpriced' })),
      ].map((line) => `${JSON.stringify(line)}\n`);
      expect((await importStore(target, Readable.from(lines))).added.calls).toBe(2);
      const rows = await target.db.selectFrom('calls').select(['call_id', 'cost_usd']).orderBy('call_id').execute();
      expect(rows).toEqual([
        { call_id: 'priced', cost_usd: expect.closeTo(0.005, 12) },
        { call_id: 'unpriced', cost_usd: null },
      ]);
    });

    test('calls without a report, since a time', async () => {
      const { db } = await store(kind);
      const calls = new CallRepository(db);
      await calls.save(stored(callSummary({ sessionId: 'old', endedAt: '2026-11-20T00:00:00.000Z' })));
      await calls.save(stored(callSummary({ sessionId: 'reported' })));
      await calls.save(stored(callSummary({ sessionId: 'unreported' })));
      await new ReportRepository(db).save(report({ callId: 'reported', sessionId: 'reported' }));
      expect((await calls.withoutReport('2026-11-21T00:00:00.000Z', 10)).map((c) => c.sessionId)).toEqual(['unreported']);
    });
  });

  describe('ReportRepository', () => {
    test('a report reads back as stored, and belongs to a call', async () => {
      const { db } = await store(kind);
      const reports = new ReportRepository(db);
      await expect(reports.save(report())).rejects.toThrow(/FOREIGN KEY|foreign key/);
      await new CallRepository(db).save(stored(callSummary()));
      await reports.save(report());
      expect(await reports.get('call-1')).toEqual(report());
      await reports.save(report({ summary: null, fields: null, fieldsStatus: 'failed', fieldsError: 'shutdown' }));
      expect(await reports.get('call-1')).toMatchObject({ fields: null, fieldsStatus: 'failed', fieldsError: 'shutdown' });
      expect(await reports.get('nobody')).toBeUndefined();
    });

    test("addIfAbsent stores a call's first report only, and says whether it did", async () => {
      const { db } = await store(kind);
      const reports = new ReportRepository(db);
      await new CallRepository(db).save(stored(callSummary()));
      expect(await reports.addIfAbsent(report())).toBe(true);
      expect(await reports.addIfAbsent(report({ summary: 'A second one.' }))).toBe(false);
      expect(await reports.get('call-1')).toEqual(report());
    });
  });

  describe('DeliveryRepository', () => {
    const delivery = (id: string, nextAttemptAt: number, callId = 'call-1') => ({
      id,
      callId,
      sessionId: callId,
      url: 'https://example.test/hook',
      body: '{}',
      createdAt: '2026-11-22T03:06:00.000Z',
      nextAttemptAt,
    });

    test('due rows in order; the next due time; retries, deliveries and give-ups', async () => {
      const deliveries = new DeliveryRepository((await store(kind)).db);
      expect(await deliveries.nextDueAt()).toBeUndefined();
      await deliveries.add(delivery('b', 2000));
      await deliveries.add(delivery('a', 1000));
      await deliveries.add(delivery('later', 9000));
      expect((await deliveries.due(2500, 10)).map((d) => d.id)).toEqual(['a', 'b']);
      expect((await deliveries.due(2500, 1)).map((d) => d.id)).toEqual(['a']);
      expect(await deliveries.nextDueAt()).toBe(1000);

      await deliveries.retryAt('a', 'https://example.test/new', 1, 5000, 'HTTP 503');
      await deliveries.delivered('b', 'https://example.test/hook', 1, '2026-11-22T03:06:01.000Z');
      expect(await deliveries.get('a')).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: 5000,
        lastError: 'HTTP 503',
        url: 'https://example.test/new',
      });
      expect(await deliveries.get('b')).toMatchObject({ status: 'delivered', attempts: 1, deliveredAt: '2026-11-22T03:06:01.000Z', lastError: null });
      expect(await deliveries.nextDueAt()).toBe(5000);

      await deliveries.failed('a', 'https://example.test/new', 7, 'HTTP 410');
      expect(await deliveries.get('a')).toMatchObject({ status: 'failed', attempts: 7, lastError: 'HTTP 410' });
      expect(await deliveries.failedTotal()).toBe(1);
      expect((await deliveries.due(10_000, 10)).map((d) => d.id)).toEqual(['later']);
      expect((await deliveries.forSession('call-1')).map((d) => d.id).sort()).toEqual(['a', 'b', 'later']);
      expect((await deliveries.forCall('call-1')).map((d) => d.id).sort()).toEqual(['a', 'b', 'later']);
      expect(await deliveries.get('nobody')).toBeUndefined();
    });

    test('dueAllAt brings every pending delivery forward, never back', async () => {
      const deliveries = new DeliveryRepository((await store(kind)).db);
      await deliveries.add(delivery('waiting', 9000));
      await deliveries.add(delivery('overdue', 100));
      await deliveries.dueAllAt(500);
      expect((await deliveries.get('waiting'))?.nextAttemptAt).toBe(500);
      expect((await deliveries.get('overdue'))?.nextAttemptAt).toBe(100);
    });

    test('a due row is claimed once: a second claim of what was read fails, the row waits until the claim runs out', async () => {
      const deliveries = new DeliveryRepository((await store(kind)).db);
      await deliveries.add(delivery('a', 1000));
      const [read] = await deliveries.due(2000, 10);
      const [readToo] = await deliveries.due(2000, 10);
      expect(await deliveries.claim(read!, 70_000)).toBe(true);
      expect(await deliveries.claim(readToo!, 70_000)).toBe(false);
      expect(await deliveries.due(2000, 10)).toEqual([]);
      expect(await deliveries.nextDueAt()).toBe(70_000);
      // Given up meanwhile (by another process): not taken.
      await deliveries.failed('a', 'https://example.test/hook', 1, 'HTTP 500');
      expect(await deliveries.claim((await deliveries.get('a'))!, 80_000)).toBe(false);
    });

    test("a start brings forward no report another live replica is sending; a dead replica's claim it does", async () => {
      const opened = await store(kind);
      const a = new DeliveryRepository(opened.db, { replica: 'a', dialect: opened.dialect });
      const b = new DeliveryRepository(opened.db, { replica: 'b', dialect: opened.dialect });
      const beat = (id: string, at: number) =>
        opened.db
          .insertInto('replicas')
          .values({ id, instance: id, host: 'h', pid: 1, internal_url: null, started_at: new Date().toISOString(), heartbeat_at: at })
          .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: at }))
          .execute();
      await beat('a', Date.now());
      await a.add(delivery('sending', 1000));
      await a.add(delivery('waiting', 50_000));
      expect(await a.claim((await a.get('sending'))!, 70_000)).toBe(true);
      await b.dueAllAt(2000);
      expect((await b.get('sending'))?.nextAttemptAt).toBe(70_000);
      expect((await b.get('waiting'))?.nextAttemptAt).toBe(2000);
      // a stopped beating: its claim is nobody's now.
      await beat('a', Date.now() - 60_000);
      await b.dueAllAt(3000);
      expect((await b.get('sending'))?.nextAttemptAt).toBe(3000);
    });

    test("given-up deliveries are queued again: all, one call's, or a session id's", async () => {
      const deliveries = new DeliveryRepository((await store(kind)).db);
      for (const [id, callId] of [
        ['x1', 'x'],
        ['y1', 'y'],
        ['z1', 'z'],
        ['z2', 'z'],
      ] as const) {
        await deliveries.add(delivery(id, 0, callId));
        await deliveries.failed(id, 'https://example.test/hook', 3, 'HTTP 500');
      }
      await deliveries.add(delivery('pending', 0, 'x'));
      expect(await deliveries.requeueFailed(5000, { callId: 'nobody' })).toBe(0);
      expect(await deliveries.requeueFailed(5000, { callId: 'x' })).toBe(1);
      expect(await deliveries.get('x1')).toMatchObject({ status: 'pending', nextAttemptAt: 5000, attemptsFrom: new Date(5000).toISOString() });
      expect(await deliveries.requeueFailed(6000, { sessionId: 'z' })).toBe(2);
      expect(await deliveries.failedTotal()).toBe(1);
      expect(await deliveries.requeueFailed(7000)).toBe(1);
      expect(await deliveries.requeueFailed(8000)).toBe(0);
      expect(await deliveries.failedTotal()).toBe(0);
    });
  });
});

