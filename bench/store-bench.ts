/**
 * The store phase (issue 22): what the asynchronous store costs the call path and how fast it
 * takes calls, on SQLite and on PostgreSQL.
 *
 * - First-speak overhead with Hotline writing its calls to each store: a Hotline of its own per
 *   store (BenchFixture with DATABASE_FILE or DATABASE_URL), warmed up, then 1 and 100 talking calls.
 * - Calls stored per second: the call writer as server.ts wires it (a CallRepository on a fresh
 *   store, its journal in a temp folder), in this process, handed calls as fast as the event loop
 *   goes, timed until everything is in the database.
 *
 * Each PostgreSQL run gets a database of its own on the server `--postgres` names, dropped after.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import pg from 'pg';
import { pino } from 'pino';
import type { CallSoFar, CallSummary, ToolRunSummary, TurnSummary } from '../src/call/ports/call-summary.js';
import { CallRepository } from '../src/store/call-repository.js';
import { CallWriter } from '../src/store/call-writer.js';
import { describePostgresUrl } from '../src/store/postgres/postgres-dialect.js';
import { openStore, type StoreLocation } from '../src/store/store.js';
import { WriteJournal } from '../src/store/write-journal.js';
import { now } from './clock.js';
import { measureLevel, type FirstSpeakLevel, type TalkOptions } from './first-speak.js';
import { BenchFixture, type FixtureOptions } from './llm-fixture.js';
import { seededRandom } from './stats.js';
import { warmUp } from './warm-up.js';

export const STORE_NAMES = ['sqlite', 'postgres'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

export const DEFAULT_POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Records handed to the call writer per call in the "as they happen" run: at its start, one per turn, the final one. */
const TURNS_PER_CALL = 6;

/** The writer's figures for one run. */
export interface WriterRun {
  /** 'ended': only each call's final record; 'as-they-happen': a record at its start, one per turn and the final. */
  mode: 'ended' | 'as-they-happen';
  calls: number;
  /** Records handed to the writer. */
  records: number;
  /** Rows the writer wrote (fewer than records when a newer snapshot of a call replaced one still waiting). */
  writes: number;
  /** From the first record handed to the writer having nothing left to write. */
  seconds: number;
  callsPerSecond: number;
  writesPerSecond: number;
  /** Most calls waiting for the database at once (sampled every 10 records). */
  backlogPeak: number;
  /** Ended calls in the table afterwards: equals `calls` unless something was lost. */
  stored: number;
  /** Writes that failed and were tried again. */
  failedWrites: number;
  /** The writer had not written everything within the run's time limit. */
  timedOut: boolean;
}

export interface StoreFigures {
  store: StoreName;
  /** The SQLite file or the PostgreSQL server, without a password; for a skipped store, why. */
  where: string;
  skipped?: string;
  /** First-speak overhead with Hotline on this store, 1 call then 100. */
  firstSpeak?: FirstSpeakLevel[];
  /** The nice value Hotline's thread ran at (see priority.ts), undefined where it cannot be read. */
  hotlineNice?: number | undefined;
  writer?: WriterRun[];
}

export interface StoreBenchResult {
  note: string;
  /** The callers' thread's nice value, if it gave way to Hotline's. */
  callersNice?: number | undefined;
  stores: StoreFigures[];
}

export interface StoreBenchOptions {
  postgresAdminUrl: string;
  /** Calls handed to the writer per run. */
  writerCalls: number;
  /** Talking calls per first-speak level. */
  levels: readonly number[];
  turnsFor: (calls: number) => number;
  warmUp: { calls: number; turns: number };
  talk: Omit<TalkOptions, 'calls' | 'turns' | 'idPrefix'>;
  fixture: Omit<FixtureOptions, 'env' | 'storedCalls'>;
  progress: (message: string) => void;
}

export const STORE_NOTE =
  'First-speak overhead as in section 1, with Hotline writing its calls as they happen to that store (a Hotline of its ' +
  'own per store, warmed up first). Calls stored per second: the call writer as Hotline runs it (its journal, one ' +
  'record per call waiting, a CallRepository) in the bench process on an empty store, handed one record per turn of ' +
  'the event loop as fast as it goes, timed until everything is in the database.';

/** Where a store lives for one run, and how to remove it. */
export interface StorePlace {
  readonly location: StoreLocation;
  /** What Hotline's configuration takes: DATABASE_FILE or DATABASE_URL. */
  readonly env: Record<string, string>;
  remove(): Promise<void>;
}

export type PlaceMaker = () => Promise<StorePlace>;

