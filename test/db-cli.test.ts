/**
 * `npm run db`: migrate, status, export and import, run as a user runs them (a child process in a
 * folder without .env, an environment of the test's own). A business that began on SQLite moves
 * its store to PostgreSQL without losing a call.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { seedCalls } from '../bench/dashboard-load.js';
import { openStore } from '../src/store/store.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { startCli } from './helpers/cli.js';
import { Readable, Writable } from 'node:stream';
import { runDbCli } from '../src/cli/db.js';
import { freshStoreLocation, postgresReachable, type TestStoreLocation } from './helpers/stores.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-db-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** As a user runs it: a child process in a folder without .env. Each start compiles for seconds: kept for the move itself. */
async function db(args: string[], env: Record<string, string>): Promise<{ code: number | string; out: string; err: string }> {
  const cli = startCli('src/cli/db.ts', args, { env });
  const code = await cli.exited;
  return { code, out: cli.lines.join('\n'), err: cli.stderr() };
}

/** The same command in this process: its lines and exit code, with only `env` for configuration. */
async function dbHere(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out += chunk.toString();
      done();
    },
  });
  const code = await runDbCli(args, env, { stdout, stderr: { write: (text: string) => ((err += text), true) }, stdin: Readable.from([]) });
  return { code, out: out.trimEnd(), err };
}

test('--help says every command; a bad command line exits 2 with one line that points at --help', async () => {
  const dir = await folder();
  const help = await dbHere(['--help'], { TRANSCRIPTS_DIR: dir });
  expect(help.code).toBe(0);
  for (const command of ['migrate', 'status', 'export', 'import']) expect(help.out).toContain(command);
  const unknown = await dbHere(['frob'], { TRANSCRIPTS_DIR: dir });
  expect(unknown.code).toBe(2);
  expect(unknown.err.trim()).toBe('db: unknown command "frob": use migrate, status, export, import. See `npm run db -- --help`.');
  const misplaced = await dbHere(['status', '--out', 'x'], { TRANSCRIPTS_DIR: dir });
  expect(misplaced.code).toBe(2);
  expect(misplaced.err).toContain('--out goes with export');
}, CHILD_TEST_TIMEOUT_MS);

test('status changes nothing: a store behind this Hotline says so, migrate brings it up, status then counts what is in it', async () => {
  const dir = await folder();
  const env = { TRANSCRIPTS_DIR: dir };
  const before = await dbHere(['status'], env);
  expect(before.code).toBe(0);
  expect(before.out).toMatch(/schema version: 0 \(this Hotline brings \d+: npm run db -- migrate, or start Hotline\)/);
  const migrated = await dbHere(['migrate'], env);
  expect(migrated.code).toBe(0);
  expect(migrated.out).toMatch(/^sqlite .*hotline\.db: schema version \d+, up to date$/);
  const store = await openStore({ databaseFile: path.join(dir, 'hotline.db') }, pino({ level: 'silent' }));
  await seedCalls(store, 3);
  await store.close();
  const after = await dbHere(['status'], env);
  expect(after.out).toMatch(/schema version: \d+ \(up to date\)/);
  expect(after.out).toContain('calls: 3 (');
  expect(after.out).toContain('write queue: 0 call record(s) journalled');
}, CHILD_TEST_TIMEOUT_MS);

test('status counts the records a stopped Hotline left in the journal, and those the database refused', async () => {
  const dir = await folder();
  const journal = path.join(dir, 'store-journal');
  await (await import('node:fs/promises')).mkdir(journal, { recursive: true });
  await writeFile(path.join(journal, 'journal-1-0.jsonl'), '{"call":{},"final":true}\n{"call":{},"final":false}\n');
  await writeFile(path.join(journal, 'rejected.jsonl'), '{"call":{},"final":true,"reason":"x"}\n');
  // A replica's refused records, a file each; one being written (aside) is not counted yet.
  await (await import('node:fs/promises')).mkdir(path.join(journal, 'replica-1', 'rejected'), { recursive: true });
  await writeFile(path.join(journal, 'replica-1', 'rejected', '1795887549099-0a1b2c3d4e5f.json'), '{"call":{},"final":true,"reason":"x"}\n');
  await writeFile(path.join(journal, 'replica-1', 'rejected', '.1795887549100-0a1b2c3d4e60.json.tmp'), '{"call":');
  const status = await dbHere(['status'], { TRANSCRIPTS_DIR: dir });
  expect(status.out).toContain('write queue: 2 call record(s) journalled');
  expect(status.out).toContain("2 refused by the database, kept in the journal's rejected/");
}, CHILD_TEST_TIMEOUT_MS);

