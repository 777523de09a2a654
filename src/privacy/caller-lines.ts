/**
 * A call's caller utterances read one after another, so that a card or an IBAN said across two of
 * them is found: speech-to-text ends an utterance at a pause, and people pause between the groups of
 * a number ("4242 4242" … "4242 4242"). Neither half is a number on its own; together they are.
 *
 * Each utterance leaves a carry: the words at its end that may begin a number (a run of digits, or
 * an IBAN's country code and what follows it), at most an IBAN's length. The next utterance, when
 * it begins with more of the same (only separators, or a filler like "and" or "uh", before its first
 * word), is read after the carry: a number that starts in the carry and ends in it is taken out of
 * it, and out of the earlier utterances the carry came from, which are `amended`. Utterances whose
 * words run on from one to the next (a number read out in three breaths) carry each other along.
 *
 * What was written of the earlier utterance already cannot always be changed: the transcript holds
 * an utterance back while its end may begin a number and holds more than six digits (`heldFrom`:
 * "my order is 4711" is written at once, as the live story shows it), the record is rewritten from the
 * conversation anyway, but a log line, a trace and the live view are out at once. Those get
 * `provisional`: the end that may begin a number masked as soon as it holds more digits than the
 * first six of a card, which may be shown (PCI DSS); fewer say nothing of the number.
 */
import type { CallerLine, CallerLines } from '../call/ports/redaction.js';
import { CARD_MAX_DIGITS, ibanLength } from './checksums.js';
import { replaceSpans, type Redactor, type Span } from './redaction.js';
import { readTokens, saysAnyDigit, type Token } from './spoken-digits.js';

/** What an utterance whose end may begin a number is written as where it cannot be taken back. */
export const PARTIAL_PLACEHOLDER = '[number]';

/** The most signs carried: the longest IBAN. */
const LONGEST_CARRY = 34;
/** The leading digits of a card that may be shown; an end with more is masked where it cannot be amended. */
const SHOWN_DIGITS = 6;
/** How much of an utterance's end is read for what may begin a number: a carry spelled out word by word fits. */
const WINDOW = 320;
/** Most ends hold no number: a short look at them first, the whole window only when a number may reach further back. */
const SHORT_TAIL = 48;
/** How much of an utterance's beginning is read for what goes on from the carry. */
const HEAD = 64;
/** Words that may stand between the two halves of a number said in two breaths. */
const FILLERS: ReadonlySet<string> = new Set([
  'and', 'then', 'so', 'okay', 'ok', 'yes', 'yeah', 'well', 'uh', 'um', 'uhm', 'er', 'erm', 'hmm',
  'und', 'dann', 'also', 'ja', 'genau', 'noch', 'äh', 'ähm', 'öh',
]);
/** At most so many fillers are looked past, at an utterance's beginning or end. */
const MAX_FILLERS = 3;

/** One utterance, while a number it ends with may still be completed. */
interface Said {
  readonly seq: number;
  readonly raw: string;
  /** Stretches taken out because a later utterance completed a number with them. */
  readonly extra: Span[];
}

/** The part of an utterance carried on: `raw.slice(start, end)`. */
interface Piece {
  readonly said: Said;
  readonly start: number;
  readonly end: number;
  readonly signs: number;
  readonly digits: number;
}

/** A new reader of caller utterances for each call. */
export function callerLinesOf(redactor: Redactor): () => CallerLines {
  return () => new CarriedLines(redactor);
}

class CarriedLines implements CallerLines {
  private seq = 0;
  private carry: Piece[] = [];

  constructor(private readonly redactor: Redactor) {}