/** A fresh SQLite file in a temp folder of its own. */
export async function sqlitePlace(): Promise<StorePlace> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-store-'));
  const file = path.join(dir, 'hotline.db');
  return {
    location: { databaseFile: file },
    env: { DATABASE_FILE: file },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  // A connection that fails later (the server going away) must not become an uncaught 'error' event.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A maker of fresh PostgreSQL databases on the server, or why there is none. */
export async function postgresPlaces(adminUrl: string): Promise<PlaceMaker | { skipped: string }> {
  try {
    await withAdmin(adminUrl, (client) => client.query('SELECT 1'));
  } catch {
    return { skipped: `skipped: no PostgreSQL at ${describePostgresUrl(adminUrl)}` };
  }
  return async () => {
    const database = `hotline_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
    // The name is ours (letters, digits, underscores): CREATE DATABASE takes no parameters.
    await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${database}`));
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    return {
      location: { databaseFile: '', databaseUrl: url.toString() },
      env: { DATABASE_URL: url.toString() },
      remove: async () => {
        await withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
      },
    };
  };
}

/** Runs `work` on a fresh place, removed after. */
export async function inPlace<T>(make: PlaceMaker, work: (place: StorePlace) => Promise<T>): Promise<T> {
  const place = await make();
  try {
    return await work(place);
  } finally {
    await place.remove();
  }
}

interface Stores {
  readonly sqlite: PlaceMaker;
  readonly postgres: PlaceMaker | { skipped: string };
  readonly postgresWhere: string;
}

async function findStores(postgresAdminUrl: string): Promise<Stores> {
  return { sqlite: sqlitePlace, postgres: await postgresPlaces(postgresAdminUrl), postgresWhere: describePostgresUrl(postgresAdminUrl) };
}

/**
 * The writer's figures on each store. Run before any Hotline thread starts and the callers' thread
 * gives way: the writer and the SQLite store's thread then run at the process's own priority.
 */
export async function measureWriters(options: StoreBenchOptions): Promise<StoreFigures[]> {
  const stores = await findStores(options.postgresAdminUrl);
  const figures: StoreFigures[] = [];
  for (const store of STORE_NAMES) {
    const make = stores[store];
    if (typeof make !== 'function') {
      figures.push({ store, where: stores.postgresWhere, skipped: make.skipped });
      continue;
    }
    const runs: WriterRun[] = [];
    for (const mode of ['ended', 'as-they-happen'] as const) {
      options.progress(`store: the call writer on ${store}, ${options.writerCalls} calls, ${mode === 'ended' ? 'final records only' : 'records as they happen'}`);
      runs.push(await inPlace(make, (place) => runWriter(place, mode, options.writerCalls)));
    }
    figures.push({ store, where: store === 'sqlite' ? 'a temp file' : stores.postgresWhere, writer: runs });
  }
  return figures;
}

/** First-speak overhead with Hotline on each store, added to the writers' figures. */
export async function measureFirstSpeakOnStores(options: StoreBenchOptions, figures: StoreFigures[]): Promise<StoreBenchResult> {
  const stores = await findStores(options.postgresAdminUrl);
  let callersNice: number | undefined;
  for (const store of STORE_NAMES) {
    let entry = figures.find((f) => f.store === store);
    if (!entry) {
      entry = { store, where: store === 'sqlite' ? 'a temp file' : stores.postgresWhere };
      figures.push(entry);
    }
    const make = stores[store];
    if (typeof make !== 'function') {
      entry.skipped = make.skipped;
      continue;
    }
    const run = await inPlace(make, (place) => firstSpeakOn(store, place, options));
    entry.firstSpeak = run.levels;
    entry.hotlineNice = run.hotlineNice;
    callersNice = run.callersNice;
  }
  figures.sort((a, b) => STORE_NAMES.indexOf(a.store) - STORE_NAMES.indexOf(b.store));
  return { note: STORE_NOTE, callersNice, stores: figures };
}

async function firstSpeakOn(
  store: StoreName,
  place: StorePlace,
  options: StoreBenchOptions,
): Promise<{ levels: FirstSpeakLevel[]; hotlineNice: number | undefined; callersNice: number | undefined }> {
  const fixture = await BenchFixture.start({ ...options.fixture, env: place.env });
  try {
    options.progress(`store: Hotline on ${store}, warming up`);
    await warmUp(fixture, { ...options.warmUp, seed: options.talk.seed });
    const levels: FirstSpeakLevel[] = [];
    for (const calls of options.levels) {
      const turns = options.turnsFor(calls);
      options.progress(`store: first-speak on ${store}: ${calls} calls × ${turns} turns`);
      levels.push(await measureLevel(fixture, { ...options.talk, calls, turns, idPrefix: `store-${store}-${calls}` }));
    }
    return { levels, hotlineNice: fixture.hotline.nice, callersNice: fixture.callersNice };
  } finally {
    await fixture.close();
  }
}

/** One call's records: at its start, after each turn (the tool run after the third), and its end. */
interface BenchCall {
  readonly snapshots: readonly CallSoFar[];
  readonly final: CallSummary;
}

