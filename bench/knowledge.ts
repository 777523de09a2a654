/**
 * The knowledge phase: what the business's documents cost a turn, on SQLite and on PostgreSQL.
 *
 * - Retrieval: a synthetic knowledge folder (knowledge-documents.ts) of 1,000, 10,000 and 100,000
 *   passages indexed through the real KnowledgeBase.open (watch off) into a fresh store, wired as
 *   features/knowledge.ts wires it (on SQLite the searches read a connection of their own), then
 *   base.find(question, undefined) — what a turn does before its LLM request — timed from this
 *   thread with performance.now() over a few hundred callers' questions, after a warm-up.
 * - Indexing: how long the folder takes, and the longest the event loop of the thread indexing it
 *   (this one, as Hotline's own in production) was held meanwhile: a 1 ms timer's lateness, each
 *   long stall set against what the index was doing then (a write, the list of sources, between
 *   writes: the documents' thread's answer arriving) and the garbage collector's pauses.
 * - First-speak overhead with KNOWLEDGE=false and with KNOWLEDGE=true on the 10,000-passage folder:
 *   two Hotlines side by side (first-speak.ts's machinery, a fixture each), warmed up, each level
 *   measured on one and right after on the other, callers asking the shop's questions.
 *
 * Each PostgreSQL run gets a database of its own, dropped after (store-bench.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pino } from 'pino';
import { KnowledgeBase } from '../src/knowledge/knowledge-base.js';
import type { Logger } from '../src/logger.js';
import { KnowledgeRepository, type PassageToStore } from '../src/store/knowledge-repository.js';
import { describePostgresUrl } from '../src/store/postgres/postgres-dialect.js';
import { openStore, type Store } from '../src/store/store.js';
import { now } from './clock.js';
import { cleanUpOnExit, removeQuietly } from './exit-cleanup.js';
import { measureLevel, type FirstSpeakLevel, type TalkOptions } from './first-speak.js';
import { benchQuestions, VOCABULARY_NOTE, writeKnowledgeFolder, type KnowledgeFolderFigures } from './knowledge-documents.js';
import { BenchFixture, type FixtureOptions } from './llm-fixture.js';
import { idOf } from './replies.js';
import { summarize, type Summary } from './stats.js';
import { inPlace, postgresPlaces, sqlitePlace, STORE_NAMES, type PlaceMaker, type StoreName, type StorePlace } from './store-bench.js';
import { warmUp } from './warm-up.js';

/** The issue's aim: indexing this many passages never holds the event loop longer than STALL_LIMIT_MS. */
export const STALL_AIM_PASSAGES = 10_000;
export const STALL_LIMIT_MS = 50;
/** Stalls of the event loop at least this long are listed with what the index was doing. */
const LONG_STALL_MS = 20;
/** KNOWLEDGE_PASSAGES' default: passages given to a turn. */
const PASSAGES_PER_TURN = 3;

export interface KnowledgeBenchOptions {
  postgresAdminUrl: string;
  /** Passages of each folder the searches are timed on. */
  sizes: readonly number[];
  /** Questions timed per folder and store. */
  questions: number;
  /** Questions asked first, untimed. */
  warmUpQuestions: number;
  seed: number;
  progress: (message: string) => void;
}

export interface KnowledgeFirstSpeakOptions {
  /** Talking calls per level. */
  levels: readonly number[];
  turnsFor: (calls: number) => number;
  warmUp: { calls: number; turns: number };
  talk: Omit<TalkOptions, 'calls' | 'turns' | 'idPrefix' | 'words'>;
  fixture: Omit<FixtureOptions, 'env' | 'storedCalls'>;
  progress: (message: string) => void;
}

/** The event loop of the thread indexing, while it indexed. */
export interface StallFigures {
  /** The longest the loop was held: how late a 1 ms timer fired, at worst. */
  maxMs: number;
  p99Ms: number;
  /**
   * The longest stall less the time the thread waited meanwhile for a core (Linux's schedstat): what
   * the thread's own work (or a synchronous wait) held it, other threads' and programs' turns on the
   * cores left out. Undefined where the thread's schedstat cannot be read.
   */
  maxOwnMs: number | undefined;
  /** Stalls of LONG_STALL_MS or more, and of more than STALL_LIMIT_MS. */
  over20: number;
  over50: number;
  /** The garbage collector's longest pause on this thread. */
  gcMaxMs: number;
  /**
   * The long stalls, longest first (at most five): how long, of it waiting for a core, when (seconds
   * into the indexing) and what the index was doing then.
   */
  longest: { ms: number; waitedMs: number | undefined; atS: number; during: string }[];
}

