/**
 * eld (Efficient Language Detector), loaded so that no call waits on it: a thread of its own
 * imports eld's n-gram database and hands it over as flat arrays (eld-data-worker.ts), which this
 * thread takes as they are. Taking them costs nothing; building eld's objects here cost ~0.8 s.
 * The arrays are kept in a file (eld-cache.ts) that later starts read instead.
 *
 * eld's public entries offer its database only by importing it on this thread, so the thread reads
 * eld's own files (src/ngrams/, src/dictionary.js, src/regexPatterns.js). That is eld's inside, not
 * its API: package.json pins eld to ~2.1.0, the thread checks the shape of what it reads, and
 * test/language.test.ts checks that the scores are eld's own.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { HotlineError } from '../errors.js';
import { spawnModule } from '../worker-module.js';
import { cacheFileOf, readCachedTable } from './eld-cache.js';
import type { EldWorkerData } from './eld-data-worker.js';
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

/**
 * Where the table built from eld's database is kept between starts (eld-cache.ts): beside the
 * installed packages, as build tools keep theirs, so that a fresh install builds it afresh.
 */
function defaultCacheDir(eldEntry: string): string {
  return fileURLToPath(new URL('../../../.cache/hotline', eldEntry));
}

export interface LoadEldOptions {
  /** The folder the table is kept in; null to build it from eld's module every time. */
  readonly cacheDir?: string | null;
}

export interface LoadedEld {
  readonly score: NgramScorer;
  /** Whether the table was read from where it is kept, or built from eld's module. */
  readonly from: 'cache' | 'eld';
}

/**
 * Loads eld's database and scores texts with it on this thread: the table kept by an earlier start
 * when there is one (a read and a copy of ~2.3 MB, a few milliseconds), else built on a thread of
 * its own and kept for the next.
 */
export async function loadEld(options: LoadEldOptions = {}): Promise<LoadedEld> {
  const entry = import.meta.resolve('eld');
  try {
    const cacheDir = options.cacheDir === undefined ? defaultCacheDir(entry) : options.cacheDir;
    const cacheFile = cacheDir === null ? null : cacheFileOf(cacheDir, await versionOf(entry), ELD_DATABASE);
    const cached = cacheFile === null ? undefined : await readCachedTable(cacheFile);
    if (cached) return { score: eldScorer(cached), from: 'cache' };
    const workerData: EldWorkerData = {
      databaseUrl: new URL(`../ngrams/${ELD_DATABASE}.js`, entry).href,
      dictionaryUrl: new URL('../dictionary.js', entry).href,
      patternsUrl: new URL('../regexPatterns.js', entry).href,
      cacheFile,
    };
    return { score: eldScorer(await answerOf(spawnModule(import.meta.url, 'eld-data-worker', workerData))), from: 'eld' };
  } catch (error) {
    throw new LanguageDetectorLoadError(`eld's '${ELD_DATABASE}' database could not be read`, { cause: error });
  }
}

async function versionOf(eldEntry: string): Promise<string> {
  const { version } = JSON.parse(await readFile(new URL('../../package.json', eldEntry), 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error("eld's package.json names no version");
  return version;
}

function answerOf(worker: Worker): Promise<EldData> {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`its thread ended (exit code ${code}) without an answer`)));
  });
}