/** A realistic call: six turns with their timings, an order lookup, a campaign's variables and tags. */
export function benchCall(index: number, random: () => number): BenchCall {
  const startedAt = Date.now() - 180_000;
  const turns: TurnSummary[] = Array.from({ length: TURNS_PER_CALL }, (_, t) => {
    const llmRequestMs = 0.2 + random();
    const llmFirstTokenMs = llmRequestMs + 250 + random() * 500;
    const firstSpeakMs = llmFirstTokenMs + 80 + random() * 200;
    return {
      at: new Date(startedAt + 5_000 + t * 25_000).toISOString(),
      llmRequestMs,
      llmFirstTokenMs,
      firstSpeakMs,
      playbackStartedMs: firstSpeakMs + 60,
      playbackEndedMs: firstSpeakMs + 2_000 + random() * 4_000,
      interrupted: t === 4,
      failed: false,
    };
  });
  const toolRun: ToolRunSummary = {
    name: 'order_status',
    arguments: JSON.stringify({ order_number: String(4000 + (index % 1000)) }),
    outcome: 'ok',
    durationMs: 80 + Math.round(random() * 200),
    reused: false,
  };
  const number = `49151${String(10_000_000 + Math.floor(random() * 89_999_999))}`;
  const base: CallSoFar = {
    callId: `bench-store-${index}-${randomBytes(4).toString('hex')}`,
    sessionId: `bench-session-${index}`,
    direction: 'outbound',
    from: '4930000000',
    to: number,
    startedAt: new Date(startedAt).toISOString(),
    serviceReason: undefined,
    turns: [],
    bargeIns: 0,
    toolRuns: [],
    variables: { name: `Person ${index}`, order_number: String(4000 + (index % 1000)), language: 'en' },
    tags: { campaign: 'bench', contact: String(index) },
    transcriptFile: `/var/lib/hotline/transcripts/bench/bench-session-${index}.jsonl`,
  };
  const snapshots: CallSoFar[] = [base];
  for (let t = 1; t <= TURNS_PER_CALL; t++) {
    const sofar = turns.slice(0, t);
    snapshots.push({
      ...base,
      turns: sofar,
      bargeIns: sofar.filter((turn) => turn.interrupted).length,
      toolRuns: t >= 3 ? [toolRun] : [],
    });
  }
  const last = snapshots.at(-1) ?? base;
  return {
    snapshots,
    final: { ...last, endedAt: new Date(startedAt + 170_000).toISOString(), durationMs: 170_000, endReason: 'agent_hung_up' },
  };
}

async function runWriter(place: StorePlace, mode: WriterRun['mode'], calls: number): Promise<WriterRun> {
  const logger = pino({ level: 'silent' });
  const store = await openStore(place.location, logger);
  const journalDir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-journal-'));
  let writes = 0;
  let failedWrites = 0;
  const repository = new CallRepository(store.db);
  const writer = new CallWriter({
    rows: {
      saveAll: (calls) => {
        writes += calls.length;
        return repository.saveAll(calls);
      },
    },
    journal: new WriteJournal(journalDir, logger),
    logger,
    failed: () => (failedWrites += 1),
  });
  try {
    const random = seededRandom(calls);
    // Made before the clock starts: the run times the writer, not the making of records.
    const made = Array.from({ length: calls }, (_, i) => benchCall(i, random));
    const steps: (() => void)[] = [];
    if (mode === 'ended') {
      for (const call of made) steps.push(() => writer.callEnded(call.final));
    } else {
      // Every call is in progress at once: each round hands one record of each call, the last round their ends.
      for (let round = 0; round <= TURNS_PER_CALL; round++) {
        for (const call of made) {
          const snapshot = call.snapshots[round];
          if (snapshot) steps.push(() => writer.callProgress(snapshot));
        }
      }
      for (const call of made) steps.push(() => writer.callEnded(call.final));
    }

    let backlogPeak = 0;
    const started = now();
    for (let i = 0; i < steps.length; i++) {
      steps[i]?.();
      // The backlog's figure walks the waiting calls: sampled, not read after every record.
      if (i % 10 === 9 || i === steps.length - 1) backlogPeak = Math.max(backlogPeak, writer.backlog.pending);
      // One record per turn of the event loop, as calls' events come: the writes' answers get their turns too.
      await nextTurn();
    }
    const settled = await writer.settled(120_000);
    const seconds = (now() - started) / 1000;
    const row = await store.db
      .selectFrom('calls')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('ended_at', 'is not', null)
      .executeTakeFirstOrThrow();
    return {
      mode,
      calls,
      records: steps.length,
      writes,
      seconds,
      callsPerSecond: calls / seconds,
      writesPerSecond: writes / seconds,
      backlogPeak,
      stored: Number(row.n),
      failedWrites,
      timedOut: !settled,
    };
  } finally {
    await writer.close(5_000);
    await store.close();
    await rm(journalDir, { recursive: true, force: true });
  }
}
