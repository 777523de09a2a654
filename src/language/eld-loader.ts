/**
 * eld (Efficient Language Detector), loaded so that no call waits on it: a thread of its own
 * imports eld's n-gram database and hands it over as flat arrays (eld-data-worker.ts), which this
 * thread takes as they are. Taking them costs nothing; building eld's objects here cost ~0.8 s.
 *
 * eld's public entries offer its database only by importing it on this thread, so the thread reads
 * eld's own files (src/ngrams/, src/dictionary.js, src/regexPatterns.js). That is eld's inside, not
 * its API: package.json pins eld to ~2.1.0, the thread checks the shape of what it reads, and
 * test/language.test.ts checks that the scores are eld's own.
 */
import type { Worker } from 'node:worker_threads';
import { HotlineError } from '../errors.js';
import { spawnModule } from '../worker-module.js';
import { eldScorer, type NgramScorer } from './eld-scorer.js';
import type { EldData } from './ngram-table.js';

/**
 * eld's database sizes are extrasmall, small, medium and large. 'small' told short phrases of
 * close languages apart (de/nl/da/sv, pl/cs, es/pt/it) where 'extrasmall' slipped; the larger
 * ones did no better on short text, with more to read and keep.
 */
export const ELD_DATABASE = 'small';

/** eld could not be loaded: detection finds nothing beyond the script, and no caller is switched. */
export class LanguageDetectorLoadError extends HotlineError {
  readonly code = 'language_detector_load';
}

/** Loads eld's database on a thread of its own, and scores texts with it on this one. */
export async function loadEld(): Promise<NgramScorer> {
  const entry = import.meta.resolve('eld');
  const urls = {
    databaseUrl: new URL(`../ngrams/${ELD_DATABASE}.js`, entry).href,
    dictionaryUrl: new URL('../dictionary.js', entry).href,
    patternsUrl: new URL('../regexPatterns.js', entry).href,
  };
  const worker = spawnModule(import.meta.url, 'eld-data-worker', urls);
  try {
    return eldScorer(await answerOf(worker));
  } catch (error) {
    throw new LanguageDetectorLoadError(`eld's '${ELD_DATABASE}' database could not be read`, { cause: error });
  }
}

function answerOf(worker: Worker): Promise<EldData> {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`its thread ended (exit code ${code}) without an answer`)));
  });
}
