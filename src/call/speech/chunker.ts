import {
  MAX_LOOKAHEAD,
  MONTHS,
  NEVER_FINAL,
  ORDINAL_CONTEXT,
  SENTENCE_STARTERS,
  SOFT_FINAL,
  TIME_SUFFIXES,
} from './abbreviations.js';

/** Past this many characters without a boundary, a sentence is cut at its last `, ` / `; ` / `: ` / ` – `. */
const LONG_CHUNK = 250;
/** Past this, with no such separator at all, it is cut at its last space (or, without one, where it stands) so speech never stalls. */
const HARD_CHUNK = 500;
/**
 * Scanned text kept addressable behind the scan position. Every look back
 * (a guard cut, the word or two before a `.`) reaches at most about
 * HARD_CHUNK + 3 × MAX_LOOKAHEAD characters, so text of a sentence that never
 * ends (a huge blob without spaces) is parked in `held` instead of being
 * re-copied on every push.
 */
const WINDOW = 1024;

const TERMINALS = '.!?…';
// `*`, `_` and `` ` `` close markdown emphasis/code the way quotes close speech: "**Done.** Next".
// “ ‘ « also close German quotes („so.“ ‚so.‘ »so.«).
const CLOSERS = '"”’“‘\')]»«*_`';
const OPENERS = /^["“‘'(\[«„‚¿¡*_`]+/u;
const SEPARATORS = ',;:';
const DASHES = '–—-';
const NUMBER = /^[$€£¥]?\d+(?:[.,]\d+)*[$€£¥]?$/u;
/** Single letters and dotted initialisms: `A`, `U.S`, `R.T.C`. */
const INITIALISM = /^(?:\p{L}\.)*\p{L}$/u;
const LEADING_LETTERS = /^\p{L}+/u;
const LOWER = /^\p{Ll}/u;
const UPPER = /^[\p{Lu}\p{Lt}]/u;
const ALNUM = /^[\p{L}\p{N}]/u;

/** How the word after an ambiguous terminal cluster decides whether it ends a sentence. */
type Rule = 'lowercase' | 'spaced' | 'number' | 'time' | 'starter';
type Step = { readonly kind: 'split' | 'keep'; readonly end: number } | { readonly kind: 'wait' };

const WAIT: Step = { kind: 'wait' };

function isSpace(c: string): boolean {
  const code = c.charCodeAt(0);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/u.test(c);
}

// Only characters that String.prototype.trim() also removes, so chunks joined by spaces lose nothing.
function isLineBreak(c: string): boolean {
  return c === '\n' || c === '\r' || c === '\u2028' || c === '\u2029';
}

/** Whether `token` (the next word, complete or cut at MAX_LOOKAHEAD) makes the cluster a boundary. */
function judge(rule: Rule, token: string): boolean {
  const word = token.replace(OPENERS, '');
  const lower = LOWER.test(word);
  const head = LEADING_LETTERS.exec(word)?.[0] ?? '';
  switch (rule) {
    case 'lowercase':
      return !lower;
    case 'spaced':
      return !lower && !word.startsWith('.') && !word.startsWith('…');
    case 'number':
      return !lower && !MONTHS.has(head.toLowerCase());
    case 'time':
      // "9 a.m. PST", "7 p.m. I have dinner" carry on; "6 p.m. Add salt" starts anew.
      return UPPER.test(word) && head !== 'I' && !(head.length > 1 && head === head.toUpperCase());
    case 'starter':
      return SENTENCE_STARTERS.has(head) && !continuesAsCode(word, head.length);
  }
}

/** `A.7`, `A7`, `B-12`: letters glued to digits or dots are an identifier, not a starter word. */
function continuesAsCode(word: string, at: number): boolean {
  const next = word.charAt(at);
  if (/\d/u.test(next)) return true;
  return (next === '.' || next === '-') && ALNUM.test(word.charAt(at + 1));
}

/**
 * Splits streamed text into sentences as early as each boundary is certain.
 * State is kept between pushes so every character is examined about once.
 */
export class SentenceChunker {
  /** Recent text; `buf` starts at absolute index `base`. All other indices are absolute. */
  private buf = '';
  private base = 0;
  /** Pending-chunk text from `pos` up to `base`, when the chunk began before `buf`. */
  private held: string[] = [];
  /** Start of the pending chunk. */
  private pos = 0;
  /** Next index to examine; never passes an undecided cluster. */
  private scan = 0;
  /** First non-space index of the pending chunk, -1 while it is blank. */
  private content = -1;
  /** Cut index (the space) after the last `, ` / `; ` / `: ` / ` – `, or -1. */
  private lastSep = -1;
  /** Cut index at the last space following a word, or -1. */
  private lastSpace = -1;
  /** The cluster we stopped at and the rule its next word must settle. */
  private waiting: { at: number; rule: Rule } | undefined;

  /** Feed the next streamed LLM text delta; returns the chunks that became complete (trimmed, non-empty, in order). */
  push(delta: string): string[] {
    this.buf += delta;
    const out: string[] = [];
    this.run(out, false);
    this.compact();
    return out;
  }

  /** End of the text: returns whatever is pending as final chunk(s) (trimmed; [] if only whitespace). Resets the chunker. */
  flush(): string[] {
    const out: string[] = [];
    this.run(out, true);
    this.emit(out, this.end);
    this.buf = '';
    this.base = 0;
    this.held = [];
    this.scan = 0;
    this.startChunk(0);
    return out;
  }

  private at(i: number): string {
    return this.buf.charAt(i - this.base);
  }

  private get end(): number {
    return this.base + this.buf.length;
  }

  private run(out: string[], final: boolean): void {
    const length = this.end;
    while (this.scan < length) {
      const i = this.scan;
      const c = this.at(i);
      if (isLineBreak(c)) {
        this.emit(out, i);
        this.startChunk(i + 1);
        this.scan = i + 1;
        continue;
      }
      if (isSpace(c)) {
        this.noteSpace(i);
        this.scan = i + 1;
      } else {
        if (this.content < 0) this.content = i;
        if (TERMINALS.includes(c)) {
          const step = this.cluster(i, final);
          if (step.kind === 'wait') return;
          if (step.kind === 'split') {
            this.emit(out, step.end);
            this.startChunk(step.end);
          }
          this.scan = step.end;
        } else {
          this.scan = i + 1;
        }
      }
      this.guard(out);
    }
  }

  /** Decides the terminal cluster starting at `start`; a boundary lies right after it. */
  private cluster(start: number, final: boolean): Step {
    const length = this.end;
    // Runs are capped so a flood of dots costs no rescans; a capped run is no boundary.
    let termEnd = start;
    while (termEnd < length && termEnd - start < MAX_LOOKAHEAD && TERMINALS.includes(this.at(termEnd))) termEnd++;
    if (termEnd - start === MAX_LOOKAHEAD) return { kind: 'keep', end: termEnd };
    let end = termEnd;
    while (end < length && end - termEnd < MAX_LOOKAHEAD && CLOSERS.includes(this.at(end))) end++;
    if (end - termEnd === MAX_LOOKAHEAD) return { kind: 'keep', end };
    if (end === length) return final ? { kind: 'keep', end } : WAIT;
    // 3.50, example.com, v2.0.1, "Really?", she…
    if (!isSpace(this.at(end))) return { kind: 'keep', end };

    const cached = this.waiting?.at === start ? this.waiting : undefined;
    const rule = cached ? cached.rule : this.classify(start, termEnd, end);
    if (rule === 'split' || rule === 'keep') return { kind: rule, end };

    let look = end;
    while (look < length && look - end < MAX_LOOKAHEAD && isSpace(this.at(look)) && !isLineBreak(this.at(look))) look++;
    // A gap this wide is a layout break, and capping it keeps each retry cheap.
    if (look - end === MAX_LOOKAHEAD) return { kind: 'split', end };
    if (look === length && !final) {
      this.waiting = { at: start, rule };
      return WAIT;
    }
    if (look === length || isLineBreak(this.at(look))) return { kind: 'split', end };

    let tokenEnd = look;
    while (tokenEnd < length && tokenEnd - look < MAX_LOOKAHEAD && !isSpace(this.at(tokenEnd))) tokenEnd++;
    if (tokenEnd === length && tokenEnd - look < MAX_LOOKAHEAD && !final) {
      this.waiting = { at: start, rule };
      return WAIT;
    }
    this.waiting = undefined;
    return { kind: judge(rule, this.slice(look, tokenEnd)) ? 'split' : 'keep', end };
  }

  /** What the cluster itself and the word before it say; a Rule when the next word must decide. */
  private classify(start: number, termEnd: number, end: number): Rule | 'split' | 'keep' {
    const terminals = this.slice(start, termEnd);
    const closed = end > termEnd;
    if (terminals.includes('!') || terminals.includes('?')) return closed ? 'lowercase' : 'split';
    if (terminals !== '.') return 'lowercase'; // an ellipsis: "Communication... again"

    const wordStart = this.wordStart(start);
    if (wordStart === undefined) return 'split'; // too long for any abbreviation or list marker
    const word = this.slice(wordStart, start).replace(OPENERS, '');
    if (word === '') return 'spaced'; // "a sentence . . ."
    const lower = word.toLowerCase();
    if (NEVER_FINAL.has(lower)) return 'keep';
    if (NUMBER.test(word)) {
      if (wordStart === this.content) return 'keep'; // a list marker: "1. Goals"
      return this.afterOrdinalContext(wordStart) ? 'starter' : 'number';
    }
    if (closed) return 'lowercase'; // "Ready." stayed
    if (TIME_SUFFIXES.has(lower)) return 'time';
    if (SOFT_FINAL.has(lower) || INITIALISM.test(word)) return 'starter';
    return 'split';
  }

  /** Start of the word ending at `end`, looking back at most MAX_LOOKAHEAD characters. */
  private wordStart(end: number): number | undefined {
    const limit = Math.max(this.pos, end - MAX_LOOKAHEAD);
    let start = end;
    while (start > limit && !isSpace(this.at(start - 1))) start--;
    return start > this.pos && !isSpace(this.at(start - 1)) ? undefined : start;
  }

  private afterOrdinalContext(wordStart: number): boolean {
    let end = wordStart;
    const limit = Math.max(this.pos, wordStart - MAX_LOOKAHEAD);
    while (end > limit && isSpace(this.at(end - 1))) end--;
    if (end === wordStart || end === limit) return false;
    const start = this.wordStart(end);
    return start !== undefined && ORDINAL_CONTEXT.has(this.slice(start, end).toLowerCase());
  }

  private slice(from: number, to: number): string {
    return this.buf.slice(from - this.base, to - this.base);
  }

  private noteSpace(i: number): void {
    if (this.content < 0) return;
    const prev = this.at(i - 1);
    if (isSpace(prev)) return;
    this.lastSpace = i;
    if (SEPARATORS.includes(prev)) this.lastSep = i;
    else if (DASHES.includes(prev) && i - 2 > this.content && isSpace(this.at(i - 2))) this.lastSep = i;
  }

  /** The long-sentence guard; runs after every step, so where it cuts depends on the text alone. */
  private guard(out: string[]): void {
    if (this.content < 0 || this.scan - this.content <= LONG_CHUNK) return;
    const long = this.scan - this.content > HARD_CHUNK;
    let cut = this.lastSep >= 0 ? this.lastSep : long ? this.lastSpace : -1;
    // Text without a single space (a looping model, a blob) is cut where it stands: the pending chunk never grows past HARD_CHUNK.
    if (cut < 0 && long) cut = this.scan;
    if (cut < 0) return;
    this.emit(out, cut);
    this.pos = cut;
    this.lastSep = -1;
    if (this.lastSpace <= cut) this.lastSpace = -1;
    let first = cut;
    while (first < this.scan && isSpace(this.at(first))) first++;
    this.content = first < this.scan ? first : -1;
  }

  private emit(out: string[], end: number): void {
    const text = (this.held.join('') + this.slice(Math.max(this.pos, this.base), end)).trim();
    this.held = [];
    if (text !== '') out.push(text);
  }

  private startChunk(at: number): void {
    this.pos = at;
    this.content = -1;
    this.lastSep = -1;
    this.lastSpace = -1;
    this.waiting = undefined;
  }

  /** Drops emitted text and parks old pending text, so pushes copy about a window, not the whole chunk. */
  private compact(): void {
    const target = Math.max(this.pos, this.scan - WINDOW);
    if (target <= this.base) return;
    if (this.pos < target) {
      // Parking in batches copies each character into `held` once.
      if (target - this.base < WINDOW) return;
      this.held.push(this.slice(Math.max(this.pos, this.base), target));
    }
    this.buf = this.buf.slice(target - this.base);
    this.base = target;
  }
}