export interface RetrievalRun {
  /** Passages and files in the index afterwards. */
  passages: number;
  files: number;
  indexSeconds: number;
  indexing: StallFigures;
  /** base.find(question, undefined), from this thread. */
  findMs: Summary;
  questions: number;
  /** Questions that found at least one passage. */
  answered: number;
  /** Passages given per question, on average. */
  passagesPerQuestion: number;
  /** Searches that failed (the base logs them and finds nothing): any makes the figures meaningless. */
  failed: number;
}

export interface KnowledgeStoreFigures {
  store: StoreName;
  where: string;
  skipped?: string;
  runs: RetrievalRun[];
}

export interface KnowledgeFirstSpeakLevel {
  calls: number;
  turns: number;
  off: FirstSpeakLevel;
  on: FirstSpeakLevel;
}

export interface KnowledgeFirstSpeak {
  note: string;
  /** Passages in the folder the 'on' Hotline indexed. */
  passages: number;
  /** Hotline's start, from the thread's spawn to listening: with the folder it indexes it first. */
  startSeconds: { off: number; on: number };
  levels: KnowledgeFirstSpeakLevel[];
  callersNice: number | undefined;
}

export interface KnowledgeBenchResult {
  note: string;
  vocabulary: string;
  folders: Omit<KnowledgeFolderFigures, 'dir'>[];
  stores: KnowledgeStoreFigures[];
  firstSpeak?: KnowledgeFirstSpeak;
}

export const KNOWLEDGE_NOTE =
  'A synthetic knowledge folder of a chain of coffee machine shops (Markdown, a fifth German), indexed through ' +
  "KnowledgeBase.open into a fresh store as Hotline wires it (on SQLite the searches read a connection of their own); " +
  "then base.find(question) as a turn calls it, timed from the bench's thread after a warm-up, over callers' questions " +
  "(three in four about the shop). Indexing: the folder's time, and the event loop of the thread indexing it (a 1 ms " +
  "timer's lateness; Hotline's own thread in production).";

export const KNOWLEDGE_FIRST_SPEAK_NOTE =
  'First-speak overhead as in section 1, two Hotlines side by side (a fixture each, warmed up): KNOWLEDGE=false, and ' +
  'KNOWLEDGE=true with KNOWLEDGE_DIR the 10,000-passage folder, indexed at its start; each level measured on one, then ' +
  "on the other, the callers asking the shop's questions. words → 1st token = the caller's words sent → the LLM's " +
  "first token written: the turn's lookup, and its longer request, add to it (the LLM's own 300 ms included).";

/** Generated folders, one per size, in a temp folder removed by remove(). */
export class KnowledgeFolders {
  private constructor(
    private readonly root: string,
    readonly folders: readonly KnowledgeFolderFigures[],
    private readonly forget: () => void,
  ) {}

  static async write(sizes: readonly number[], seed: number, progress: (message: string) => void): Promise<KnowledgeFolders> {
    const root = await mkdtemp(path.join(tmpdir(), 'hotline-bench-knowledge-'));
    const forget = cleanUpOnExit(() => removeQuietly(root));
    try {
      const folders: KnowledgeFolderFigures[] = [];
      for (const size of sizes) {
        progress(`knowledge: writing a folder of ${size.toLocaleString('en-US')} passages`);
        folders.push(await writeKnowledgeFolder(path.join(root, String(size)), size, seed));
      }
      return new KnowledgeFolders(root, folders, forget);
    } catch (error) {
      await rm(root, { recursive: true, force: true });
      forget();
      throw error;
    }
  }

