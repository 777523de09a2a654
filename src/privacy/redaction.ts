/**
 * Takes card numbers, IBANs and whatever else the business names out of what callers say, before it
 * reaches a transcript, the database, a log or a webhook (GDPR; PCI DSS for cards).
 *
 * Numbers are found in what the words say, not in how they are written (see spoken-digits.ts), and
 * only when their check digits hold: a card number passes Luhn, an IBAN mod 97 at its country's
 * length. A number that fails is an order number, a phone number or a date, and stays.
 *
 * This runs on every utterance on the call's event loop: one pass over the text to read it, a bounded
 * amount of work per word after that, and no regular expression of its own that can backtrack.
 * The configured patterns are the operator's own; how fast they run is up to them.
 */
import { CARD_MAX_DIGITS, CARD_MIN_DIGITS, ibanLength, ibanValid, luhnValid, luhnWindow } from './checksums.js';
import { readTokens, saysAnyDigit, type Token } from './spoken-digits.js';

export { ibanValid, luhnValid } from './checksums.js';

export const CARD_PLACEHOLDER = '[card number]';
export const IBAN_PLACEHOLDER = '[IBAN]';
/** The kinds `found` reports for the built-in numbers; configured patterns report their own names. */
export const CARD_KIND = 'card';
export const IBAN_KIND = 'iban';

export interface RedactPattern {
  readonly name: string;
  readonly regex: RegExp;
}

export interface RedactionOptions {
  readonly cards: boolean;
  readonly ibans: boolean;
  readonly patterns: readonly RedactPattern[];
}

export interface Redaction {
  /** The text with each redacted stretch replaced by its placeholder; the very same string when nothing was. */
  readonly text: string;
  /** The kinds redacted, each once, in the order they first appear in the text. */
  readonly found: string[];
}

export interface Redactor {
  /** False when nothing is to be redacted: callers may skip `redact` altogether. */
  readonly active: boolean;
  /** Whether cards or IBANs are redacted: a number may then be said across two utterances (caller-lines.ts). */
  readonly numbers: boolean;
  redact(text: string): Redaction;
  /** The stretches `redact` replaces: the numbers and the pattern matches. */
  spans(text: string): Span[];
  /** The stretches of `text` that are a card or an IBAN (as enabled), in order. */
  numberSpans(text: string): Span[];
}

/** One stretch of the original text to replace. */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly kind: string;
  readonly placeholder: string;
}

interface CompiledPattern {
  readonly kind: string;
  readonly placeholder: string;
  readonly regex: RegExp;
}

export function createRedactor(options: RedactionOptions): Redactor {
  const patterns = options.patterns.map(compilePattern);
  const active = options.cards || options.ibans || patterns.length > 0;
  const spans = (text: string): Span[] => (active ? [...numberSpans(text, options.cards, options.ibans), ...patternSpans(text, patterns)] : []);
  return {
    active,
    numbers: options.cards || options.ibans,
    redact(text: string): Redaction {
      return replaceSpans(text, spans(text));
    },
    spans,
    numberSpans: (text) => numberSpans(text, options.cards, options.ibans),
  };
}

/**
 * Every match counts, so the pattern is made global; sticky is dropped, as it would only match where
 * the last match ended and let everything after a gap through.
 */
function compilePattern(pattern: RedactPattern): CompiledPattern {
  const unstuck = pattern.regex.flags.replace('y', '');
  const flags = unstuck.includes('g') ? unstuck : `${unstuck}g`;
  const regex = flags === pattern.regex.flags ? pattern.regex : new RegExp(pattern.regex.source, flags);
  return { kind: pattern.name, placeholder: `[${pattern.name}]`, regex };
}

function patternSpans(text: string, patterns: readonly CompiledPattern[]): Span[] {
  const spans: Span[] = [];
  for (const { kind, placeholder, regex } of patterns) {
    // matchAll works on a copy of the regex, so a shared RegExp's lastIndex is never disturbed.
    for (const match of text.matchAll(regex)) {
      if (match[0].length > 0) spans.push({ start: match.index, end: match.index + match[0].length, kind, placeholder });
    }
  }
  return spans;
}

/** The IBANs and card numbers, in order; an IBAN is read first, as its digits alone could pass for a card. */
function numberSpans(text: string, cards: boolean, ibans: boolean): Span[] {
  if ((!cards && !ibans) || !saysAnyDigit(text)) return [];
  const tokens = readTokens(text);
  if (!mayHoldNumber(tokens, cards, ibans)) return [];
  const spans: Span[] = [];
  let at = 0;
  while (at < tokens.length) {
    const ibanLast = ibans ? ibanEnd(tokens, at) : -1;
    if (ibanLast >= 0) {
      spans.push(tokenSpan(tokens, at, ibanLast, IBAN_KIND, IBAN_PLACEHOLDER));
      at = ibanLast + 1;
      continue;
    }
    const runLast = cards ? digitRunEnd(tokens, at) : -1;
    if (runLast >= 0 && runHoldsCard(text, tokens, at, runLast)) spans.push(tokenSpan(tokens, at, runLast, CARD_KIND, CARD_PLACEHOLDER));
    at = Math.max(at, runLast) + 1;
  }
  return spans;
}

