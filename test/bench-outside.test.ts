/**
 * The bench's outside phase (bench/outside.ts) in a tiny configuration: Hotline as a process of its
 * own (the tests' own build, sparing dist's), the scripted model and the floor each on a thread of a
 * process of their own (bench/thread-process.ts), the callers in the test's process; then the
 * figures as the report prints them. No timing is asserted: only that every figure was measured
 * from where it is said to be, and that the three processes are really apart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HotlineProcess } from '../bench/hotline-process.js';
import { BUILT_DIR } from './helpers/child-process.js';
import { measureOutside, type OutsideResult } from '../bench/outside.js';
import { evaluateTargets, machine, render, type BenchResults } from '../bench/report.js';
import { ThreadProcess } from '../bench/thread-process.js';
import type { LlmWorkerData, LlmWorkerMessage } from '../bench/llm-worker.js';

describe('a bench module on a thread of a process of its own', () => {
  it('runs in another process, answers as a worker does, and is gone once terminated', async () => {
    const data: LlmWorkerData = { role: 'hotline-bench-llm', ttftMs: 1, tokenDelayMs: 1, yieldCpu: false };
    const worker = ThreadProcess.spawn('llm-worker', data);
    const ready = await new Promise<Extract<LlmWorkerMessage, { kind: 'ready' }>>((resolve) => worker.on('message', resolve));
    expect(worker.pid).toBeGreaterThan(0);
    expect(worker.pid).not.toBe(process.pid);
    const models = await fetch(new URL('models', `${ready.baseURL}/`));
    expect(models.status).toBeLessThan(500);
    const exited = new Promise<number>((resolve) => worker.on('exit', resolve));
    await worker.terminate();
    await exited;
    expect(() => process.kill(worker.pid!, 0)).toThrow();
  }, 60_000);
});

describe('a Hotline process under the bench', () => {
  it('is probed once, on its main thread: its store\'s and documents\' threads load the preload too, and are not Hotlines', async () => {
    const transcripts = await mkdtemp(path.join(tmpdir(), 'hotline-bench-probe-'));
    const hotline = await HotlineProcess.start(
      { NODE_ENV: 'production', HOST: '127.0.0.1', PORT: '0', OPENAI_API_KEY: 'bench', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'm', LLM_CHECK_AT_START: 'false', TRANSCRIPTS_DIR: transcripts },
      // Compiled, as production runs: from source the preload does not reach the threads.
      { workers: 1, nice: undefined, built: BUILT_DIR },
    );
    try {
      // The SQLite store's and the documents' threads have started by the time it listens; a probe of
      // theirs would have connected with them, and a settled heap is asked of every probe.
      await hotline.settleHeap();
      expect(hotline.pids).toHaveLength(1);
    } finally {
      await hotline.close();
      await rm(transcripts, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the outside phase', () => {
  it('measures Hotline and the floor from the callers, barge-ins at the model, memory in Hotline, and is printed first', async () => {
    const progress: string[] = [];
    const outside: OutsideResult = await measureOutside({
      levels: [1, 3],
      turnsFor: () => 2,
      talk: { openPerSecond: 100, thinkMs: 10, msPerChar: 0.1, seed: 1, turnTimeoutMs: 20_000 },
      warmUp: { calls: 1, turns: 2 },
      bargeIns: { low: { calls: 1, trialsPerCall: 2 }, high: { calls: 2, trialsPerCall: 2 } },
      tokenDelayMs: 2,
      idleCalls: 20,
      // The test's thread keeps its priority: other files run on it after this one.
      fixture: { ttftMs: 20, tokenDelayMs: 2, yieldCpu: false },
      built: BUILT_DIR,
      progress: (message) => progress.push(message),
    });
    expect(outside.hotlineRunsAs).toBe('node .test-build/main.js');
    expect(outside.levels.map((l) => l.calls)).toEqual([1, 3]);
    for (const level of outside.levels) {
      for (const side of [level.hotline, level.floor!]) {
        expect(side.timedOut).toBe(0);
        expect(side.replies).toBe(level.calls * 2);
        expect(side.endToEndMs.count).toBe(side.speaks);
        // Outside includes the hop to the callers' process: never shorter than the speak's leaving.
        expect(side.endToEndMs.p50).toBeGreaterThan(0);
      }
    }
    for (const run of [outside.bargeInLowLoad!, outside.bargeIn!]) {
      expect(run.trials).toBe(run.calls * 2);
      expect(run.serverSawCloseMs.count + run.completedBeforeBargeIn).toBeGreaterThan(0);
      expect(run.staleSent).toBe(0);
    }
    expect(outside.memory?.idleCalls).toBe(20);
    expect(progress[0]).toContain('idle calls');

    const partial = { machine: machine(), options: {}, startedAt: '', durationS: 1, outside };
    const results: BenchResults = { ...partial, targets: evaluateTargets(partial) };
    const text = render(results);
    expect(text.indexOf('0. Outside')).toBeGreaterThan(0);
    expect(text).toContain('Hotline above the floor, outside: 1 calls p50');
    expect(text).toContain('memory per greeted idle call, 20 calls');
    expect(results.targets.map((t) => t.name)).toEqual(
      expect.arrayContaining(["outside: first-speak p50 above the floor's, 1 call", 'outside: memory per greeted idle call, the production process (RSS)']),
    );
  }, 180_000);
});
