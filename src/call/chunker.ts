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
/** Past this, with no such separator at all, it is cut at its last space so speech never stalls. */
const HARD_CHUNK = 500;

const TERMINALS = '.!?…';
// `*`, `_` and `` ` `` close markdown emphasis/code the way quotes close speech: "**Done.** Next".
const CLOSERS = '"”’\')]»*_`';
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
  private buf = '';
  /** Start of the pending chunk in `buf`. */
  private pos = 0;
  /** Next index to examine; never passes an undecided cluster. */
  private scan = 0;
  /** First non-space index of the pending chunk, -1 while it is blank. */
  private content = -1;
  /** Cut index (the space) after the last `, ` / `; ` / `: ` / ` – `, or -1. */
  private lastSep = -1;
  /** Cut index at the last space following a word, or -1. */
  private lastSpace = -1;
  /** The cluster we stopped at, its rule and how far the following spaces were skipped. */
  private waiting: { at: number; rule: Rule; look: number } | undefined;

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
    this.emit(out, this.buf.length);
    this.buf = '';
    this.pos = 0;
    this.scan = 0;
    this.startChunk(0);
    return out;
  }

  private run(out: string[], final: boolean): void {
    const buf = this.buf;
    while (this.scan < buf.length) {
      const i = this.scan;
      const c = buf.charAt(i);
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
    const buf = this.buf;
    let termEnd = start;
    while (termEnd < buf.length && TERMINALS.includes(buf.charAt(termEnd))) termEnd++;
    let end = termEnd;
    while (end < buf.length && CLOSERS.includes(buf.charAt(end))) end++;
    if (end === buf.length) return final ? { kind: 'keep', end } : WAIT;
    // 3.50, example.com, v2.0.1, "Really?", she…
    if (!isSpace(buf.charAt(end))) return { kind: 'keep', end };

    const cached = this.waiting?.at === start ? this.waiting : undefined;
    const rule = cached ? cached.rule : this.classify(start, termEnd, end);
    if (rule === 'split' || rule === 'keep') return { kind: rule, end };

    let look = cached ? cached.look : end;
    while (look < buf.length && isSpace(buf.charAt(look)) && !isLineBreak(buf.charAt(look))) look++;
    if (look === buf.length && !final) {
      this.waiting = { at: start, rule, look };
      return WAIT;
    }
    if (look === buf.length || isLineBreak(buf.charAt(look))) return { kind: 'split', end };

    let tokenEnd = look;
    while (tokenEnd < buf.length && tokenEnd - look < MAX_LOOKAHEAD && !isSpace(buf.charAt(tokenEnd))) tokenEnd++;
    if (tokenEnd === buf.length && tokenEnd - look < MAX_LOOKAHEAD && !final) {
      this.waiting = { at: start, rule, look };
      return WAIT;
    }
    this.waiting = undefined;
    return { kind: judge(rule, buf.slice(look, tokenEnd)) ? 'split' : 'keep', end };
  }

  /** What the cluster itself and the word before it say; a Rule when the next word must decide. */
  private classify(start: number, termEnd: number, end: number): Rule | 'split' | 'keep' {
    const buf = this.buf;
    const terminals = buf.slice(start, termEnd);
    const closed = end > termEnd;
    if (terminals.includes('!') || terminals.includes('?')) return closed ? 'lowercase' : 'split';
    if (terminals !== '.') return 'lowercase'; // an ellipsis: "Communication... again"

    let wordStart = start;
    while (wordStart > this.pos && !isSpace(buf.charAt(wordStart - 1))) wordStart--;
    const word = buf.slice(wordStart, start).replace(OPENERS, '');
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

  private afterOrdinalContext(wordStart: number): boolean {
    const buf = this.buf;
    let end = wordStart;
    while (end > this.pos && isSpace(buf.charAt(end - 1))) end--;
    let start = end;
    while (start > this.pos && !isSpace(buf.charAt(start - 1))) start--;
    return start < end && ORDINAL_CONTEXT.has(buf.slice(start, end).toLowerCase());
  }

  private noteSpace(i: number): void {
    if (this.content < 0) return;
    const prev = this.buf.charAt(i - 1);
    if (isSpace(prev)) return;
    this.lastSpace = i;
    if (SEPARATORS.includes(prev)) this.lastSep = i;
    else if (DASHES.includes(prev) && i - 2 > this.content && isSpace(this.buf.charAt(i - 2))) this.lastSep = i;
  }

  /** The long-sentence guard; runs after every step, so where it cuts depends on the text alone. */
  private guard(out: string[]): void {
    if (this.content < 0 || this.scan - this.content <= LONG_CHUNK) return;
    const cut = this.lastSep >= 0 ? this.lastSep : this.scan - this.content > HARD_CHUNK ? this.lastSpace : -1;
    if (cut < 0) return;
    this.emit(out, cut);
    this.pos = cut;
    this.lastSep = -1;
    if (this.lastSpace <= cut) this.lastSpace = -1;
    let first = cut;
    while (first < this.scan && isSpace(this.buf.charAt(first))) first++;
    this.content = first < this.scan ? first : -1;
  }

  private emit(out: string[], end: number): void {
    const text = this.buf.slice(this.pos, end).trim();
    if (text !== '') out.push(text);
  }

  private startChunk(at: number): void {
    this.pos = at;
    this.content = -1;
    this.lastSep = -1;
    this.lastSpace = -1;
    this.waiting = undefined;
  }

  /** Drops emitted text so the buffer stays about one sentence long. */
  private compact(): void {
    const n = this.pos;
    if (n === 0) return;
    this.buf = this.buf.slice(n);
    this.pos = 0;
    this.scan -= n;
    if (this.content >= 0) this.content -= n;
    if (this.lastSep >= 0) this.lastSep -= n;
    if (this.lastSpace >= 0) this.lastSpace -= n;
    if (this.waiting) this.waiting = { ...this.waiting, at: this.waiting.at - n, look: this.waiting.look - n };
  }
}
