/**
 * Reads an utterance as speech-to-text wrote it into the signs a number is made of.
 *
 * Speech-to-text writes the same card number as "4111 1111 …", "four one one one, …",
 * "forty-one eleven …", "vier eins eins eins …", "٤١١١ …" or "４１１１ …", and an IBAN as
 * "DE89 3704 …" or "D E eight nine …". The redactor looks for numbers in what the words say, so
 * each word becomes a token carrying its signs: the digits of a numeral or a number word, the
 * letters of a word, both for a code like "DE89". Offsets stay those of the original text, so what
 * is not a number is kept as it was written.
 *
 * The text is normalised as it is read, never copied: a decimal digit of any script counts as its
 * ASCII digit, full-width Latin letters as their ASCII letters, and format characters (zero-width
 * spaces and joiners, direction marks, soft hyphens) as nothing at all, inside a word or between two.
 */
import { NUMBER_WORDS, type NumberWord } from './number-words.js';

export interface Token {
  /** Offset of the first character in the text. */
  readonly start: number;
  /** Offset just past the last character. */
  readonly end: number;
  /**
   * What the token says for a number, uppercase: "4111" for "4111" or "٤١١١", "4" for "four" or
   * "vier", "41" for "forty-one", "11" for "eleven", "44" for "double four", "DE89" for "de89",
   * "WEST" for "West"; empty for a word that cannot be part of a card or an IBAN (one with letters
   * beyond ASCII, like "für").
   */
  readonly signs: string;
  /** Only digits (a numeral, a number word, "double four"): can be part of a card number. */
  readonly digits: boolean;
  /** Only separators since the previous token (see isJoiner): the two may be one number said in groups. */
  readonly joined: boolean;
}

/** No number word is longer: longer words need not be lowercased and looked up. */
const LONGEST_NUMBER_WORD = Math.max(...[...NUMBER_WORDS.keys()].map((word) => word.length));

/**
 * A digit of any script, a format character or a full-width letter (the text needs reading), or a
 * number word as `readTokens` would read one, with the same notion of where a word begins and ends.
 * Built from the same list, so it can never miss one the tokenizer would find; alternatives of plain
 * words and one-character lookarounds, so it cannot backtrack.
 */
const DIGIT_SIGN = new RegExp(
  `[\\p{Nd}\\p{Cf}\\uFF21-\\uFF3A\\uFF41-\\uFF5A]|(?<![\\p{L}\\p{M}\\p{Nd}])(?:${trie([...NUMBER_WORDS].filter(([, word]) => word.kind !== 'repeat').map(([word]) => word))})(?![\\p{L}\\p{M}\\p{Nd}])`,
  'iu',
);

/**
 * The words as one alternation branching letter by letter ("f(?:o(?:ur|rty)|i(?:ve|fty))…"): the
 * regex tries a letter or two at each place instead of every word (the words are plain letters).
 */
function trie(words: readonly string[]): string {
  const byFirst = new Map<string, string[]>();
  let ends = false;
  for (const word of words) {
    if (word === '') ends = true;
    else byFirst.set(word.charAt(0), [...(byFirst.get(word.charAt(0)) ?? []), word.slice(1)]);
  }
  const branches = [...byFirst].map(([first, rests]) => `${first}${trie(rests)}`);
  if (branches.length === 0) return '';
  return ends ? `(?:${branches.join('|')})?` : branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}

/**
 * Whether the text says any digit at all: cards and IBANs both need some, most utterances have none,
 * and this one regex test costs a fraction of reading the tokens.
 */
export function saysAnyDigit(text: string): boolean {
  return DIGIT_SIGN.test(text);
}

/** What a character is to the tokenizer. */
const OTHER = 0;
const WORD = 1;
/** Invisible (\p{Cf}): neither part of a word's signs nor a break between two words. */
const FORMAT = 2;

/**
 * Splits the text into tokens, in order, in one pass. With `joinedAtStart` the first token is
 * `joined` when only separators come before it: the text may go on from words said before it.
 */