  said(text: string): CallerLine {
    const said: Said = { seq: ++this.seq, raw: text, extra: [] };
    const own = this.redactor.spans(text);
    if (!this.redactor.numbers) {
      const redacted = replaceSpans(text, own).text;
      return { seq: said.seq, text: redacted, provisional: redacted, amended: [], heldFrom: undefined };
    }
    // Only what may go on from the carry is read at the beginning: a few fillers and the first word.
    const lead = this.carry.length > 0 ? continuation(text, readTokens(text.slice(0, HEAD), true)) : undefined;
    const amended = lead !== undefined ? this.complete(said, own, lead) : [];
    const short = tailOf(text, SHORT_TAIL);
    const tail = short === FURTHER ? tailOf(text, WINDOW) : short;
    this.carry = nextCarry(this.carry, lead, tail === undefined || tail === FURTHER ? undefined : { said, start: tail.start, end: tail.end, signs: tail.signs, digits: tail.digits });
    const digits = this.carry.reduce((sum, piece) => sum + piece.digits, 0);
    const kept = [...own, ...said.extra];
    const shown = tail !== undefined && tail !== FURTHER && digits > SHOWN_DIGITS ? [...kept, { start: tail.digitsFrom, end: tail.end, kind: 'partial', placeholder: PARTIAL_PLACEHOLDER }] : kept;
    return {
      seq: said.seq,
      text: replaceSpans(text, kept).text,
      provisional: replaceSpans(text, shown).text,
      amended,
      // An end of six digits or fewer says nothing of a card (its first six may be shown): written at once.
      heldFrom: digits > SHOWN_DIGITS ? this.carry[0]!.said.seq : undefined,
    };
  }

  /**
   * Reads the carry and the utterance from `lead` on as one: each number that starts in the carry and
   * ends in the utterance, which the utterance's own numbers do not cover already, is taken out of both.
   */
  private complete(said: Said, own: readonly Span[], lead: number): { seq: number; text: string }[] {
    let combined = '';
    const offsets: number[] = [];
    for (const piece of this.carry) {
      offsets.push(combined.length);
      combined += `${piece.said.raw.slice(piece.start, piece.end)} `;
    }
    const from = combined.length;
    combined += said.raw.slice(lead);
    const touched = new Set<Said>();
    for (const span of this.redactor.numberSpans(combined)) {
      if (span.start >= from || span.end <= from) continue;
      const end = lead + span.end - from;
      if (own.some((mine) => mine.start <= lead && mine.end >= end)) continue;
      said.extra.push({ start: lead, end, kind: span.kind, placeholder: span.placeholder });
      this.carry.forEach((piece, i) => {
        const at = offsets[i]!;
        if (span.start >= at + piece.end - piece.start) return;
        piece.said.extra.push({ start: piece.start + Math.max(0, span.start - at), end: piece.end, kind: span.kind, placeholder: span.placeholder });
        touched.add(piece.said);
      });
    }
    return [...touched].map((earlier) => ({ seq: earlier.seq, text: replaceSpans(earlier.raw, [...this.redactor.spans(earlier.raw), ...earlier.extra]).text }));
  }
}

/**
 * Where the utterance's words go on from the ones before it: its first word when only separators come
 * before it, past up to MAX_FILLERS fillers; undefined when it begins with anything else.
 */
function continuation(text: string, head: readonly Token[]): number | undefined {
  let at = 0;
  while (at < MAX_FILLERS && head[at]?.joined && isFiller(text, head[at]!) && head[at + 1]?.joined) at++;
  const first = head[at];
  return first?.joined && first.signs !== '' ? first.start : undefined;
}

/** Said by tailOf when what may begin a number reaches back to the start of its window: a longer one finds where. */
const FURTHER = Symbol('further');

interface Tail {
  readonly start: number;
  readonly end: number;
  readonly signs: number;
  readonly digits: number;
  /** Where its first digit is said. */
  readonly digitsFrom: number;
}

