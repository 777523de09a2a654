/**
 * The bench's outside phase (bench/outside.ts) in a tiny configuration: Hotline as a process of its
 * own (from its sources, sparing the build), the scripted model and the floor each on a thread of a
 * process of their own (bench/thread-process.ts), the callers in the test's process; then the
 * figures as the report prints them. No timing is asserted: only that every figure was measured
 * from where it is said to be, and that the three processes are really apart.
 */
import { describe, expect, it } from 'vitest';
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
      source: true,
      progress: (message) => progress.push(message),
    });
    expect(outside.hotlineRunsAs).toBe('node --import tsx src/main.ts');
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
