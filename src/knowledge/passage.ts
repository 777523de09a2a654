/** A piece of a document a caller's question may find: a section, or part of a long one. */
export interface Passage {
  /** The headings above it, outermost first, joined with " › " ("Returns › Refunds"); for an FAQ entry its question; "" when none. */
  readonly heading: string;
  /** Where it starts in its file, from 1: the line (for a PDF, the first line of its page's text is 1 and `page` is set). */
  readonly line: number;
  /** A PDF's page, from 1. */
  readonly page?: number;
  /** The words, as plain text (markdown marks removed; an FAQ entry is "question\nanswer"). */
  readonly text: string;
}

/** A document that cannot be read as its kind: what is wrong, and where when known. */
export class DocumentError extends Error {
  override readonly name = 'DocumentError';
  constructor(message: string, readonly line?: number) { super(message); }
}