  /** The folder of `passages` passages, written now if it was not. */
  async of(passages: number, seed: number): Promise<KnowledgeFolderFigures> {
    const known = this.folders.find((f) => f.passages === passages);
    if (known) return known;
    const written = await writeKnowledgeFolder(path.join(this.root, String(passages)), passages, seed);
    (this.folders as KnowledgeFolderFigures[]).push(written);
    return written;
  }

  async remove(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
    this.forget();
  }
}

/** What the writer was doing when: each call of the index's writes, timed on this thread's clock. */
interface Operation {
  readonly what: string;
  readonly start: number;
  end: number;
}

/** The index's writer as KnowledgeBase uses it, each call's time span noted. */
class TimedRepository extends KnowledgeRepository {
  readonly operations: Operation[] = [];

  private async timed<T>(what: string, work: () => Promise<T>): Promise<T> {
    const operation: Operation = { what, start: performance.now(), end: Number.NaN };
    this.operations.push(operation);
    try {
      return await work();
    } finally {
      operation.end = performance.now();
    }
  }

  override sources(): ReturnType<KnowledgeRepository['sources']> {
    return this.timed('reading the list of sources', () => super.sources());
  }

  override replaceSource(
    source: Parameters<KnowledgeRepository['replaceSource']>[0],
    passages: readonly PassageToStore[],
    at: Date,
  ): Promise<boolean> {
    return this.timed(`writing ${source.path} (${passages.length} passages)`, () => super.replaceSource(source, passages, at));
  }
}

/** The main thread's time on a core and waiting for one, in ns (Linux's schedstat); undefined elsewhere. */
class ThreadSchedule {
  private readonly buffer = Buffer.alloc(128);

  private constructor(private readonly fd: number) {}

  static open(): ThreadSchedule | undefined {
    try {
      // The main thread's id is the process's: pread on a file kept open costs a few µs a tick.
      return new ThreadSchedule(openSync(`/proc/self/task/${process.pid}/schedstat`, 'r'));
    } catch {
      return undefined;
    }
  }

  /** The thread's time waiting for a core so far, in ms. */
  waitedMs(): number {
    const length = readSync(this.fd, this.buffer, 0, this.buffer.length, 0);
    const [, waiting] = this.buffer.toString('latin1', 0, length).split(' ');
    return Number(waiting) / 1e6;
  }

  close(): void {
    closeSync(this.fd);
  }
}

interface Stall {
  readonly start: number;
  readonly end: number;
  readonly waitedMs: number | undefined;
}

/**
 * The event loop's lateness, by a 1 ms timer: each firing later than due is a stall of the loop
 * (JavaScript running, a message being deserialised, the garbage collector, or the thread waiting
 * for a core). Every lateness is kept, the long ones with their time and how much of them the
 * thread spent waiting for a core, and the collector's pauses beside them.
 */
