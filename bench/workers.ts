/**
 * The workers phase (issue 23): how many talking calls Hotline holds under the first-speak limit
 * as production runs it, `node dist/main.js` with WORKERS=1 and then WORKERS=2 (one process, or a
 * primary and two workers on one port), and the ratio of the two. Each run climbs the capacity
 * phase's ladder (capacity.ts), refined between the doubling's last two steps so that a ratio
 * can be read off it, against a Hotline of its own on a PostgreSQL database of its own (WORKERS=2
 * needs one; WORKERS=1 gets the same kind of store, so the two differ only in the processes).
 *
 * Where the load runs. The callers and the scripted LLM server stand in for the voice service and
 * the LLM provider, other hosts in production, but here they take about a third of a core out of
 * the two Hotline needs for WORKERS=2, and each way of sharing the cores bends that run most:
 * - At Hotline's priority (--same-priority) they are one more runnable thread beside two workers
 *   on two cores: a worker woken by a token often waits for a core, and the tail of the overhead
 *   is that wait. Measured so, WORKERS=2 held no more calls than WORKERS=1 (90 against 100),
 *   whose one process always finds the second core free.
 * - At the lowest priority (nice 19, as in the other phases) they get only what Hotline leaves.
 *   With both workers busy the LLM server's timers fire late: the mean gap between two tokens
 *   rose from the nominal 16.7 ms to 24–31 ms with 250–400 calls, so the load offered was up to
 *   a third lighter than the count of calls says, and came in bursts. Measured so, the ratio came
 *   out at 1.3× (the LLM server behind in the steps that decided it) and 1.9× in two runs.
 * So the callers give way (nice 19) and the LLM server, the clock of the load, runs on a thread
 * of its own ahead of Hotline (LLM_NICE_BELOW_HOTLINE): its tokens are written on time, as a
 * remote provider's arrive however busy Hotline is, and the CPU it takes comes out of Hotline's
 * cores in plain sight (the bench's column). That is the honest load, and the strictest of the
 * three for WORKERS=2 on a two-core machine. Each step reports the mean and p99 gap between two
 * tokens, and a step whose mean ran over the nominal gap (BEHIND_GAP_FACTOR) is marked; and the
 * CPU time of Hotline's processes, PostgreSQL, the bench and anything else, so a step that some
 * other program's work disturbed is seen, and measured again. The overhead itself runs from the
 * moment a token was really written to the moment its speak left the worker, whatever the load did.
 */
import { availableParallelism } from 'node:os';
import { climbLadder, type LadderOptions, type LadderStep } from './capacity.js';
import { sleep } from './clock.js';
import { cpuMark, cpuSince } from './cpu.js';
import { HotlineProcess, buildHotline } from './hotline-process.js';
import { BenchFixture, type FixtureOptions } from './llm-fixture.js';
import { startingNice } from './priority.js';
import { inPlace, postgresPlaces } from './store-bench.js';
import { warmUp } from './warm-up.js';
import { describePostgresUrl } from '../src/store/postgres/postgres-dialect.js';

export interface WorkersOptions {
  /** The WORKERS values, one run each; the ratio is of each to the first's. */
  workers: readonly number[];
  postgresAdminUrl: string;
  ladder: LadderOptions;
  /** Warm-up per Hotline process, as the other phases warm theirs up. */
  warmUp: { calls: number; turns: number };
  seed: number;
  fixture: Omit<FixtureOptions, 'env' | 'storedCalls' | 'launch'>;
  progress: (message: string) => void;
}

export interface WorkersRun {
  workers: number;
  /** The nice value Hotline's processes ran at (undefined where it cannot be read). */
  hotlineNice: number | undefined;
  ladder: LadderStep[];
  /** Largest step that passed; 0 if none did. */
  maxTalkingUnderLimit: number;
  ladderStop: string;
  /** maxTalkingUnderLimit over the first run's. */
  ratio: number | undefined;
  /** Steps where the LLM server fell behind its pace (see BEHIND_GAP_FACTOR). */
  behindSteps: number;
  /** How busy the machine was before Hotline started: anything but 0 is someone else's work, competing for the cores. */
  machineBusyBefore: number;
}

export interface WorkersResult {
  note: string;
  /** Where Hotline stored its calls. */
  store: string;
  /** The callers' nice value, if they gave way to Hotline. */
  callersNice: number | undefined;
  /** The LLM server's thread's nice value, if it was set (undefined with --same-priority). */
  llmNice: number | undefined;
  runs: WorkersRun[];
  skipped?: string;
}

/**
 * A step whose mean gap between two tokens is this many times the nominal gap: the LLM server did
 * not keep its pace, so the load offered was lighter than the count of calls says. Its timers
 * fire a little late as a matter of course (a millisecond or so on a busy loop), hence not 1.
 */
