/**
 * What the call core needs of the business's documents (src/knowledge implements it): the
 * passages a caller's words find, looked up inside the turn, and which of them a reply used.
 */

/** A passage given to the model: where it is from, and its words. */
export interface KnowledgePassage {
  /** The passage's id in the index: stable until its file changes. */
  readonly id: number;
  /** Its file, relative to the knowledge folder. */
  readonly source: string;
  /** The headings above it ("Returns › Refunds"), an FAQ entry's question; "" when none. */
  readonly heading: string;
  /** Where it starts in its file, from 1; for a PDF within `page`. */
  readonly line: number;
  readonly page?: number | undefined;
  readonly text: string;
  /** The search's score: higher is better, comparable within one lookup only. */
  readonly score: number;
}

/** What one lookup found: nothing is a finding too, and the model is told so. */
export interface KnowledgeFinding {
  readonly passages: readonly KnowledgePassage[];
  /** How long the lookup took, in ms. */
  readonly ms: number;
}

export interface KnowledgeLookup {
  /** The index holds passages: without any, a turn looks nothing up and its request carries no note. */
  readonly active: boolean;
  /**
   * The passages for what the caller just said; `before` is the exchange before it (a follow-up
   * such as "and on Saturdays?" finds what the last answer was about). Never rejects: a lookup that
   * fails finds nothing and is logged by the knowledge base.
   */
  find(said: string, before: string | undefined): Promise<KnowledgeFinding>;
  /** Of `passages`, the ones `reply` drew on: their distinctive words are in it. */
  used(passages: readonly KnowledgePassage[], reply: string): KnowledgePassage[];
}

/** Where a passage is, for a person: `returns.md › Refunds, line 12`. */
export function passagePlace(passage: Pick<KnowledgePassage, 'source' | 'heading' | 'line' | 'page'>): string {
  const where = passage.page !== undefined ? `page ${passage.page}, line ${passage.line}` : `line ${passage.line}`;
  return `${passage.source}${passage.heading ? ` › ${passage.heading}` : ''}, ${where}`;
}
