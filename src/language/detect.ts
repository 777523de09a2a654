/**
 * Which of a call's languages a caller's utterance is in, and how sure that is: the ground for
 * switching a call to another of its configured languages, which is done only when the text
 * clearly is that language.
 *
 * The statistics are eld's (Efficient Language Detector, npm `eld`). Compared on phone-length
 * utterances (2-12 words) with tinyld, franc(-min), cld3-asm and lande, it was the one that got
 * every test sentence right among the candidates and the fastest: franc took short German and
 * Polish for Turkish and Russian for Ukrainian, lande Arabic for Turkish, tinyld's light build
 * English for Turkish; tinyld's normal build was right but 5 times slower, and sure of "Okay"
 * being Turkish; cld3 is weak on short text by eld's benchmarks (69 % of word pairs right) and
 * holds the thread ~140 ms compiling its WebAssembly. eld is plain
 * JavaScript with no dependencies and no network, an ES module, Apache-2.0, and maintained.
 *
 * Like every accurate one, it ships its data as a module that holds the thread importing it for
 * ~0.8 s and then keeps ~50 MB of objects. So its data is read on a thread of its own and kept as
 * a few flat arrays (~2.3 MB), scored by eld's own algorithm (eld-loader.ts, eld-scorer.ts):
 * ~0.01 ms for a sentence. The arrays are kept in a file for the next start, which reads them in
 * a few milliseconds (~30 ms of CPU in all, against ~1.5-2 s for building them).
 */
import { baseLanguage } from './language-tag.js';
import { loadEld } from './eld-loader.js';
import type { NgramScorer } from './eld-scorer.js';
import { measureText, scriptOfLanguage } from './script.js';

export interface DetectedLanguage {
  /** The base code, as it was among the candidates. */
  language: string;
  /** 0..1: how clearly the text is this language rather than another candidate, or another language. */
  confidence: number;
}

/**
 * The confidence above which a text is clearly a language: each clear utterance in
 * test/language.test.ts scores 0.62 or more (the lowest a nine-word English sentence with German
 * close behind), no ambiguous one (names, "Yes please", single words) more than 0.33 (a Turkish
 * name, two words that are Turkish indeed).
 */
export const DEFAULT_MIN_CONFIDENCE = 0.5;

/** Below this many words there is nothing to go on: "Ja", "OK", "Hallo", "Tschüss", "4711". */
const MIN_WORDS = 2;
/** …nor below this many letters, in a Latin text, where short words are shared by many languages. */
const MIN_LETTERS = 8;
/**
 * Two words, or a dozen letters, are a name ("Anna Schmidt", "Mehmet Yılmaz") as often as a
 * sentence, and eld is as sure of a name as of a sentence. Confidence grows with the words and the
 * letters, and is whole from this many on.
 */
const FULL_WORDS = 4;
const FULL_LETTERS = 16;

/**
 * Codes eld knows a language by where the folders may use another. A language eld does not know
 * (it knows 60) scores nothing: it is found by its script or not at all.
 */
const ELD_CODES: Readonly<Record<string, string>> = { nb: 'no', nn: 'no' };

let scorer: NgramScorer | undefined;
let loading: Promise<NgramScorer> | undefined;
let started = false;

/**
 * Loads the detector's data: kept from an earlier start, or built on a thread of its own (~1.5 s).
 * Detection works without it only for a text in a script just one candidate uses; the first
 * detection that needs the data starts the load, and finds nothing until it is done. Await this where a process knows it has more than one
 * language, so the callers' first words count. A failed load rejects here, and is tried again on
 * the next call to this.
 */
export function prepareLanguageDetection(): Promise<void> {
  started = true;
  if (scorer) return Promise.resolve();
  loading ??= loadEld().then(
    (loaded) => (scorer = loaded.score),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading.then(() => undefined);
}

/** Whether the detector's data is loaded: 'idle' until the first detection or preparation asks for it. */
export function languageDetectionState(): 'idle' | 'loading' | 'ready' {
  return scorer ? 'ready' : loading ? 'loading' : 'idle';
}

/**
 * The candidate `text` is in, with how sure that is; undefined when there is nothing to decide
 * (fewer than two candidates), too little to go on (a word or two, numbers), a script no candidate
 * is written in, or, before the data is loaded, anything the script alone does not tell.
 *
 * `among` are base codes ('en', 'de', 'tr', 'ar'); no other language ever comes out.
 */
export function detectLanguage(text: string, among: readonly string[]): DetectedLanguage | undefined {
  // One language or none: nothing to decide, and nothing is measured or loaded.
  if (among.length < 2) return undefined;
  const candidates = distinct(among);
  if (candidates.length < 2) return undefined;

  const measure = measureText(text);
  if (measure.words < MIN_WORDS || measure.script === undefined) return undefined;
  const written = candidates.filter((candidate) => scriptOfLanguage(candidate.base) === measure.script);
  if (written.length === 0) return undefined;
  // Latin is written by too many languages beside the candidates for the script to say anything.
  if (written.length === 1 && measure.script !== 'Latn') return { language: written[0]!.given, confidence: 1 };
  if (measure.script === 'Latn' && measure.letters < MIN_LETTERS) return undefined;

  if (!scorer) {
    // A failed load is told to whoever awaits prepareLanguageDetection(); until then, no switch.
    if (!started) prepareLanguageDetection().catch(() => {});
    return undefined;
  }
  return judge(scorer(text), written, evidence(measure.words, measure.letters));
}

interface Candidate {
  readonly given: string;
  readonly base: string;
}

function distinct(among: readonly string[]): Candidate[] {
  const seen = new Map<string, Candidate>();
  for (const given of among) {
    const base = baseLanguage(given);
    if (!seen.has(base)) seen.set(base, { given, base });
  }
  return [...seen.values()];
}

function evidence(words: number, letters: number): number {
  const byWords = (words - 1) / (FULL_WORDS - 1);
  const byLetters = (letters - MIN_LETTERS) / (FULL_LETTERS - MIN_LETTERS);
  return Math.max(0, Math.min(1, byWords, byLetters));
}

/**
 * Confidence is three things at once, each 0..1: how far the best candidate leads the next
 * (1 - second / best), how well it fits against every language eld knows (best / best of all: a
 * French sentence among en and de fits neither), and how much text there was (evidence()).
 */
function judge(scores: Readonly<Record<string, number>>, candidates: readonly Candidate[], evidenceOf: number): DetectedLanguage | undefined {
  let bestOfAll = 0;
  for (const score of Object.values(scores)) bestOfAll = Math.max(bestOfAll, score);
  let best: Candidate | undefined;
  let bestScore = 0;
  let secondScore = 0;
  for (const candidate of candidates) {
    const score = scores[ELD_CODES[candidate.base] ?? candidate.base] ?? 0;
    if (score > bestScore) {
      [best, bestScore, secondScore] = [candidate, score, bestScore];
    } else if (score > secondScore) {
      secondScore = score;
    }
  }
  if (best === undefined) return undefined;
  const lead = 1 - secondScore / bestScore;
  const fit = bestScore / bestOfAll;
  return { language: best.given, confidence: lead * fit * evidenceOf };
}