/**
 * The second way out, once the words are read: a card needs 13 digits, an IBAN at least 15 signs with
 * its two check digits, and an utterance with a digit or two ("the one I ordered") has neither.
 */
function mayHoldNumber(tokens: readonly Token[], cards: boolean, ibans: boolean): boolean {
  let cardDigits = 0;
  let codes = false;
  let signs = 0;
  for (const token of tokens) {
    if (token.digits) cardDigits += token.signs.length;
    else codes ||= hasDigit(token.signs);
    signs += token.signs.length;
  }
  return (cards && cardDigits >= CARD_MIN_DIGITS) || (ibans && (cardDigits >= 2 || codes) && signs >= SHORTEST_IBAN);
}

/** A word with digits in it, like "DE89": an IBAN written without spaces. */
function hasDigit(signs: string): boolean {
  for (let at = 0; at < signs.length; at++) {
    if (isDigitCode(signs.charCodeAt(at))) return true;
  }
  return false;
}

const SHORTEST_IBAN = 15;
/** No IBAN is longer than 34; one more sign tells that a run went past the length it should have had. */
const LONGEST_IBAN_READ = 35;

/**
 * Index of the last token of the IBAN starting at token `first`, or -1. The country's IBAN length says
 * where it ends, and that has to be the end of a word: an IBAN is not half of something longer.
 */
function ibanEnd(tokens: readonly Token[], first: number): number {
  if (!isLetterCode((tokens[first] as Token).signs.charCodeAt(0))) return -1;
  let compact = '';
  let length: number | undefined;
  for (let at = first; at < tokens.length; at++) {
    const token = tokens[at] as Token;
    if (token.signs === '' || (at > first && !token.joined)) return -1;
    compact += token.signs.slice(0, LONGEST_IBAN_READ - compact.length);
    if (length === undefined && compact.length >= 4) {
      length = ibanLength(compact);
      if (length === undefined || !isDigitCode(compact.charCodeAt(2)) || !isDigitCode(compact.charCodeAt(3))) return -1;
    }
    if (length !== undefined && compact.length >= length) return compact.length === length && ibanValid(compact) ? at : -1;
  }
  return -1;
}

/** Index of the last token of the run of digit tokens said together from token `first`, or -1 if it is no digit. */
function digitRunEnd(tokens: readonly Token[], first: number): number {
  if (!(tokens[first] as Token).digits) return -1;
  let last = first;
  while (last + 1 < tokens.length && (tokens[last + 1] as Token).digits && (tokens[last + 1] as Token).joined) last++;
  return last;
}

/**
 * Whether the digits of tokens first..last hold a card number. A card is then the likeliest reading
 * of the whole run: digits said in the same breath as a card number are mostly its expiry date and
 * security code, which must not be kept either, so the caller redacts the run, not just the card.
 *
 * The run as a whole is a card when it has a card's length, passes Luhn and does not start with 0 (no
 * card does; a phone number written "0049 151 …" does, and may well pass). A card inside a longer run
 * can only start and end where a word or group does, and starts like one (first digit 2 to 6: Mastercard,
 * Amex, Diners, JCB, Visa, Discover, Maestro, UnionPay) since each extra place looked at is another
 * one-in-ten chance for digits that are no card to pass Luhn.
 */
function runHoldsCard(text: string, tokens: readonly Token[], first: number, last: number): boolean {
  const run = tokens.slice(first, last + 1);
  const digits = run.map((token) => token.signs).join('');
  if (digits.length < CARD_MIN_DIGITS) return false;
  const phone = saidAsPhoneNumber(text, tokens, first);
  if (!phone && digits.length <= CARD_MAX_DIGITS && digits.charCodeAt(0) !== ZERO && luhnValid(digits)) return true;
  const cuts = groupEdges(run, digits.length);
  for (let start = phone ? 1 : 0; start <= digits.length - CARD_MIN_DIGITS; start++) {
    if (!cuts[start] || !startsLikeCard(digits.charCodeAt(start))) continue;
    if (luhnWindow(digits, start, CARD_MIN_DIGITS, CARD_MAX_DIGITS, (end) => cuts[end] === true) > 0) return true;
  }
  return false;
}

/**
 * Where in the run's digits a word or group begins or ends. A numeral too long to be one card has the
 * spaces missing that speech-to-text left out, so any of its digits may begin or end one.
 */
function groupEdges(run: readonly Token[], length: number): boolean[] {
  const cuts = new Array<boolean>(length + 1).fill(false);
  let offset = 0;
  for (const token of run) {
    cuts[offset] = true;
    if (token.signs.length > CARD_MAX_DIGITS) cuts.fill(true, offset, offset + token.signs.length);
    offset += token.signs.length;
  }
  cuts[length] = true;
  return cuts;
}