export function readTokens(text: string, joinedAtStart = false): Token[] {
  const words: Word[] = [];
  let gap = EMPTY_GAP;
  let at = 0;
  while (at < text.length) {
    const kind = kindAt(text, at);
    if (kind !== WORD) {
      if (kind !== FORMAT) gap = widened(gap, text.charCodeAt(at));
      at += widthAt(text, at);
      continue;
    }
    let end = at + widthAt(text, at);
    while (end < text.length && kindAt(text, end) !== OTHER) end += widthAt(text, end);
    words.push(readWord(text, at, end, (words.length > 0 || joinedAtStart) && joins(gap)));
    gap = EMPTY_GAP;
    at = end;
  }
  return combine(words);
}

/** What stands between two words: how many characters (format characters not counted), and of what kind. */
interface Gap {
  readonly length: number;
  /** Every character is a separator (see isJoiner). */
  readonly separators: boolean;
  /** A slash, underscore or plus among them. */
  readonly tight: boolean;
}

const EMPTY_GAP: Gap = { length: 0, separators: true, tight: false };

function widened(gap: Gap, code: number): Gap {
  return { length: gap.length + 1, separators: gap.separators && isJoiner(code), tight: gap.tight || isTightJoiner(code) };
}

/**
 * Whether the words on either side of the gap may be one number. A slash, underscore or plus joins
 * only on its own, inside a number ("4111/1111"): with spaces around it, it stands between two things.
 */
function joins(gap: Gap): boolean {
  return gap.separators && (!gap.tight || gap.length === 1);
}

/** A token as read, with what kind of number word it was (if one). */
interface Word {
  readonly token: Token;
  readonly number: NumberWord | undefined;
}

function readWord(text: string, start: number, end: number, joined: boolean): Word {
  let digitCount = 0;
  let asciiLetters = 0;
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (isDigitCode(code)) digitCount++;
    else if (isAsciiLetterCode(code)) asciiLetters++;
    else return readUnicodeWord(text, start, end, joined);
  }
  if (digitCount === end - start) return plainWord({ start, end, signs: text.slice(start, end), digits: true, joined });
  return readPlain(text.slice(start, end), start, end, joined, digitCount + asciiLetters === end - start);
}

/**
 * A word with characters beyond ASCII: read with digits of every script as ASCII digits, full-width
 * letters as ASCII letters, format characters left out. Other letters are kept, so "fünf" is still found.
 */
function readUnicodeWord(text: string, start: number, end: number, joined: boolean): Word {
  let plain = '';
  let digits = true;
  let ascii = true;
  for (let at = start; at < end; ) {
    const point = text.codePointAt(at)!;
    at += point > 0xffff ? 2 : 1;
    if (point < 128) {
      plain += String.fromCharCode(point);
      if (!isDigitCode(point)) digits = false;
      continue;
    }
    const char = String.fromCodePoint(point);
    if (FORMAT_CHAR.test(char)) continue;
    if (DECIMAL_DIGIT.test(char)) {
      plain += String.fromCharCode(48 + decimalValue(point));
      continue;
    }
    digits = false;
    const folded = fullWidthLetter(point);
    if (folded !== undefined) plain += folded;
    else {
      plain += char;
      ascii = false;
    }
  }
  if (plain === '') return plainWord({ start, end, signs: '', digits: false, joined });
  if (digits) return plainWord({ start, end, signs: plain, digits: true, joined });
  return readPlain(plain, start, end, joined, ascii);
}

/** A word without digits of other scripts: a number word, or letters (and digits) as they are. */
function readPlain(word: string, start: number, end: number, joined: boolean, ascii: boolean): Word {
  const number = word.length <= LONGEST_NUMBER_WORD ? NUMBER_WORDS.get(word.toLowerCase()) : undefined;
  if (number !== undefined && number.kind !== 'repeat') return { token: { start, end, signs: number.signs, digits: true, joined }, number };
  return { token: { start, end, signs: ascii ? word.toUpperCase() : '', digits: false, joined }, number };
}

function plainWord(token: Token): Word {
  return { token, number: undefined };
}

/**
 * Folds the words people say around digits into the digits: "double four" is "44", "triple one"
 * "111", "forty-one" and "forty one" "41" ("forty" alone is "40"). Anything else stays as it was.
 */
