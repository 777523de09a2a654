/**
 * Which words of a question a search uses. Ranking reads every passage a word is in: a word in most
 * passages ("coffee" in a coffee shop's documents) costs the most and tells the least, and at 100,000
 * passages three such words take 70 ms where three rare ones take 0.1. So the rarest words go first,
 * and the others only while the passages they bring stay within a budget; the rarest always goes.
 * A word left out is in so many passages that it would barely change their order.
 * A stem the documents have is searched as itself, one they lack as a prefix of longer ones.
 */
import type { TermCounts } from './term-counts.js';
import { prefixable, type QuestionWord, type SearchTerm } from './terms.js';

/** Passages a search may rank, summed over its words: about half a millisecond of SQLite's time (0.4 µs each). */
export const RANKING_BUDGET = 1_500;
/** The same for PostgreSQL, which reads each passage's tsvector to rank it: a few milliseconds. */
export const POSTGRES_RANKING_BUDGET = 600;

export interface ChosenTerms {
  /** Stems, for SQLite's index. */
  readonly stems: readonly SearchTerm[];
  /** The words, for PostgreSQL to stem in each language itself. */
  readonly words: readonly SearchTerm[];
}

export function chooseTerms(question: readonly QuestionWord[], counts: TermCounts, budget = RANKING_BUDGET): ChosenTerms {
  const costed = question.map((word) => {
    let cost = 0;
    let known = false;
    const stems: SearchTerm[] = [];
    for (const stem of word.stems) {
      const exact = counts.exact(stem);
      if (exact > 0) {
        known = true;
        cost += exact;
        stems.push({ text: stem, prefix: false });
      } else if (prefixable(stem)) {
        const longer = counts.prefix(stem);
        cost += longer;
        if (longer > 0) stems.push({ text: stem, prefix: true });
      }
    }
    return { word, cost, stems, known };
  });
  const chosen: typeof costed = [];
  let spent = 0;
  for (const candidate of costed.filter((c) => c.cost > 0).sort((a, b) => a.cost - b.cost)) {
    if (chosen.length > 0 && spent + candidate.cost > budget) break;
    chosen.push(candidate);
    spent += candidate.cost;
  }
  return {
    stems: chosen.flatMap((c) => c.stems),
    words: chosen.map((c) => ({ text: c.word.word, prefix: !c.known && prefixable(c.word.word) })),
  };
}
