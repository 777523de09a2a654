/**
 * Capacity: memory per idle call, event-loop delay under talking calls, the
 * largest number of talking calls whose first-speak overhead p99 stays under
 * the limit, and the target case of a few talking calls among many open ones.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { now, sleep } from './clock.js';
import { measureLevel, type FirstSpeakLevel, type TalkOptions } from './first-speak.js';
import { forcedGc, settleHeap } from './gc.js';
import type { HeapFigures } from './hotline-worker.js';
import type { BenchFixture } from './llm-fixture.js';
import { openCallers } from './ws-callers.js';

export interface IdleCallers {
  readonly open: number;
  end(count: number): Promise<number>;
  close(): Promise<void>;
}

/** Forks idle-callers with the loader this process runs under (tsx), so the .ts child needs no build. */
export async function spawnIdleCallers(wsUrl: string, count: number, perSecond: number): Promise<IdleCallers> {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const script = fileURLToPath(new URL(`./idle-callers.${extension}`, import.meta.url));
  const env = { ...process.env };
  // A profiled bench must not make the child write a profile of its own.
  if (env.NODE_OPTIONS) env.NODE_OPTIONS = env.NODE_OPTIONS.replace(/--cpu-prof\S*/g, '').trim();
  const child: ChildProcess = fork(script, [wsUrl, String(count), String(perSecond)], {
    execArgv: process.execArgv.filter((arg) => !arg.startsWith('--cpu-prof')),
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

export interface CapacityOptions {
  idleCalls: number;
  openPerSecond: number;
  talk: Omit<TalkOptions, 'calls' | 'idPrefix'>;
  /** Talking calls among the idle ones for the target case. */
  targetTalking: number;
  /** Talking calls while the event-loop delay is measured. */
  eventLoopCalls: number;
  ladderStart: number;
  ladderLimitMs: number;
  ladderBudgetS: number;
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
  timedOut: number;
  pass: boolean;
  durationS: number;
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
 * Doubles the talking calls until the p99 passes the limit or the time budget
 * would be exceeded; if the first step already fails, halves instead until one passes.
 */
export async function climbLadder(
  fixture: BenchFixture,
  options: CapacityOptions,
): Promise<{ ladder: LadderStep[]; maxTalkingUnderLimit: number; ladderStop: string }> {
  const ladder: LadderStep[] = [];
  const started = now();
  let calls = options.ladderStart;
  let maxPassing = 0;
  let direction: 'up' | 'down' | undefined;
  let stop = `time budget of ${options.ladderBudgetS} s`;
  for (;;) {
    const elapsedS = (now() - started) / 1000;
    const last = ladder.at(-1);
    // A step with twice the calls takes at least as long as the last one and opens twice as many calls.
    const turnS = (2 * options.talk.thinkMs) / 1000 + 2;
    const estimateS = calls / options.openPerSecond + (last ? last.durationS * 1.5 : options.talk.turns * turnS);
    if (elapsedS + estimateS > options.ladderBudgetS) break;
    const stepStarted = now();
    const level = await measureLevel(fixture, { ...options.talk, calls, idPrefix: `ladder${calls}` });
    const pass = level.overheadMs.p99 < options.ladderLimitMs && level.timedOut === 0;
    ladder.push({
      calls,
      p99Ms: level.overheadMs.p99,
      p50Ms: level.overheadMs.p50,
      eventLoopP99Ms: level.eventLoop.p99Ms,
      timedOut: level.timedOut,
      pass,
      durationS: (now() - stepStarted) / 1000,
    });
    direction ??= pass ? 'up' : 'down';
    if (pass) maxPassing = Math.max(maxPassing, calls);
    if (direction === 'up' && !pass) {
      stop = `p99 ≥ ${options.ladderLimitMs} ms at ${calls} calls`;
      break;
    }
    if (direction === 'down' && pass) {
      stop = `passed at ${calls} calls after failing at ${calls * 2}`;
      break;
    }
    if (direction === 'down' && calls <= 10) {
      stop = `p99 ≥ ${options.ladderLimitMs} ms even at ${calls} calls`;
      break;
    }
    calls = direction === 'up' ? calls * 2 : Math.max(1, Math.floor(calls / 2));
  }
  return { ladder, maxTalkingUnderLimit: maxPassing, ladderStop: stop };
}
