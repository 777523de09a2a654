/**
 * Words as the knowledge search compares them: split, lower-cased, stop words left out and each
 * reduced to its stem by its language's Snowball stemmer, so "Rücksendungen" finds "Rücksendung"
 * and "delivers" finds "delivery". SQLite's index holds these stems (its own tokenizer knows only
 * English); PostgreSQL stems with its own dictionaries, named here per language.
 */
import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as english } from '@orama/stemmers/english';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';
import { stemmer as turkish } from '@orama/stemmers/turkish';
import { stopwords as danishStop } from '@orama/stopwords/danish';
import { stopwords as dutchStop } from '@orama/stopwords/dutch';
import { stopwords as englishStop } from '@orama/stopwords/english';
import { stopwords as finnishStop } from '@orama/stopwords/finnish';
import { stopwords as frenchStop } from '@orama/stopwords/french';
import { stopwords as germanStop } from '@orama/stopwords/german';
import { stopwords as italianStop } from '@orama/stopwords/italian';
import { stopwords as norwegianStop } from '@orama/stopwords/norwegian';
import { stopwords as portugueseStop } from '@orama/stopwords/portuguese';
import { stopwords as russianStop } from '@orama/stopwords/russian';
import { stopwords as spanishStop } from '@orama/stopwords/spanish';
import { stopwords as swedishStop } from '@orama/stopwords/swedish';
import { stopwords as turkishStop } from '@orama/stopwords/turkish';

interface Language {
  readonly stem: (word: string) => string;
  readonly stop: ReadonlySet<string>;
  /** PostgreSQL's text search configuration of the language. */
  readonly postgres: string;
}

/**
 * A language's stems as they were made: a reply's words are stemmed to tell which passages it used,
 * and a business's replies use the same few thousand words again and again. Bounded, and started
 * afresh when full.
 */
function remembered(stem: (word: string) => string): (word: string) => string {
  const stems = new Map<string, string>();
  return (word) => {
    let stemmed = stems.get(word);
    if (stemmed === undefined) {
      if (stems.size >= 20_000) stems.clear();
      stemmed = stem(word);
      stems.set(word, stemmed);
    }
    return stemmed;
  };
}

const language = (stem: (word: string) => string, stop: readonly string[], postgres: string, spoken: readonly string[] = []): Language => ({
  stem: remembered(stem),
  stop: new Set([...stop, ...spoken].map((word) => word.normalize('NFC').toLowerCase())),
  postgres,
});

// What callers say around a question that the written lists lack: "yes, please" asks nothing of the documents.
const SPOKEN_ENGLISH = ['a', 'yes', 'yeah', 'no', 'nope', 'please', 'hi', 'hello', 'hey', 'ok', 'okay', 'thanks', 'thank', 'um', 'uh', 'hmm', 'well', 'sure', 'right', 'bye', 'goodbye', 'great', 'fine'];
const SPOKEN_GERMAN = ['ja', 'jo', 'nein', 'nee', 'bitte', 'hallo', 'danke', 'okay', 'ok', 'gut', 'tschüss', 'schon', 'äh', 'ähm', 'genau', 'prima', 'super'];

/** The languages a document may be in: a stemmer and stop words here, and a configuration in PostgreSQL. */
const LANGUAGES = {
  en: language(english, englishStop, 'english', SPOKEN_ENGLISH),
  de: language(german, germanStop, 'german', SPOKEN_GERMAN),
  fr: language(french, frenchStop, 'french'),
  es: language(spanish, spanishStop, 'spanish'),
  it: language(italian, italianStop, 'italian'),
  nl: language(dutch, dutchStop, 'dutch'),
  pt: language(portuguese, portugueseStop, 'portuguese'),
  da: language(danish, danishStop, 'danish'),
  sv: language(swedish, swedishStop, 'swedish'),
  no: language(norwegian, norwegianStop, 'norwegian'),
  fi: language(finnish, finnishStop, 'finnish'),
  tr: language(turkish, turkishStop, 'turkish'),
  ru: language(russian, russianStop, 'russian'),
} as const;

export type KnowledgeLanguage = keyof typeof LANGUAGES;
export const KNOWLEDGE_LANGUAGES = Object.keys(LANGUAGES) as KnowledgeLanguage[];

export function isKnowledgeLanguage(code: string): code is KnowledgeLanguage {
  return Object.hasOwn(LANGUAGES, code);
}

/** PostgreSQL's configuration for a document's language. */
export function postgresConfiguration(lang: KnowledgeLanguage): string {
  return LANGUAGES[lang].postgres;
}

/** A stem this short finds too much as a prefix ("lie*"): only itself. */
const PREFIX_MIN = 4;
/** A question is searched with at most this many words: a caller who talks on adds noise, not precision. */
const QUERY_MAX_WORDS = 24;

/** Letters and digits, lower-cased: "18:00" is "18" and "00", "Potsdam?" is "potsdam". */
export function wordsOf(text: string): string[] {
  return text.normalize('NFC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A document's words as its language's stems, stop words left out: what SQLite's index holds. */
export function termsOf(text: string, lang: KnowledgeLanguage): string[] {
  const { stem, stop } = LANGUAGES[lang];
  const terms: string[] = [];
  for (const word of wordsOf(text)) if (!stop.has(word)) terms.push(stem(word));
  return terms;
}

/** A word of a question worth searching with, and its stem in each language of the documents. */
export interface QuestionWord {
  readonly word: string;
  readonly stems: readonly string[];
}

/**
 * The words of a question worth searching with: not stop words in any of `langs` (a caller's "do
 * you" is nobody's answer), without repeats, each with its stems. Empty when the words carry nothing
 * to look for ("yes, please").
 */
export function questionWords(text: string, langs: readonly KnowledgeLanguage[]): QuestionWord[] {
  const words = new Map<string, QuestionWord>();
  for (const word of wordsOf(text)) {
    if (words.has(word) || langs.some((lang) => LANGUAGES[lang].stop.has(word))) continue;
    words.set(word, { word, stems: [...new Set(langs.map((lang) => LANGUAGES[lang].stem(word)))] });
    if (words.size >= QUERY_MAX_WORDS) break;
  }
  return [...words.values()];
}

/** A term to search with: a stem (SQLite) or a word (PostgreSQL), and whether longer ones count too. */
export interface SearchTerm {
  readonly text: string;
  readonly prefix: boolean;
}

/** Whether a stem is long enough to be searched as a prefix, when the documents lack it itself. */
export function prefixable(stem: string): boolean {
  return stem.length >= PREFIX_MIN;
}

/** SQLite FTS5's query: any of the terms, a prefix one with its longer forms ("lief" finds "liefer"). */
export function ftsQuery(terms: readonly SearchTerm[]): string {
  return terms.map((term) => `"${term.text.replaceAll('"', '""')}"${term.prefix ? '*' : ''}`).join(' OR ');
}

/** PostgreSQL's tsquery text (letters and digits only, as wordsOf gives them): any of the words. */
export function tsQueryText(words: readonly SearchTerm[]): string {
  return words.map((word) => (word.prefix ? `${word.text}:*` : word.text)).join(' | ');
}
