/**
 * Each vector's nearest others by cosine (the vectors are unit length, so a dot product): the
 * arithmetic alone, run on a thread of its own (neighbours-worker.ts) — it grows with the square of
 * the passages, and must not hold the calls' event loop.
 */

export interface NearestOptions {
  /** How many each keeps. */
  readonly count: number;
  /** Nearer than this only. */
  readonly minSimilarity: number;
}

export function nearestNeighbours(ids: readonly number[], vectors: readonly Float32Array[], options: NearestOptions): Map<number, number[]> {
  const { count, minSimilarity } = options;
  const found = new Map<number, number[]>();
  for (let i = 0; i < vectors.length; i++) {
    const a = vectors[i]!;
    const best: { id: number; similarity: number }[] = [];
    for (let j = 0; j < vectors.length; j++) {
      if (j === i) continue;
      const b = vectors[j]!;
      if (b.length !== a.length) continue;
      let dot = 0;
      for (let k = 0; k < a.length; k++) dot += a[k]! * b[k]!;
      if (dot < minSimilarity) continue;
      best.push({ id: ids[j]!, similarity: dot });
      if (best.length > count * 4) best.sort((x, y) => y.similarity - x.similarity).splice(count);
    }
    found.set(ids[i]!, best.sort((x, y) => y.similarity - x.similarity).slice(0, count).map((n) => n.id));
  }
  return found;
}
