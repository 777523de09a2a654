/**
 * Reads an utterance as speech-to-text wrote it into the signs a number is made of.
 *
 * Speech-to-text writes the same card number as "4111 1111 …", "four one one one, …" or
 * "vier eins eins eins …", and an IBAN as "DE89 3704 …" or "D E eight nine …". The redactor
 * looks for numbers in what the words say, so each word becomes a token carrying its signs:
 * the digits of a numeral or a digit word, the letters of a word, both for a code like "DE89".
 * Offsets stay those of the original text, so what is not a number is kept as it was written.
 */

export interface Token {
  /** Offset of the first character in the text. */
  readonly start: number;
  /** Offset just past the last character. */
  readonly end: number;
  /**
   * What the token says for a number, uppercase: "4111" for "4111", "4" for "four" or "vier",
   * "44" for "double four", "DE89" for "de89", "WEST" for "West"; empty for a word that cannot be
   * part of a card or an IBAN (one with letters beyond ASCII, like "für").
   */
  readonly signs: string;
  /** Only digits (a numeral, a digit word, "double four"): can be part of a card number. */
  readonly digits: boolean;
  /** Only spaces, commas, dashes or dots since the previous token: the two may be one number said in groups. */
  readonly joined: boolean;
}

/** Digit words of English and German, lowercase. "ein" is German for "one" as said in numbers. */
const DIGIT_WORDS: ReadonlyMap<string, string> = new Map([
  ['zero', '0'], ['oh', '0'], ['nought', '0'], ['naught', '0'], ['one', '1'], ['two', '2'], ['three', '3'],
  ['four', '4'], ['five', '5'], ['six', '6'], ['seven', '7'], ['eight', '8'], ['nine', '9'],
  ['null', '0'], ['eins', '1'], ['ein', '1'], ['zwei', '2'], ['zwo', '2'], ['drei', '3'], ['vier', '4'],
  ['fünf', '5'], ['fuenf', '5'], ['sechs', '6'], ['sieben', '7'], ['acht', '8'], ['neun', '9'],
]);

/** "double four" is "44", "triple one" "111", "doppel vier" "44". */
const REPEATS: ReadonlyMap<string, number> = new Map([
  ['double', 2], ['triple', 3], ['treble', 3], ['doppel', 2],
]);

/** No digit or repeat word is longer: longer words need not be lowercased and looked up. */
const LONGEST_NUMBER_WORD = 6;

/**
 * A digit or a digit word as `readTokens` would read one, with the same notion of where a word begins
 * and ends. Built from the same list, so it can never miss one the tokenizer would find; alternatives
 * of plain words and one-character lookarounds, so it cannot backtrack.
 */
const DIGIT_SIGN = new RegExp(`\\d|(?<![\\p{L}\\p{M}\\d])(?:${[...DIGIT_WORDS.keys()].join('|')})(?![\\p{L}\\p{M}\\d])`, 'iu');

/**
 * Whether the text says any digit at all: cards and IBANs both need some, most utterances have none,
 * and this one regex test costs a fraction of reading the tokens.
 */
export function saysAnyDigit(text: string): boolean {
  return DIGIT_SIGN.test(text);
}

/** Splits the text into tokens, in order, in one pass. */
export function readTokens(text: string): Token[] {
  const tokens: Token[] = [];
  let joined = false;
  let at = 0;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (!isWordCode(code, text, at)) {
      joined &&= isJoiner(code);
      at++;
      continue;
    }
    let end = at + 1;
    while (end < text.length && isWordCode(text.charCodeAt(end), text, end)) end++;
    tokens.push(readWord(text, at, end, joined));
    joined = true;
    at = end;
  }
  return applyRepeats(text, tokens);
}

function readWord(text: string, start: number, end: number, joined: boolean): Token {
  let digitCount = 0;
  let asciiLetters = 0;
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (isDigitCode(code)) digitCount++;
    else if (isAsciiLetterCode(code)) asciiLetters++;
  }
  const length = end - start;
  if (digitCount === length) return { start, end, signs: text.slice(start, end), digits: true, joined };
  const word = length <= LONGEST_NUMBER_WORD ? DIGIT_WORDS.get(text.slice(start, end).toLowerCase()) : undefined;
  if (word !== undefined) return { start, end, signs: word, digits: true, joined };
  const ascii = digitCount + asciiLetters === length;
  return { start, end, signs: ascii ? text.slice(start, end).toUpperCase() : '', digits: false, joined };
}

/** Folds a repeat word into the single digit after it; otherwise it stays a word like any other. */
function applyRepeats(text: string, tokens: Token[]): Token[] {
  const result: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    const next = tokens[i + 1];
    const times = token.end - token.start <= LONGEST_NUMBER_WORD && !token.digits ? REPEATS.get(text.slice(token.start, token.end).toLowerCase()) : undefined;
    if (times !== undefined && next !== undefined && next.joined && next.digits && next.signs.length === 1) {
      result.push({ start: token.start, end: next.end, signs: next.signs.repeat(times), digits: true, joined: token.joined });
      i++;
    } else {
      result.push(token);
    }
  }
  return result;
}

/** What may stand between the groups of one number: how people and speech-to-text group digits. */
function isJoiner(code: number): boolean {
  return code === 32 || code === 9 || code === 44 || code === 45 || code === 46 || code === 0xa0 || code === 0x2013 || code === 0x2014 || code === 0x202f;
}

const NON_ASCII_LETTER = /[\p{L}\p{M}]/u;

/**
 * Outside the BMP (emoji, mathematical letters) every character counts as part of a word: a half of
 * a surrogate pair is no letter on its own, and "𝐀one" must not yield a "one" that `saysAnyDigit`,
 * which sees the whole letter, does not.
 */
function isWordCode(code: number, text: string, at: number): boolean {
  if (code < 128) return isDigitCode(code) || isAsciiLetterCode(code);
  if (code >= 0xd800 && code <= 0xdfff) return true;
  return NON_ASCII_LETTER.test(text.charAt(at));
}

function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isAsciiLetterCode(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
