/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): rankings of different kinds — the
 * words' BM25, the vectors' nearness — made one by their ranks alone, whose scores never compare.
 */

/** The constant of the original paper: a passage first in one ranking does not drown the others. */
const K = 60;

/** Ids of several rankings, best first, as one: each id's score is the sum of 1/(K + rank) over the rankings it is in. */
export function fuseRankings(rankings: readonly (readonly number[])[]): { id: number; score: number }[] {
  const scores = new Map<number, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (K + index + 1)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
}
