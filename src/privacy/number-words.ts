/**
 * The words of English and German that say digits, as speech-to-text writes a number read out:
 * digit by digit ("four one one one"), in pairs ("forty-one eleven", "einundvierzig elf"), or with
 * repeats ("double four"). Lowercase; "ein" is German for "one" as said in numbers.
 */

export type NumberWord =
  /** One digit: "four", "vier", "oh". */
  | { readonly kind: 'digit'; readonly signs: string }
  /** Two digits in one word: "eleven", "zwölf", "einundvierzig". */
  | { readonly kind: 'pair'; readonly signs: string }
  /** A multiple of ten: "40" alone, the first of two digits with a digit word after it ("forty-one"). */
  | { readonly kind: 'tens'; readonly signs: string }
  /** "double", "triple": the digit word after it, so many times. */
  | { readonly kind: 'repeat'; readonly signs: ''; readonly times: number };

const DIGITS: readonly (readonly [string, number])[] = [
  ['zero', 0], ['oh', 0], ['nought', 0], ['naught', 0], ['one', 1], ['two', 2], ['three', 3], ['four', 4],
  ['five', 5], ['six', 6], ['seven', 7], ['eight', 8], ['nine', 9],
  ['null', 0], ['eins', 1], ['ein', 1], ['zwei', 2], ['zwo', 2], ['drei', 3], ['vier', 4], ['fünf', 5],
  ['fuenf', 5], ['sechs', 6], ['sieben', 7], ['acht', 8], ['neun', 9],
];

const TEENS: readonly (readonly [string, number])[] = [
  ['ten', 10], ['eleven', 11], ['twelve', 12], ['thirteen', 13], ['fourteen', 14], ['fifteen', 15], ['sixteen', 16],
  ['seventeen', 17], ['eighteen', 18], ['nineteen', 19],
  ['zehn', 10], ['elf', 11], ['zwölf', 12], ['zwoelf', 12], ['dreizehn', 13], ['vierzehn', 14], ['fünfzehn', 15],
  ['fuenfzehn', 15], ['sechzehn', 16], ['siebzehn', 17], ['achtzehn', 18], ['neunzehn', 19],
];

const ENGLISH_TENS: readonly (readonly [string, number])[] = [
  ['twenty', 2], ['thirty', 3], ['forty', 4], ['fifty', 5], ['sixty', 6], ['seventy', 7], ['eighty', 8], ['ninety', 9],
];

const GERMAN_TENS: readonly (readonly [string, number])[] = [
  ['zwanzig', 2], ['dreißig', 3], ['dreissig', 3], ['vierzig', 4], ['fünfzig', 5], ['fuenfzig', 5], ['sechzig', 6],
  ['siebzig', 7], ['achtzig', 8], ['neunzig', 9],
];

/** The ones of a German pair, said before the tens: "einundvierzig" is 41. */
const GERMAN_ONES: readonly (readonly [string, number])[] = [
  ['ein', 1], ['zwei', 2], ['drei', 3], ['vier', 4], ['fünf', 5], ['fuenf', 5], ['sechs', 6], ['sieben', 7], ['acht', 8], ['neun', 9],
];

function numberWords(): Map<string, NumberWord> {
  const words = new Map<string, NumberWord>();
  for (const [word, digit] of DIGITS) words.set(word, { kind: 'digit', signs: String(digit) });
  for (const [word, value] of TEENS) words.set(word, { kind: 'pair', signs: String(value) });
  for (const [word, tens] of [...ENGLISH_TENS, ...GERMAN_TENS]) words.set(word, { kind: 'tens', signs: `${tens}0` });
  for (const [tensWord, tens] of GERMAN_TENS) {
    for (const [onesWord, ones] of GERMAN_ONES) words.set(`${onesWord}und${tensWord}`, { kind: 'pair', signs: `${tens}${ones}` });
  }
  for (const [word, times] of [['double', 2], ['triple', 3], ['treble', 3], ['doppel', 2]] as const) words.set(word, { kind: 'repeat', signs: '', times });
  return words;
}

export const NUMBER_WORDS: ReadonlyMap<string, NumberWord> = numberWords();