function combine(words: readonly Word[]): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < words.length; i++) {
    const { token, number } = words[i] as Word;
    const next = words[i + 1];
    const single = next !== undefined && next.token.joined && next.token.digits && next.token.signs.length === 1;
    if (single && number?.kind === 'repeat') {
      tokens.push({ start: token.start, end: next.token.end, signs: next.token.signs.repeat(number.times), digits: true, joined: token.joined });
      i++;
    } else if (single && number?.kind === 'tens' && next.number?.kind === 'digit' && next.token.signs !== '0') {
      tokens.push({ start: token.start, end: next.token.end, signs: `${token.signs.charAt(0)}${next.token.signs}`, digits: true, joined: token.joined });
      i++;
    } else {
      tokens.push(token);
    }
  }
  return tokens;
}

/** What may stand between the groups of one number: how people and speech-to-text group digits. */
function isJoiner(code: number): boolean {
  if (code < 128) return ASCII_JOINERS[code] !== 0;
  return JOINER.test(String.fromCharCode(code));
}

function isTightJoiner(code: number): boolean {
  return code < 128 ? ASCII_JOINERS[code] === TIGHT : TIGHT_JOINER.test(String.fromCharCode(code));
}

/** Space, tab, line breaks, comma, dash and dot; slash, underscore and plus only inside a number (TIGHT). */
const ASCII_JOINERS = new Uint8Array(128);
const TIGHT = 2;
for (const char of ' \t\n\r\v\f,-.') ASCII_JOINERS[char.charCodeAt(0)] = 1;
for (const char of '/_+') ASCII_JOINERS[char.charCodeAt(0)] = TIGHT;
/** Spaces and dashes of every kind, line and paragraph separators, Arabic and full-width separators. */
const JOINER = /[\p{Zs}\p{Pd}\u0085\u2028\u2029\u060C\u066B\u066C\uFF0B\uFF0C\uFF0E\uFF0F\uFF3F]/u;
/** The full-width slash, underscore and plus. */
const TIGHT_JOINER = /[\uFF0B\uFF0F\uFF3F]/u;

const LETTER = /[\p{L}\p{M}]/u;
const DECIMAL_DIGIT = /\p{Nd}/u;
const FORMAT_CHAR = /\p{Cf}/u;

/**
 * Whether the character at `at` is part of a word, a format character, or neither. Outside the BMP a
 * character that is no digit or format character counts as part of a word: "𝐀one" must not yield a
 * "one" that `saysAnyDigit`, which sees the whole letter, does not.
 */
function kindAt(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code < 128) return isDigitCode(code) || isAsciiLetterCode(code) ? WORD : OTHER;
  if (code >= 0xd800 && code <= 0xdfff) {
    const point = text.codePointAt(at)!;
    if (point <= 0xffff) return WORD;
    return FORMAT_CHAR.test(String.fromCodePoint(point)) ? FORMAT : WORD;
  }
  const char = text.charAt(at);
  if (LETTER.test(char) || DECIMAL_DIGIT.test(char)) return WORD;
  return FORMAT_CHAR.test(char) ? FORMAT : OTHER;
}

/** Code units of the character at `at`: two for a whole surrogate pair. */
function widthAt(text: string, at: number): number {
  const code = text.charCodeAt(at);
  if (code < 0xd800 || code > 0xdbff) return 1;
  const low = text.charCodeAt(at + 1);
  return low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
}

/** Digit values of the decimal digits met so far, by code point. */
const decimalValues = new Map<number, number>();

/**
 * The value of a decimal digit of any script. Unicode assigns every script's digits 0 to 9 as ten
 * consecutive code points, so the value is the distance from the start of the digits' block, modulo
 * 10 (some blocks hold several sets, like the mathematical digits). Found once per digit, then kept.
 */
function decimalValue(point: number): number {
  let value = decimalValues.get(point);
  if (value !== undefined) return value;
  let first = point;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(first - 1))) first--;
  value = (point - first) % 10;
  decimalValues.set(point, value);
  return value;
}

/** The ASCII letter of a full-width Latin letter (Ａ–Ｚ, ａ–ｚ). */
function fullWidthLetter(point: number): string | undefined {
  if (point >= 0xff21 && point <= 0xff3a) return String.fromCharCode(point - 0xff21 + 65);
  if (point >= 0xff41 && point <= 0xff5a) return String.fromCharCode(point - 0xff41 + 97);
  return undefined;
}

function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isAsciiLetterCode(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