class StallProbe {
  private readonly lateness: number[] = [];
  private readonly long: Stall[] = [];
  private readonly gc: { start: number; end: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private observer: PerformanceObserver | undefined;
  private readonly schedule = ThreadSchedule.open();
  private started = 0;
  private last = 0;
  private lastWaited = 0;
  private maxOwn = 0;

  start(): void {
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.gc.push({ start: entry.startTime, end: entry.startTime + entry.duration });
    });
    this.observer.observe({ entryTypes: ['gc'] });
    this.started = performance.now();
    this.last = this.started;
    this.lastWaited = this.schedule?.waitedMs() ?? 0;
    this.timer = setInterval(() => {
      const at = performance.now();
      const late = Math.max(0, at - this.last - 1);
      this.last = at;
      const waitedNow = this.schedule?.waitedMs();
      const waited = waitedNow === undefined ? undefined : waitedNow - this.lastWaited;
      this.lastWaited = waitedNow ?? 0;
      this.lateness.push(late);
      this.maxOwn = Math.max(this.maxOwn, late - (waited ?? 0));
      if (late >= LONG_STALL_MS) this.long.push({ start: at - late, end: at, waitedMs: waited });
    }, 1);
  }

  stop(operations: readonly Operation[]): StallFigures {
    clearInterval(this.timer);
    this.schedule?.close();
    for (const entry of this.observer?.takeRecords() ?? []) this.gc.push({ start: entry.startTime, end: entry.startTime + entry.duration });
    this.observer?.disconnect();
    const figures = summarize(this.lateness);
    const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }): boolean => a.start < b.end && b.start < a.end;
    const longest = [...this.long]
      .sort((a, b) => b.end - b.start - (a.end - a.start))
      .slice(0, 5)
      .map((stall) => {
        const writes = operations.filter((op) => overlaps(stall, { start: op.start, end: Number.isNaN(op.end) ? Infinity : op.end }));
        const gc = this.gc.filter((pause) => overlaps(stall, pause)).reduce((sum, pause) => sum + (pause.end - pause.start), 0);
        const during =
          writes.length > 0
            ? writes.map((op) => op.what).join(', ')
            : "between writes (the documents' thread's answer arriving, the folder listed, the next file asked for)";
        return {
          ms: stall.end - stall.start,
          waitedMs: stall.waitedMs,
          atS: (stall.start - this.started) / 1000,
          during: `${during}${gc > 0 ? `; GC ${gc.toFixed(1)} ms of it` : ''}`,
        };
      });
    return {
      maxMs: figures.max,
      p99Ms: figures.p99,
      maxOwnMs: this.schedule ? Math.max(0, this.maxOwn) : undefined,
      over20: this.lateness.filter((ms) => ms >= LONG_STALL_MS).length,
      over50: this.lateness.filter((ms) => ms > STALL_LIMIT_MS).length,
      gcMaxMs: Math.max(0, ...this.gc.map((pause) => pause.end - pause.start)),
      longest,
    };
  }
}

/** A logger that says nothing and counts what the knowledge base warned of (a failed search is one). */
function countingLogger(): { logger: Logger; warnings: () => number } {
  let warnings = 0;
  const logger = pino({ level: 'warn' }, { write: () => void (warnings += 1) });
  return { logger, warnings: () => warnings };
}

/** Indexes `folder` into the store at `place` and times the searches. */
export async function measureRetrieval(place: StorePlace, folder: KnowledgeFolderFigures, questions: readonly string[], warmUpQuestions: readonly string[]): Promise<RetrievalRun> {
  const { logger, warnings } = countingLogger();
  const stores: Store[] = [];
  let base: KnowledgeBase | undefined;
  try {
    const store = await openStore(place.location, logger);
    stores.push(store);
    const writer = new TimedRepository(store);
    let searcher: KnowledgeRepository = writer;
    // As features/knowledge.ts: on SQLite the searches read a connection of their own.
    if (store.dialect === 'sqlite') {
      const reading = await openStore({ databaseFile: place.location.databaseFile }, logger, { migrate: false, claim: false });
      stores.push(reading);
      searcher = new KnowledgeRepository(reading);
    }
    const probe = new StallProbe();
    probe.start();
    const started = now();
    let indexing: StallFigures;
    try {
      base = await KnowledgeBase.open(writer, searcher, { dir: folder.dir, language: 'en', passages: PASSAGES_PER_TURN, watch: false }, logger);
    } finally {
      // Stopped either way: a failed start must not leave a 1 ms timer running.
      indexing = probe.stop(writer.operations);
    }
    const indexSeconds = (now() - started) / 1000;
    const status = await base.status();

    for (const question of warmUpQuestions) await base.find(question, undefined);
    const failedBefore = warnings();
    const times: number[] = [];
    let answered = 0;
    let given = 0;
    for (const question of questions) {
      const asked = performance.now();
      const finding = await base.find(question, undefined);
      times.push(performance.now() - asked);
      if (finding.passages.length > 0) answered += 1;
      given += finding.passages.length;
    }
    return {
      passages: status.passages,
      files: status.sources.length,
      indexSeconds,
      indexing,
      findMs: summarize(times),
      questions: questions.length,
      answered,
      passagesPerQuestion: given / Math.max(1, questions.length),
      failed: warnings() - failedBefore,
    };
  } finally {
    await base?.close();
    for (const store of stores.reverse()) await store.close();
  }
}

