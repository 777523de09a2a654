/**
 * What every kind of document is turned into before it becomes passages:
 * blocks of plain text with their lines, under a heading path. The sizes are
 * decided here once, so a Markdown page, a web page and a PDF are cut alike.
 */
import type { Passage } from './passage.js';

/**
 * The most characters a passage holds: about a screenful, enough to answer one
 * question, small enough that a few passages fit in a prompt beside the call.
 */
export const MAX_PASSAGE_CHARS = 1000;

/** A paragraph, list item, table row or code block, as one line of plain text. */
export interface Block {
  readonly text: string;
  readonly line: number;
}

/** The blocks under one heading, up to the next heading of any level. */
export interface Section {
  /** The heading path, "" when the blocks come before any heading. */
  readonly heading: string;
  /** The heading's own line; undefined when there is no heading (the first block's line is used). */
  readonly headingLine: number | undefined;
  readonly blocks: readonly Block[];
}

/** Runs of white space become one space, so a passage reads the same however its file was wrapped. */
export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The passages of sections: empty sections give none; a long one gives several, each under its heading. */
export function sectionPassages(sections: readonly Section[]): Passage[] {
  return sections.flatMap((section) =>
    packBlocks(section.blocks).map((part, index) => ({
      heading: section.heading,
      // The first part is found under its heading, so it starts where the heading is written.
      line: index === 0 ? (section.headingLine ?? part.line) : part.line,
      text: part.text,
    })),
  );
}

/**
 * Consecutive blocks joined with "\n" while they fit in MAX_PASSAGE_CHARS; a
 * block too long on its own is cut first. Each part has the line of its first block.
 */
export function packBlocks(blocks: readonly Block[], max = MAX_PASSAGE_CHARS): Block[] {
  const parts: Block[] = [];
  let texts: string[] = [];
  let length = 0;
  let line = 0;
  const flush = (): void => {
    if (texts.length > 0) parts.push({ text: texts.join('\n'), line });
    texts = [];
    length = 0;
  };
  for (const block of blocks) {
    const text = collapse(block.text);
    if (text === '') continue;
    for (const piece of text.length > max ? splitLong(text, max) : [text]) {
      if (texts.length > 0 && length + 1 + piece.length > max) flush();
      if (texts.length === 0) line = block.line;
      texts.push(piece);
      length += (texts.length > 1 ? 1 : 0) + piece.length;
    }
  }
  flush();
  return parts;
}

/** A sentence ends at . ! ? or … (perhaps inside quotes or brackets) followed by a space. */
const SENTENCE_END = /(?<=[.!?…]["'”’)\]]*) /;

/**
 * One collapsed text too long for a passage, cut at sentence ends; a sentence
 * that is itself too long is cut at a space, or anywhere when it has none.
 */
export function splitLong(text: string, max = MAX_PASSAGE_CHARS): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const sentence of text.split(SENTENCE_END)) {
    for (const part of sentence.length > max ? hardSplit(sentence, max) : [sentence]) {
      if (current !== '' && current.length + 1 + part.length > max) {
        pieces.push(current);
        current = '';
      }
      current = current === '' ? part : `${current} ${part}`;
    }
  }
  if (current !== '') pieces.push(current);
  return pieces;
}

function hardSplit(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf(' ', max);
    if (cut <= 0) {
      cut = max;
      // Never between the two halves of a character outside the BMP (an emoji, a CJK extension).
      if (isHighSurrogate(rest.charCodeAt(cut - 1))) cut--;
    }
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== '') pieces.push(rest);
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The heading path as headings of levels 1–6 come and go: a heading replaces its level and everything below it. */
export class HeadingPath {
  private readonly open: { level: number; text: string }[] = [];

  /** Enters a heading of `level` and returns the path to it. */
  enter(level: number, text: string): string {
    while (this.open.length > 0 && this.open.at(-1)!.level >= level) this.open.pop();
    this.open.push({ level, text });
    return this.toString();
  }

  toString(): string {
    return this.open
      .map((heading) => heading.text)
      .filter((text) => text !== '')
      .join(' › ');
  }
}

/** Character offsets to 1-based lines, for parsers that report offsets. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.starts.push(at + 1);
  }

  lineOf(offset: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
}
