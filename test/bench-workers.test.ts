import { describe, expect, it } from 'vitest';
import { LadderSearch, type LadderStep } from '../bench/capacity.js';
import { CommandChannel, type NumberedCommand } from '../bench/hotline-probes.js';
import { evaluateTargets, machine, render, type BenchResults } from '../bench/report.js';
import type { WorkersResult, WorkersRun } from '../bench/workers.js';

/** Runs the search against a Hotline that holds the limit below `capacity` calls; the counts tried, in order. */
function climb(search: LadderSearch, capacity: number): number[] {
  const tried: number[] = [];
  for (let calls = search.next; calls !== undefined && tried.length < 50; calls = search.next) {
    tried.push(calls);
    search.record(calls, calls < capacity);
  }
  return tried;
}

describe('the ladder of talking calls', () => {
  it('doubles until a step fails, as the capacity phase always has', () => {
    const search = new LadderSearch(100, 10);
    expect(climb(search, 530)).toEqual([100, 200, 400, 800]);
    expect(search.maxPassing).toBe(400);
    expect(search.stop()).toBe('p99 ≥ 10 ms at 800 calls');
  });

  it('then halves the gap between the last pass and the first failure, in round numbers', () => {
    const search = new LadderSearch(100, 10, 3);
    expect(climb(search, 530)).toEqual([100, 200, 400, 800, 600, 500, 550]);
    expect(search.maxPassing).toBe(500);
    expect(search.stop()).toBe('p99 ≥ 10 ms at 800 calls; refined in 3 steps: 500 passed, 550 did not');
  });

  it('halves from a first step that fails, and refines above the count that passed', () => {
    const search = new LadderSearch(100, 10, 2);
    expect(climb(search, 75)).toEqual([100, 50, 80, 70]);
    expect(search.maxPassing).toBe(70);
  });

  it('stops refining once no round number is left between pass and failure', () => {
    const search = new LadderSearch(10, 10, 5);
    expect(climb(search, 25)).toEqual([10, 20, 40, 30]);
    expect(search.maxPassing).toBe(20);
  });

  it('says when the time budget cut the climb or the refining short', () => {
    const search = new LadderSearch(100, 10, 3);
    expect(search.stop('time budget of 90 s')).toBe('time budget of 90 s');
    search.record(100, true);
    search.record(200, false);
    expect(search.next).toBe(150);
    expect(search.stop('time budget of 90 s')).toBe('p99 ≥ 10 ms at 200 calls; the time budget ended the refining');
  });
});

describe('commands to a Hotline', () => {
  it('settles each call by its id, in any order, and fails the rest with the first error', async () => {
    const sent: NumberedCommand[] = [];
    const channel = new CommandChannel((message) => sent.push(message), 'Hotline process 7');
    const start = channel.call({ kind: 'probe-start' });
    const stop = channel.call<'loop-stop'>({ kind: 'loop-stop' });
    expect(sent.map((m) => [m.id, m.command.kind])).toEqual([
      [0, 'probe-start'],
      [1, 'loop-stop'],
    ]);
    const figures = { p50Ms: 1, p99Ms: 2, maxMs: 3, utilization: 0.5 };
    channel.settle({ kind: 'answer', id: 1, result: figures });
    await expect(stop).resolves.toEqual(figures);
    channel.settle({ kind: 'failed', id: 0, message: 'no registry' });
    await expect(start).rejects.toThrow('Hotline process 7: no registry');
    const waiting = channel.call({ kind: 'settle-heap' });
    channel.fail(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    await expect(channel.call({ kind: 'probe-start' })).rejects.toThrow('gone');
    expect(channel.failed).toBe(true);
  });
});

describe('the workers figures', () => {
  const step = (calls: number, pass: boolean, gap = 17): LadderStep => ({
    calls,
    p50Ms: 0.5,
    p99Ms: pass ? 6 : 14,
    eventLoopP99Ms: 5,
    busy: 0.4,
    llmTokenGapMs: { mean: gap, p99: gap * 2 },
    cpu: { machineBusy: 0.7, benchCores: 0.3 },
    timedOut: 0,
    pass,
    durationS: 10,
  });
  const run = (workers: number, max: number, ratio: number | undefined, ladder: LadderStep[]): WorkersRun => ({
    workers,
    hotlineNice: 0,
    ladder,
    maxTalkingUnderLimit: max,
    ladderStop: 'p99 ≥ 10 ms',
    ratio,
    behindSteps: ladder.filter((s) => s.llmTokenGapMs.mean > 20).length,
    machineBusyBefore: 0.01,
  });
  const results = (workers: WorkersResult): BenchResults => {
    const partial = { machine: machine(), options: { tokenDelayMs: 16.67 }, startedAt: '', durationS: 1, workers };
    return { ...partial, targets: evaluateTargets(partial) };
  };

  it('judges the ratio of WORKERS=2 to WORKERS=1 against the aim of 1.6, higher being better', () => {
    const workers: WorkersResult = {
      note: 'note',
      store: 'PostgreSQL',
      callersNice: 19,
      llmNice: -10,
      runs: [run(1, 400, undefined, [step(400, true), step(800, false)]), run(2, 600, 1.5, [step(600, true), step(800, false, 80)])],
    };
    const { targets } = results(workers);
    expect(targets).toEqual([
      expect.objectContaining({ value: 1.5, limit: 1.6, atLeast: true, pass: false, name: expect.stringContaining('WORKERS=2 (600) over WORKERS=1 (400)') }),
    ]);
    const text = render(results(workers));
    expect(text).toContain('WORKERS=2: largest passing 600 talking calls = 1.50× WORKERS=1');
    expect(text).toContain('MISS  talking calls held');
    expect(text).toContain('1.50× (target ≥ 1.6×)');
    // The step where the LLM server fell behind is marked.
    expect(text).toContain('80.0 / 160 !');
  });

  it('names no target when a run is missing or none of its steps passed', () => {
    const skipped: WorkersResult = { note: 'note', store: 'PostgreSQL', callersNice: undefined, llmNice: undefined, runs: [], skipped: 'skipped: no PostgreSQL' };
    expect(results(skipped).targets).toEqual([]);
    expect(render(results(skipped))).toContain('skipped: no PostgreSQL');
    const none: WorkersResult = { note: 'note', store: 'PostgreSQL', callersNice: 19, llmNice: -10, runs: [run(1, 0, undefined, [step(100, false)]), run(2, 100, undefined, [step(100, true)])] };
    expect(results(none).targets).toEqual([]);
  });
});