/** A number after "+" or "plus" is a phone number with its country code, which no card number is written as. */
function saidAsPhoneNumber(text: string, tokens: readonly Token[], first: number): boolean {
  let before = (tokens[first] as Token).start - 1;
  while (before >= 0 && text.charCodeAt(before) === SPACE) before--;
  if (before >= 0 && text.charCodeAt(before) === PLUS) return true;
  const previous = tokens[first - 1];
  return previous !== undefined && (tokens[first] as Token).joined && previous.signs === 'PLUS';
}

function startsLikeCard(code: number): boolean {
  return code >= ZERO + 2 && code <= ZERO + 6;
}

function tokenSpan(tokens: readonly Token[], first: number, last: number, kind: string, placeholder: string): Span {
  return { start: (tokens[first] as Token).start, end: (tokens[last] as Token).end, kind, placeholder };
}

/**
 * Writes the placeholders. Overlapping stretches (a pattern matching part of a card number) become one,
 * with the placeholder of the one that starts first, so no part of either is left behind; `found`
 * still names both. No stretches: the very same string.
 */
export function replaceSpans(text: string, spans: readonly Span[]): Redaction {
  if (spans.length === 0) return { text, found: [] };
  // Stable: at the same start, numbers come before patterns and patterns keep their configured order.
  spans = [...spans].sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  const found: string[] = [];
  let copied = 0;
  let current: Span | undefined;
  for (const span of spans) {
    if (!found.includes(span.kind)) found.push(span.kind);
    if (current !== undefined && span.start < current.end) {
      if (span.end > current.end) current = { ...current, end: span.end };
      continue;
    }
    if (current !== undefined) copied = writeSpan(text, current, copied, parts);
    current = span;
  }
  if (current !== undefined) copied = writeSpan(text, current, copied, parts);
  parts.push(text.slice(copied));
  return { text: parts.join(''), found };
}

function writeSpan(text: string, span: Span, copied: number, parts: string[]): number {
  parts.push(text.slice(copied, span.start), span.placeholder);
  return span.end;
}

const ZERO = 48;
const SPACE = 32;
const PLUS = 43;

function isDigitCode(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9;
}

function isLetterCode(code: number): boolean {
  return code >= 65 && code <= 90;
}

/** A configured pattern that cannot be used; the message names the entry and says why. */
export class RedactPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedactPatternError';
  }
}

const PATTERN_NAME = /^[A-Za-z0-9_-]+$/;
const REGEX_FLAGS = /^[a-z]*$/;

/**
 * Reads patterns in their environment-variable form: entries separated by newlines or `;;`, each
 * `name=regex` or `name=/regex/flags`. Blank entries are skipped and whitespace around names and
 * regexes is ignored (match a space at a regex's edge with `\s` or `[ ]`). Every mistake throws: a
 * pattern that silently does nothing would let the data it was meant to catch through.
 */
export function parseRedactPatterns(text: string): RedactPattern[] {
  const patterns: RedactPattern[] = [];
  const positions = new Map<string, number>();
  text.split(/\r?\n|;;/).forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === '') return;
    const position = index + 1;
    const pattern = parseEntry(entry, position);
    const earlier = positions.get(pattern.name);
    if (earlier !== undefined) throw new RedactPatternError(`redaction pattern ${position} (${pattern.name}): name already used by pattern ${earlier}`);
    positions.set(pattern.name, position);
    patterns.push(pattern);
  });
  return patterns;
}

function parseEntry(entry: string, position: number): RedactPattern {
  const equals = entry.indexOf('=');
  if (equals < 0) throw new RedactPatternError(`redaction pattern ${position} (${excerpt(entry)}): expected name=regex`);
  const name = entry.slice(0, equals).trim();
  const label = `redaction pattern ${position} (${name === '' ? excerpt(entry) : name})`;
  if (name === '') throw new RedactPatternError(`${label}: empty name`);
  if (!PATTERN_NAME.test(name)) throw new RedactPatternError(`${label}: the name may only have letters, digits, "_" and "-"`);
  const { source, flags } = splitRegex(entry.slice(equals + 1).trim());
  if (source === '') throw new RedactPatternError(`${label}: empty regex`);
  try {
    return { name, regex: new RegExp(source, flags) };
  } catch (error) {
    throw new RedactPatternError(`${label}: bad regex: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** `/source/flags` when written so; otherwise the whole value is the source (which may contain slashes). */
function splitRegex(value: string): { source: string; flags: string } {
  const close = value.lastIndexOf('/');
  if (value.startsWith('/') && close > 0 && REGEX_FLAGS.test(value.slice(close + 1))) return { source: value.slice(1, close), flags: value.slice(close + 1) };
  return { source: value, flags: '' };
}

/** Enough of a broken entry to find it, not so much that a long one floods the message. */
function excerpt(entry: string): string {
  return entry.length <= 40 ? JSON.stringify(entry) : `${JSON.stringify(entry.slice(0, 40))}…`;
}