/** The end of the utterance that may begin a number, read from its last `window` characters; undefined when none does. */
function tailOf(text: string, window: number): Tail | undefined | typeof FURTHER {
  // Read from a space, so that no word is cut in two.
  const offset = text.length > window ? text.indexOf(' ', text.length - window) : 0;
  if (offset < 0) return undefined;
  const part = offset > 0 ? text.slice(offset) : text;
  if (!saysAnyDigit(part)) return countryCodeAtEnd(part, offset);
  const tokens = readTokens(part);
  let last = tokens.length - 1;
  for (let skipped = 0; last > 0 && skipped < MAX_FILLERS && isFiller(text.slice(offset), tokens[last]!) && tokens[last]!.joined; skipped++) last--;
  let first = last;
  let signs = tokens[last]?.signs.length ?? 0;
  if (signs === 0) return undefined;
  while (first > 0 && tokens[first]!.joined && tokens[first - 1]!.signs !== '' && signs + tokens[first - 1]!.signs.length <= LONGEST_CARRY) {
    first--;
    signs += tokens[first]!.signs.length;
  }
  // The run reaches the window's start: it may go on before it.
  if (first === 0 && offset > 0 && window < WINDOW) return FURTHER;
  for (let start = first; start <= last; start++) {
    const run = tokens.slice(start, last + 1);
    if (!mayBeginNumber(run)) continue;
    const digits = run.reduce((sum, token) => sum + countDigits(token.signs), 0);
    const digitsFrom = offset + (run.find((token) => countDigits(token.signs) > 0)?.start ?? run.at(-1)!.end);
    return { start: offset + run[0]!.start, end: offset + run.at(-1)!.end, signs: run.reduce((sum, token) => sum + token.signs.length, 0), digits, digitsFrom };
  }
  return undefined;
}

/**
 * Without a digit, only an IBAN's country code said last may begin a number ("… my IBAN is D E"):
 * found without reading the words, as most utterances end so.
 */
function countryCodeAtEnd(part: string, offset: number): Tail | undefined {
  const found = COUNTRY_AT_END.exec(part);
  if (!found || ibanLength(`${found[1]}${found[2]}`.toUpperCase()) === undefined) return undefined;
  const end = offset + found.indices![2]![1];
  return { start: offset + found.index, end, signs: 2, digits: 0, digitsFrom: end };
}

/** Two letters last, alone or apart ("DE", "D E", "d-e"), with nothing but punctuation after them. */
const COUNTRY_AT_END = /(?<![\p{L}\p{M}\p{Nd}])([A-Za-z])[ ,.-]*([A-Za-z])(?![\p{L}\p{M}\p{Nd}])[^\p{L}\p{M}\p{Nd}]*$/du;

/** Whether the tokens, said last, may be the beginning of a card number (digits only, fewer than a card has) or of an IBAN. */
function mayBeginNumber(run: readonly Token[]): boolean {
  if (run.every((token) => token.digits)) return run.reduce((sum, token) => sum + token.signs.length, 0) < CARD_MAX_DIGITS;
  const compact = run.map((token) => token.signs).join('');
  if (!isLetter(compact.charCodeAt(0)) || (compact.length > 1 && !isLetter(compact.charCodeAt(1)))) return false;
  if (compact.length < 2) return true;
  const length = ibanLength(compact);
  if (length === undefined || compact.length >= length) return false;
  return (compact.length < 3 || isDigit(compact.charCodeAt(2))) && (compact.length < 4 || isDigit(compact.charCodeAt(3)));
}

/**
 * The carry after an utterance: its end, after the carry before it when the whole utterance went on
 * from that (the number is still being said), kept to the last LONGEST_CARRY signs.
 */
function nextCarry(carry: readonly Piece[], lead: number | undefined, tail: Piece | undefined): Piece[] {
  if (tail === undefined) return [];
  const pieces = lead !== undefined && tail.start === lead ? [...carry, tail] : [tail];
  let signs = 0;
  let first = pieces.length;
  while (first > 0 && (first === pieces.length || signs + pieces[first - 1]!.signs <= LONGEST_CARRY)) signs += pieces[--first]!.signs;
  return pieces.slice(first);
}

function isFiller(text: string, token: Token): boolean {
  return token.end - token.start <= 5 && FILLERS.has(text.slice(token.start, token.end).toLowerCase());
}

function countDigits(signs: string): number {
  let digits = 0;
  for (let at = 0; at < signs.length; at++) if (isDigit(signs.charCodeAt(at))) digits++;
  return digits;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isLetter(code: number): boolean {
  return code >= 65 && code <= 90;
}