export const BEHIND_GAP_FACTOR = 1.2;

export function fellBehind(step: LadderStep, nominalGapMs: number): boolean {
  return step.llmTokenGapMs.mean > BEHIND_GAP_FACTOR * nominalGapMs;
}

/** The LLM server's thread runs this much below Hotline's nice value, i.e. ahead of it (root may raise a priority). */
export const LLM_NICE_BELOW_HOTLINE = 10;

/**
 * Other programs' CPU, in cores, over which a step is measured again: the kernel's own share of
 * the loopback traffic stays within a few hundredths, a test run or a build takes most of a core.
 */
export const WORKERS_DISTURBED_OVER_CORES = 0.2;

/** How long the machine's load is sampled before each run, with nothing of the bench's running. */
const BACKGROUND_SAMPLE_MS = 2_000;

/** What the figures cover; the nice values as in WorkersResult. */
export function workersNote(callersNice: number | undefined, llmNice: number | undefined): string {
  return (
    'Hotline started as production runs it, node dist/main.js (built by npm run build first) with NODE_ENV=production and ' +
    'LOG_LEVEL=info in an empty folder with an environment of its own, on a fresh PostgreSQL database per run; ' +
    'WORKERS=N>1 is a primary and N workers on one port. First-speak overhead as in section 1, measured inside each ' +
    'worker by a preloaded probe; the ladder doubles the talking calls, then halves the gap between the last pass and ' +
    `the first failure. The callers and the LLM server (on a thread of its own) run in the bench's process on the same ` +
    `${availableParallelism()} cores: ` +
    (callersNice === undefined && llmNice === undefined
      ? "both at Hotline's CPU priority (--same-priority)."
      : `the callers give way to Hotline (nice ${callersNice ?? 'unchanged'}), the LLM server goes ahead of it ` +
        `(nice ${llmNice ?? 'unchanged'}) to keep its tokens on time, as a remote provider's are.`)
  );
}

export async function measureWorkers(options: WorkersOptions): Promise<WorkersResult> {
  const where = `PostgreSQL at ${describePostgresUrl(options.postgresAdminUrl)}, a fresh database per run`;
  const make = await postgresPlaces(options.postgresAdminUrl);
  if (typeof make !== 'function') {
    return { note: workersNote(undefined, undefined), store: where, callersNice: undefined, llmNice: undefined, runs: [], skipped: `${make.skipped}: WORKERS>1 needs it` };
  }
  options.progress('workers: building dist/ (npm run build)');
  await buildHotline();
  const runs: WorkersRun[] = [];
  let callersNice: number | undefined;
  let llmNice: number | undefined;
  const hotlineNice = startingNice();
  for (const workers of options.workers) {
    const before = cpuMark();
    await sleep(BACKGROUND_SAMPLE_MS);
    const machineBusyBefore = cpuSince(before).machineBusy;
    const run = await inPlace(make, async (place) => {
      const fixture = await BenchFixture.start({
        ...options.fixture,
        llmThread: true,
        ...(options.fixture.yieldCpu && hotlineNice !== undefined ? { llmNice: Math.max(-20, hotlineNice - LLM_NICE_BELOW_HOTLINE) } : {}),
        env: {
          ...place.env,
          NODE_ENV: 'production',
          LOG_LEVEL: 'info',
          REPLICA_ID: 'bench',
          // The scripted server answers the bench's replies only; a model list is not what is measured.
          LLM_CHECK_AT_START: 'false',
          SHUTDOWN_GRACE_MS: '2000',
        },
        launch: (env, nice) => HotlineProcess.start(env, { workers, nice }),
      });
      try {
        options.progress(`workers: WORKERS=${workers}, warming up`);
        await warmUp(fixture, { calls: options.warmUp.calls * workers, turns: options.warmUp.turns, seed: options.seed });
        options.progress(`workers: WORKERS=${workers}, talking calls ladder`);
        const climbed = await climbLadder(fixture, { ...options.ladder, ladderDisturbedOverCores: WORKERS_DISTURBED_OVER_CORES });
        callersNice = fixture.callersNice;
        llmNice = fixture.llmNice;
        return { workers, hotlineNice: fixture.hotline.nice, ...climbed };
      } finally {
        await fixture.close();
      }
    });
    const behindSteps = run.ladder.filter((step) => !step.disturbed && fellBehind(step, options.fixture.tokenDelayMs)).length;
    const first = runs[0];
    runs.push({
      ...run,
      ratio: first && first.maxTalkingUnderLimit > 0 ? run.maxTalkingUnderLimit / first.maxTalkingUnderLimit : undefined,
      behindSteps,
      machineBusyBefore,
    });
  }
  return { note: workersNote(callersNice, llmNice), store: where, callersNice, llmNice, runs };
}
