/**
 * eld's detection (src/languageDetector.js of eld 2.1.0, Apache-2.0, by Nito T.M.) over the flat
 * table of ngram-table.ts instead of eld's objects: the text cut into words and each word into
 * byte n-grams, as eld does, and each language scored by the n-grams it has. The scores are the
 * same as eld's own (test/language.test.ts compares them), before eld squashes them to 0..1.
 */
import { indexOf, type EldData } from './ngram-table.js';

/** eld keeps only scores above this in its database, and adds it back when scoring. */
const BASE_NGRAM_SCORE = 53;
/** eld reads at most this much of a text… */
const MAX_TEXT = 1000;
/** …and stops at the first space after this many bytes, or after any character past the next. */
const CUT_AFTER_BYTES = 350;
const ENFORCE_CUT_AFTER_BYTES = 380;
/** eld makes n-grams of at most this many bytes of a word. */
const MAX_WORD_BYTES = 70;

/** How well a text fits each language eld knows: the mean n-gram score; a language with none is absent. */
export type NgramScorer = (text: string) => Readonly<Record<string, number>>;

export function eldScorer({ table, dictionary, separators }: EldData): NgramScorer {
  const separatorPattern = new RegExp(separators.source, separators.flags);
  return (text) => {
    const words = wordsOf(text.substring(0, MAX_TEXT).replace(separatorPattern, ' ').trim().toLowerCase(), dictionary);
    const grams = ngramsOf(words);
    if (grams.size === 0) return {};
    const sums = new Float64Array(table.languages.length);
    for (const gram of grams) {
      const index = indexOf(table, gram);
      if (index < 0) continue;
      for (let pair = table.pairStart[index]!; pair < table.pairStart[index + 1]!; pair++) {
        sums[table.pairLanguage[pair]!]! += table.pairScore[pair]! + BASE_NGRAM_SCORE;
      }
    }
    const means: Record<string, number> = {};
    sums.forEach((sum, language) => {
      if (sum > 0) means[table.languages[language]!] = sum / grams.size;
    });
    return means;
  };
}

/** eld's strToUtf8Bytes: the words, each byte of them spelled as one character. */
function wordsOf(text: string, dictionary: string): string[] {
  const words: string[] = [];
  let word = '';
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      if (code === 32) {
        if (word !== '') {
          words.push(word);
          word = '';
        }
        if (bytes > CUT_AFTER_BYTES) break;
      } else {
        word += text[i];
      }
      bytes += 1;
    } else if (code < 0x800) {
      word += dictionary[0xc0 | (code >> 6)]! + dictionary[0x80 | (code & 0x3f)]!;
      bytes += 2;
    } else if (code < 0xd800 || code >= 0xe000) {
      word += dictionary[0xe0 | (code >> 12)]! + dictionary[0x80 | ((code >> 6) & 0x3f)]! + dictionary[0x80 | (code & 0x3f)]!;
      bytes += 3;
    } else {
      i += 1;
      code = 0x10000 + (((code & 0x3ff) << 10) | (text.charCodeAt(i) & 0x3ff));
      word +=
        dictionary[0xf0 | (code >> 18)]! +
        dictionary[0x80 | ((code >> 12) & 0x3f)]! +
        dictionary[0x80 | ((code >> 6) & 0x3f)]! +
        dictionary[0x80 | (code & 0x3f)]!;
      bytes += 4;
    }
    if (bytes > ENFORCE_CUT_AFTER_BYTES) break;
  }
  if (word !== '') words.push(word);
  return words;
}

/**
 * eld's getByteNgrams: four bytes at a time, a step of three, the word's first n-gram marked by a
 * space before it and its last by a space after (a word of four bytes or fewer is one n-gram).
 */
function ngramsOf(words: readonly string[]): Set<string> {
  const grams = new Set<string>();
  for (const word of words) {
    const length = Math.min(word.length, MAX_WORD_BYTES);
    let j = 0;
    for (; j + 4 < length; j += 3) grams.add((j === 0 ? ' ' : '') + word.substring(j, j + 4));
    grams.add((j === 0 ? ' ' : '') + word.substring(length !== 3 ? length - 4 : 0) + ' ');
  }
  return grams;
}