/** Writes the folders and measures indexing and retrieval on each store. */
export async function measureKnowledgeRetrieval(
  options: KnowledgeBenchOptions,
  folders: KnowledgeFolders,
): Promise<Omit<KnowledgeBenchResult, 'firstSpeak'>> {
  const postgres = await postgresPlaces(options.postgresAdminUrl);
  const makers: Record<StoreName, PlaceMaker | { skipped: string }> = { sqlite: sqlitePlace, postgres };
  const questions = benchQuestions(options.questions, options.seed);
  // Other questions than the timed ones: the timed searches are not the first of their words.
  const warmUpQuestions = benchQuestions(options.warmUpQuestions, options.seed + 1);
  const stores: KnowledgeStoreFigures[] = [];
  for (const store of STORE_NAMES) {
    const make = makers[store];
    const where = store === 'sqlite' ? 'a temp file' : describePostgresUrl(options.postgresAdminUrl);
    if (typeof make !== 'function') {
      options.progress(`knowledge: PostgreSQL ${make.skipped}`);
      stores.push({ store, where, skipped: make.skipped, runs: [] });
      continue;
    }
    const runs: RetrievalRun[] = [];
    for (const size of options.sizes) {
      const folder = await folders.of(size, options.seed);
      options.progress(`knowledge: ${store}, indexing ${size.toLocaleString('en-US')} passages, then ${questions.length} searches`);
      runs.push(await inPlace(make, (place) => measureRetrieval(place, folder, questions, warmUpQuestions)));
    }
    stores.push({ store, where, runs });
  }
  return {
    note: KNOWLEDGE_NOTE,
    vocabulary: VOCABULARY_NOTE,
    folders: folders.folders.map(({ dir: _dir, ...figures }) => figures),
    stores,
  };
}

/**
 * First-speak overhead with the knowledge base off and on (the `folder` indexed at the start), two
 * Hotlines side by side, each level measured on one and right after on the other.
 */
export async function measureFirstSpeakWithKnowledge(
  options: KnowledgeFirstSpeakOptions,
  folder: KnowledgeFolderFigures,
  seed: number,
): Promise<KnowledgeFirstSpeak> {
  const questions = benchQuestions(200, seed + 2);
  // The question follows the reply's id: both Hotlines are asked the same words turn for turn.
  const words = (tag: string): string => `Question ${tag}: ${questions[idOf(tag) % questions.length]}`;
  const startSeconds = { off: 0, on: 0 };
  const start = async (which: 'off' | 'on', env: Record<string, string>): Promise<BenchFixture> => {
    options.progress(`knowledge: starting Hotline with KNOWLEDGE=${which === 'on' ? `true (${folder.passages.toLocaleString('en-US')} passages to index)` : 'false'}`);
    const started = now();
    const fixture = await BenchFixture.start({ ...options.fixture, env });
    startSeconds[which] = (now() - started) / 1000;
    return fixture;
  };
  const fixtures: BenchFixture[] = [];
  try {
    const off = await start('off', { KNOWLEDGE: 'false' });
    fixtures.push(off);
    const on = await start('on', { KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder.dir });
    fixtures.push(on);
    for (const [name, fixture] of [['off', off], ['on', on]] as const) {
      options.progress(`knowledge: Hotline with the knowledge base ${name}, warming up`);
      await warmUp(fixture, { ...options.warmUp, seed: options.talk.seed, words });
    }
    const levels: KnowledgeFirstSpeakLevel[] = [];
    for (const calls of options.levels) {
      const turns = options.turnsFor(calls);
      const talk = { ...options.talk, calls, turns, words };
      options.progress(`knowledge: first-speak, knowledge base off: ${calls} calls × ${turns} turns`);
      const offLevel = await measureLevel(off, { ...talk, idPrefix: `knowledge-off-${calls}` });
      options.progress(`knowledge: first-speak, knowledge base on: ${calls} calls × ${turns} turns`);
      const onLevel = await measureLevel(on, { ...talk, idPrefix: `knowledge-on-${calls}` });
      levels.push({ calls, turns, off: offLevel, on: onLevel });
    }
    return { note: KNOWLEDGE_FIRST_SPEAK_NOTE, passages: folder.passages, startSeconds, levels, callersNice: on.callersNice };
  } finally {
    for (const fixture of fixtures) await fixture.close();
  }
}