describe.skipIf(!(await postgresReachable()))('moving to PostgreSQL', () => {
  test('a SQLite store exported and imported into PostgreSQL holds the same calls, reports and campaigns; importing again adds nothing', async () => {
    const dir = await folder();
    const sqliteEnv = { TRANSCRIPTS_DIR: dir };
    const sqlite = await openStore({ databaseFile: path.join(dir, 'hotline.db') }, pino({ level: 'silent' }));
    await seedCalls(sqlite, 120);
    await sqlite.db
      .insertInto('campaigns')
      .values({ id: 'c1', name: 'spring', settings: '{}', state: 'paused', created_at: 'x', updated_at: 'x', last_started_at: null, zones: null })
      .execute();
    await sqlite.db
      .insertInto('campaign_contacts')
      .values([0, 1].map((idx) => ({ campaign_id: 'c1', idx, number: `4915100000${idx}`, variables: '{}', time_zone: null, status: 'pending' as const, outcome: null, last_session_id: null, last_error: null, updated_at: 'x' })))
      .execute();
    await sqlite.db.insertInto('stop_list').values({ number: '4915199999', reason: 'asked', added_at: 'x' }).execute();
    const counts = async (store: typeof sqlite) => ({
      calls: (await store.db.selectFrom('calls').select('call_id').orderBy('call_id').execute()).map((row) => row.call_id),
      reports: (await store.db.selectFrom('reports').select(['call_id', 'body']).orderBy('call_id').execute()).length,
      contacts: (await store.db.selectFrom('campaign_contacts').select(['idx', 'number']).orderBy('idx').execute()),
      tally: await store.db.selectFrom('campaign_tally').select(['status', 'n']).where('n', '>', 0).execute(),
      stopped: (await store.db.selectFrom('stop_list').select('number').execute()).map((row) => row.number),
    });
    const source = await counts(sqlite);
    await sqlite.close();
    expect(source.calls).toHaveLength(120);

    const file = path.join(dir, 'export.jsonl');
    const exported = await db(['export', '--out', file], sqliteEnv);
    expect(exported.code).toBe(0);
    expect(exported.err).toContain('calls 120');
    expect((await readFile(file, 'utf8')).split('\n')[0]).toContain('"format":"hotline-store-export"');

    const target: TestStoreLocation = await freshStoreLocation('postgres');
    cleanups.push(() => target.remove());
    const pgEnv = { TRANSCRIPTS_DIR: dir, ...target.env };
    const imported = await db(['import', '--in', file], pgEnv);
    expect(imported.code).toBe(0);
    expect(imported.out).toContain('calls 120');
    const again = await db(['import', '--in', file], pgEnv);
    expect(again.out).toMatch(/: calls 0, reports 0, deliveries 0, campaigns 0, campaign_contacts 0, stop_list 0, erasures 0, staff 0, audit_log 0 /);

    const pg = await openStore(target.location, pino({ level: 'silent' }));
    cleanups.push(() => pg.close());
    expect(await counts(pg)).toEqual(source);
  }, CHILD_TEST_TIMEOUT_MS * 2);

  test('an import of a file that is not an export says so and changes nothing', async () => {
    const dir = await folder();
    const target = await freshStoreLocation('postgres');
    cleanups.push(() => target.remove());
    const file = path.join(dir, 'not-an-export.jsonl');
    await writeFile(file, '{"hello":"world"}\n');
    const result = await db(['import', '--in', file], { TRANSCRIPTS_DIR: dir, ...target.env });
    expect(result.code).toBe(1);
    expect(result.err.trim()).toBe('db import: line 1 is not the header of a Hotline store export (hotline-store-export)');
  }, CHILD_TEST_TIMEOUT_MS);
});
