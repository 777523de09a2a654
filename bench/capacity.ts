/**
 * Capacity: memory per idle call, event-loop delay under talking calls, the
 * largest number of talking calls whose first-speak overhead p99 stays under
 * the limit, and the target case of a few talking calls among many open ones.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { now, sleep } from './clock.js';
import { cpuMark, cpuSince, type CpuFigures } from './cpu.js';
import { measureLevel, type FirstSpeakLevel, type TalkOptions } from './first-speak.js';
import { forcedGc, settleHeap } from './gc.js';
import type { HeapFigures } from './hotline-probes.js';
import type { BenchFixture } from './llm-fixture.js';
import { openCallers } from './ws-callers.js';

export interface IdleCallers {
  readonly open: number;
  end(count: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * This process's node flags without a CPU profile's; from source, with tsx's loader, which a process
 * run by tsx passes on but one run by vitest (a test of the bench) does not have among its flags.
 */
function childExecArgv(typescript: boolean): string[] {
  const flags = process.execArgv.filter((arg) => !arg.startsWith('--cpu-prof'));
  return typescript && !flags.some((arg) => arg.includes('tsx')) ? [...flags, '--import', import.meta.resolve('tsx')] : flags;
}

/** Forks idle-callers with the loader this process runs under (tsx), so the .ts child needs no build. */
export async function spawnIdleCallers(wsUrl: string, count: number, perSecond: number): Promise<IdleCallers> {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const script = fileURLToPath(new URL(`./idle-callers.${extension}`, import.meta.url));
  const env = { ...process.env };
  // A profiled bench must not make the child write a profile of its own.
  if (env.NODE_OPTIONS) env.NODE_OPTIONS = env.NODE_OPTIONS.replace(/--cpu-prof\S*/g, '').trim();
  const child: ChildProcess = fork(script, [wsUrl, String(count), String(perSecond)], {
    execArgv: childExecArgv(extension === 'ts'),
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = (): Promise<{ type: string; open?: number; message?: string }> =>
    new Promise((resolve, reject) => {
      const onExit = (): void => reject(new Error('idle callers exited early'));
      child.once('exit', onExit);
      child.once('message', (message: { type: string; open?: number; message?: string }) => {
        child.off('exit', onExit);
        resolve(message);
      });
    });
  const ready = await next();
  if (ready.type !== 'ready') throw new Error(`idle callers failed: ${ready.message ?? ready.type}`);
  let open = ready.open ?? 0;
  return {
    get open() {
      return open;
    },
    async end(n: number) {
      const answer = next();
      child.send({ type: 'end', count: n });
      open = (await answer).open ?? open;
      return open;
    },
    async close() {
      if (child.connected) child.disconnect();
      await Promise.race([exited, sleep(5000).then(() => child.kill())]);
    },
  };
}

export interface MemoryResult {
  idleCalls: number;
  rssKbPerCall: number;
  heapKbPerCall: number;
  externalKbPerCall: number;
  /** Whether node ran with --expose-gc; otherwise gc was obtained through v8 flags at run time. */
  gcExposed: boolean;
  openSeconds: number;
}

/** The ladder of talking calls: how it climbs, and what passes. */
export interface LadderOptions {
  openPerSecond: number;
  talk: Omit<TalkOptions, 'calls' | 'idPrefix'>;
  ladderStart: number;
  ladderLimitMs: number;
  ladderBudgetS: number;
  /**
   * Steps that halve the gap between the largest passing and the smallest failing count once the
   * doubling has found both (default 0): a doubling alone tells 400 from 800, not from 600.
   */
  ladderRefine?: number;
  /**
   * A step during which other programs kept more than this many cores busy (CpuFigures.otherCores)
   * is marked disturbed and measured again, up to DISTURBED_RETRIES times (default: never).
   */
  ladderDisturbedOverCores?: number;
}

/** Measurements of one count that the ladder lets other programs' work spoil before it takes the last one. */
export const DISTURBED_RETRIES = 2;

export interface CapacityOptions extends LadderOptions {
  idleCalls: number;
  /** Talking calls among the idle ones for the target case. */
  targetTalking: number;
  /** Talking calls while the event-loop delay is measured. */
  eventLoopCalls: number;
}

/**
 * RSS growth of this process over `idleCalls` greeted calls held by a child,
 * so the growth is Hotline's side only; the heap figures are those of
 * Hotline's thread.
 */
export async function measureMemory(fixture: BenchFixture, options: CapacityOptions): Promise<{ memory: MemoryResult; idle: IdleCallers }> {
  const { gc } = forcedGc();
  // Both threads' garbage is collected before each reading, so neither adds noise to the process's RSS.
  const settle = async (): Promise<HeapFigures> => {
    await settleHeap(gc);
    return fixture.hotline.settleHeap();
  };
  // Touch every code path of opening and ending a call first, so lazily built state is not counted per call.
  const warm = await openCallers(fixture.hotline.wsUrl, 50, 500, 'memwarm', { msPerChar: 1, onSpeak: () => undefined });
  await Promise.all(warm.map((caller) => caller.end()));
  await sleep(200);
  const before = await settle();
  const started = now();
  const idle = await spawnIdleCallers(fixture.hotline.wsUrl, options.idleCalls, options.openPerSecond);
  const openSeconds = (now() - started) / 1000;
  await sleep(500);
  const after = await settle();
  const perCall = (bytes: number): number => bytes / idle.open / 1024;
  return {
    memory: {
      idleCalls: idle.open,
      rssKbPerCall: perCall(after.rss - before.rss),
      heapKbPerCall: perCall(after.heapUsed - before.heapUsed),
      externalKbPerCall: perCall(after.external - before.external),
      gcExposed: after.gcExposed,
      openSeconds,
    },
    idle,
  };
}

export interface LadderStep {
  calls: number;
  p99Ms: number;
  p50Ms: number;
  eventLoopP99Ms: number;
  /** Event-loop utilisation of Hotline's thread (the mean of its processes' with WORKERS), 0–1. */
  busy: number;
  /** Hotline's longest garbage-collection pause (of any of its processes). */
  gcPauseMaxMs?: number | undefined;
  /** Between two tokens the LLM server wrote: a mean above the nominal gap says the load offered fell short of the nominal one. */
  llmTokenGapMs: { mean: number; p99: number };
  /** How busy the whole machine was, and the bench's own CPU (see cpu.ts). */
  cpu: CpuFigures;
  timedOut: number;
  pass: boolean;
  durationS: number;
  /** Other programs competed for the cores during the step (see ladderDisturbedOverCores): measured again, not counted. */
  disturbed?: boolean;
}

export interface CapacityResult {
  memory: MemoryResult | undefined;
  /** First-speak overhead of `targetTalking` calls talking while the rest of `idleCalls` stay open. */
  target: FirstSpeakLevel | undefined;
  targetOpen: number;
  eventLoop: FirstSpeakLevel | undefined;
  ladder: LadderStep[];
  /** Largest step that passed; 0 if none did. */
  maxTalkingUnderLimit: number;
  /** Why the ladder stopped. */
  ladderStop: string;
}

/** The target case, measured on the idle calls the memory measurement left open. */
export async function measureTarget(
  fixture: BenchFixture,
  idle: IdleCallers,
  options: CapacityOptions,
): Promise<{ level: FirstSpeakLevel; open: number }> {
  const keepIdle = Math.max(0, options.idleCalls - options.targetTalking);
  if (idle.open > keepIdle) await idle.end(idle.open - keepIdle);
  const level = await measureLevel(fixture, { ...options.talk, calls: options.targetTalking, idPrefix: 'target' });
  return { level, open: idle.open + options.targetTalking };
}

export async function measureEventLoop(fixture: BenchFixture, options: CapacityOptions): Promise<FirstSpeakLevel> {
  return measureLevel(fixture, { ...options.talk, calls: options.eventLoopCalls, idPrefix: 'eld' });
}

/**
 * Which count of talking calls the ladder tries next: doubles from the start until a step fails
 * (or, if the first already fails, halves until one passes); then, `refine` times, halves the gap
 * between the largest count that passed and the smallest that failed. Apart from the measuring,
 * so that the climb can be checked without a Hotline.
 */
export class LadderSearch {
  maxPassing = 0;
  minFailing = Number.POSITIVE_INFINITY;
  private direction: 'up' | 'down' | undefined;
  private refining = false;
  private refined = 0;
  private calls: number | undefined;
  private reason: string | undefined;

  constructor(
    start: number,
    private readonly limitMs: number,
    private readonly refine = 0,
  ) {
    this.calls = start;
  }

  /** The next count to try; undefined once the search is over. */
  get next(): number | undefined {
    return this.calls;
  }

  /** Why the search stopped, or why it would stop now (`budget`: the time ran out before `next`). */
  stop(budget?: string): string {
    if (this.reason === undefined) return budget ?? 'not run';
    const refined = this.refined > 0 ? `; refined in ${this.refined} steps: ${this.maxPassing} passed, ${this.minFailing} did not` : '';
    const cut = budget !== undefined && this.calls !== undefined ? '; the time budget ended the refining' : '';
    return `${this.reason}${refined}${cut}`;
  }

  record(calls: number, pass: boolean): void {
    if (pass) this.maxPassing = Math.max(this.maxPassing, calls);
    else this.minFailing = Math.min(this.minFailing, calls);
    if (this.refining) {
      this.refined++;
      this.calls = this.middle();
      return;
    }
    this.direction ??= pass ? 'up' : 'down';
    if (this.direction === 'up' && !pass) this.reason = `p99 ≥ ${this.limitMs} ms at ${calls} calls`;
    else if (this.direction === 'down' && pass) this.reason = `passed at ${calls} calls after failing at ${calls * 2}`;
    else if (this.direction === 'down' && calls <= 10) {
      this.reason = `p99 ≥ ${this.limitMs} ms even at ${calls} calls`;
      this.calls = undefined;
      return;
    }
    if (this.reason === undefined) {
      this.calls = this.direction === 'up' ? calls * 2 : Math.max(1, Math.floor(calls / 2));
      return;
    }
    this.refining = true;
    this.calls = this.middle();
  }

  private middle(): number | undefined {
    if (this.refined >= this.refine || this.maxPassing === 0 || !Number.isFinite(this.minFailing)) return undefined;
    // Round numbers read better and tell no less: the p99 of one step varies more than 10 calls make.
    const middle = Math.round((this.maxPassing + this.minFailing) / 20) * 10;
    return middle > this.maxPassing && middle < this.minFailing ? middle : undefined;
  }
}

/**
 * Climbs the ladder (LadderSearch) until the search is over or the time budget would be exceeded.
 */
export async function climbLadder(
  fixture: BenchFixture,
  options: LadderOptions,
): Promise<{ ladder: LadderStep[]; maxTalkingUnderLimit: number; ladderStop: string }> {
  const ladder: LadderStep[] = [];
  const started = now();
  const search = new LadderSearch(options.ladderStart, options.ladderLimitMs, options.ladderRefine);
  const fits = (calls: number): boolean => {
    const elapsedS = (now() - started) / 1000;
    const last = ladder.at(-1);
    // A step with twice the calls takes at least as long as the last one and opens twice as many calls.
    const turnS = (2 * options.talk.thinkMs) / 1000 + 2;
    const estimateS = calls / options.openPerSecond + (last ? last.durationS * 1.5 : options.talk.turns * turnS);
    return elapsedS + estimateS <= options.ladderBudgetS;
  };
  let budget: string | undefined;
  let retries = 0;
  for (let calls = search.next; calls !== undefined; calls = search.next) {
    if (!fits(calls)) {
      budget = `time budget of ${options.ladderBudgetS} s`;
      break;
    }
    const stepStarted = now();
    const cpu = cpuMark(fixture.hotline.pids);
    const level = await measureLevel(fixture, { ...options.talk, calls, idPrefix: `ladder${calls}` });
    const pass = level.overheadMs.p99 < options.ladderLimitMs && level.timedOut === 0;
    const figures = cpuSince(cpu);
    const disturbed =
      options.ladderDisturbedOverCores !== undefined && (figures.otherCores ?? 0) > options.ladderDisturbedOverCores && retries < DISTURBED_RETRIES;
    ladder.push({
      calls,
      p99Ms: level.overheadMs.p99,
      p50Ms: level.overheadMs.p50,
      eventLoopP99Ms: level.eventLoop.p99Ms,
      busy: level.eventLoop.utilization,
      gcPauseMaxMs: level.eventLoop.gcPauseMaxMs,
      llmTokenGapMs: { mean: level.llmTokenGapMs.mean, p99: level.llmTokenGapMs.p99 },
      cpu: figures,
      timedOut: level.timedOut,
      pass,
      durationS: (now() - stepStarted) / 1000,
      ...(disturbed ? { disturbed } : {}),
    });
    if (disturbed) {
      retries++;
      continue;
    }
    retries = 0;
    search.record(calls, pass);
  }
  return { ladder, maxTalkingUnderLimit: search.maxPassing, ladderStop: search.stop(budget) };
}
