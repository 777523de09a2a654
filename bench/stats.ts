/** Pure helpers of the benchmark: percentiles, summaries, a seeded random source. */

export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * Nearest-rank percentile of an ascending array: the smallest value with at
 * least p % of the samples at or below it. No interpolation, so every figure
 * printed is a latency that was actually observed. NaN when empty.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * n);
  return sorted[Math.max(0, rank - 1)] ?? Number.NaN;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}

/** Pairwise differences a[i] - b[i] of two equally long arrays. */
export function differences(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) throw new Error(`differences: ${a.length} vs ${b.length} values`);
  return a.map((v, i) => v - (b[i] ?? Number.NaN));
}

/**
 * mulberry32: a tiny seeded generator. The schedule of a run (start offsets,
 * pauses, barge-in moments) depends on the seed only, so two runs with the
 * same options drive the same traffic and differ only in how the machine did.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Milliseconds for a table cell: three significant figures, never exponent notation. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  if (ms >= 1) return ms.toFixed(2);
  return ms.toFixed(3);
}

/** "100,1000" → [100, 1000]; throws on anything that is not a positive integer. */
export function parseCounts(text: string): number[] {
  return text.split(',').map((part) => {
    const n = Number(part.trim().replace(/_/g, ''));
    if (!Number.isInteger(n) || n <= 0) throw new Error(`"${part}" is not a positive whole number`);
    return n;
  });
}
