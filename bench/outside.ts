/**
 * The outside phase (issue 40): the caller's wait as the production process shows it. Hotline is
 * started as production starts it, `node dist/main.js` (built first, SQLite, NODE_ENV=production),
 * the scripted model runs in a process of its own and the floor (raw-reader.ts) in another, and
 * the callers are this process: every figure is taken where a process other than Hotline's sees
 * it. First-speak is measured from the moment the model's process wrote the token that completed
 * a sentence to the moment the speak reached the caller's process (the same monotonic clock in
 * every process, see clock.ts), for Hotline and for the floor in turn at each level, on the same
 * model server; the probe inside Hotline still says when each speak left it, as a microscope.
 * Barge-in is measured from the caller's sending it to the model's process seeing its stream
 * close. The memory per idle greeted call is the production process's own RSS.
 *
 * The in-thread phases stay: they see inside, and this phase sees what a caller pays.
 */
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { runBargeIns, type BargeInResult } from './barge-in.js';
import { measureMemory, type MemoryResult } from './capacity.js';
import { measureLevel, type FloorLevel } from './first-speak.js';
import { prepareProduct, startProductionFixture, type ProductionPhaseOptions } from './production-fixture.js';
import { warmUp } from './warm-up.js';

export interface OutsideOptions extends ProductionPhaseOptions {
  /** Calls talking at once, one level each, Hotline then the floor. */
  levels: readonly number[];
  turnsFor: (calls: number) => number;
  /** The interruptions: a few calls first (the figure without load), then many. */
  bargeIns: { low: BargeInLoad; high: BargeInLoad };
  tokenDelayMs: number;
  /** Greeted idle calls for the memory figure (0: not measured). */
  idleCalls: number;
}

export interface BargeInLoad {
  calls: number;
  trialsPerCall: number;
}

export interface OutsideLevel {
  calls: number;
  turns: number;
  hotline: FloorLevel;
  floor: FloorLevel | undefined;
}

export interface OutsideResult {
  note: string;
  /** What ran Hotline: node dist/main.js, or a test's build of it. */
  hotlineRunsAs: string;
  hotlineNice: number | undefined;
  callersNice: number | undefined;
  llmNice: number | undefined;
  levels: OutsideLevel[];
  bargeInLowLoad: BargeInResult | undefined;
  bargeIn: BargeInResult | undefined;
  memory: MemoryResult | undefined;
}

export function outsideNote(result: Pick<OutsideResult, 'hotlineRunsAs' | 'hotlineNice' | 'callersNice' | 'llmNice'>): string {
  return (
    `Hotline as production starts it (${result.hotlineRunsAs}, NODE_ENV=production, SQLite, nice ${result.hotlineNice ?? '?'}), ` +
    `the scripted model in a process of its own ahead of it (nice ${result.llmNice ?? 'unchanged'}), the floor in another at Hotline's priority, ` +
    `and the callers in the bench's process ahead of it too (nice ${result.callersNice ?? 'unchanged'}), as the voice service's hosts would be, ` +
    `on the same ${availableParallelism()} cores. ` +
    'Outside = the model process wrote the token that completed a sentence → the speak reached the callers\' process; ' +
    'inside = → the speak left Hotline (its probe). Barge-in: the caller sent it → the model process saw its stream close.'
  );
}

export async function measureOutside(options: OutsideOptions): Promise<OutsideResult> {
  const { built } = options;
  await prepareProduct(options, 'outside');
  const fixture = await startProductionFixture({ fixture: options.fixture, env: {}, floor: options.levels.length > 0, built });
  try {
    let memory: MemoryResult | undefined;
    if (options.idleCalls > 0) {
      // First, on a heap nothing else has grown yet, as the capacity phase measures it.
      options.progress(`outside: ${options.idleCalls} greeted idle calls for the memory per call`);
      const measured = await measureMemory(fixture, {
        idleCalls: options.idleCalls,
        targetTalking: 0,
        eventLoopCalls: 0,
        openPerSecond: options.talk.openPerSecond,
        talk: { ...options.talk, turns: 1 },
        ladderStart: 0,
        ladderLimitMs: 0,
        ladderBudgetS: 0,
      });
      memory = measured.memory;
      await measured.idle.close();
    }
    options.progress('outside: warming up Hotline and the floor');
    await warmUp(fixture, { ...options.warmUp, seed: options.talk.seed });
    const levels: OutsideLevel[] = [];
    for (const calls of options.levels) {
      const turns = options.turnsFor(calls);
      const talk = { ...options.talk, calls, turns };
      options.progress(`outside: first-speak, Hotline, ${calls} calls × ${turns} turns`);
      const hotline = await measureLevel(fixture, { ...talk, idPrefix: `out${calls}` });
      let floor: FloorLevel | undefined;
      if (fixture.floor) {
        options.progress(`outside: first-speak, the floor, ${calls} calls × ${turns} turns`);
        floor = await measureLevel(fixture, { ...talk, idPrefix: `out${calls}-floor` }, fixture.floor);
      }
      levels.push({ calls, turns, hotline, floor });
    }
    const bargeIn = async (load: BargeInLoad, idPrefix: string): Promise<BargeInResult | undefined> => {
      if (load.calls <= 0 || load.trialsPerCall <= 0) return undefined;
      options.progress(`outside: barge-in, ${load.calls * load.trialsPerCall} interruptions over ${load.calls} calls`);
      return runBargeIns(fixture, {
        trials: load.calls * load.trialsPerCall,
        calls: load.calls,
        trialsPerCall: load.trialsPerCall,
        openPerSecond: options.talk.openPerSecond,
        msPerChar: options.talk.msPerChar,
        tokenDelayMs: options.tokenDelayMs,
        seed: options.talk.seed,
        idPrefix,
      });
    };
    const bargeInLowLoad = await bargeIn(options.bargeIns.low, 'out-barge-low');
    const bargeInHigh = await bargeIn(options.bargeIns.high, 'out-barge');
    const described = {
      hotlineRunsAs: `node ${built === undefined ? 'dist' : path.relative(process.cwd(), built) || '.'}/main.js`,
      hotlineNice: fixture.hotline.nice,
      callersNice: fixture.callersNice,
      llmNice: fixture.llmNice,
    };
    return { note: outsideNote(described), ...described, levels, bargeInLowLoad, bargeIn: bargeInHigh, memory };
  } finally {
    await fixture.close();
  }
}
