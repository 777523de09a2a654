/**
 * The bench's features phase (bench/features.ts) in a tiny configuration: one feature, two
 * Hotlines as processes of their own (the tests' own build, sparing dist's), one round a side;
 * then the table as the report prints it. No timing is asserted: only that each side's CPU, bytes
 * and first-speak were measured from its own process, and that the 'on' side had its viewer.
 */
import { describe, expect, it } from 'vitest';
import { measureFeatures, type FeaturesOptions } from '../bench/features.js';
import { BUILT_DIR } from './helpers/child-process.js';
import { evaluateTargets, machine, render, type BenchResults } from '../bench/report.js';

/** A tiny run: no PostgreSQL where the replicas would need it, the tests' own build. */
const TINY = {
  calls: 2,
  turns: 2,
  rounds: 1,
  talk: { openPerSecond: 100, thinkMs: 10, msPerChar: 0.1, seed: 1, turnTimeoutMs: 20_000 },
  warmUp: { calls: 1, turns: 2 },
  postgresAdminUrl: 'postgres://nobody@127.0.0.1:1/none',
  // The test's thread keeps its priority: other files run on it after this one.
  fixture: { ttftMs: 20, tokenDelayMs: 2, yieldCpu: false },
  built: BUILT_DIR,
} satisfies Omit<FeaturesOptions, 'features' | 'progress'>;

describe('the features phase', () => {
  it("measures a feature's two Hotlines in turn, each from its own process, and prints the difference", async () => {
    const progress: string[] = [];
    const result = await measureFeatures({ ...TINY, features: ['live-view'], progress: (message) => progress.push(message) });
    expect(result.skipped).toEqual([]);
    const [figures] = result.features;
    expect(figures?.feature).toBe('live-view');
    for (const side of [figures!.off, figures!.on]) {
      expect(side.turns).toBe(4);
      expect(side.timedOut).toBe(0);
      expect(side.tokens).toBeGreaterThan(side.turns);
      expect(side.cpuMsPerTurn).toBeGreaterThan(0);
      expect(side.bytesPerTurn).toBeGreaterThan(0);
      expect(side.bytesPerToken).toBeCloseTo((side.bytesPerTurn * side.turns) / side.tokens, 6);
      expect(side.overheadMs.count).toBeGreaterThanOrEqual(side.turns);
    }
    expect(progress).toEqual(expect.arrayContaining(['features: live-view off, round 1 of 1: 2 calls × 2 turns', 'features: live-view on, round 1 of 1: 2 calls × 2 turns']));

    const partial = { machine: machine(), options: {}, startedAt: '', durationS: 1, features: result };
    const results: BenchResults = { ...partial, targets: evaluateTargets(partial) };
    const text = render(results);
    expect(text).toContain('12. Features: what each costs a turn');
    expect(text).toMatch(/live-view\s+off/);
    expect(text).toContain('on − off');
    expect(text).toContain('live-view: a dashboard viewer with the live stream open.');
  }, 180_000);

  it('says a feature that needs PostgreSQL was skipped where there is none', async () => {
    const result = await measureFeatures({ ...TINY, features: ['replicas'], progress: () => undefined });
    expect(result.features).toEqual([]);
    expect(result.skipped).toEqual([{ feature: 'replicas', why: expect.stringContaining('no PostgreSQL') }]);
  }, 60_000);
});
