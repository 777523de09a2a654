/**
 * The thread that reads eld's n-gram database (eld-loader.ts). eld ships it as a JavaScript module
 * of one object literal (1.6 MB for 'small'), which V8 takes ~0.8 s to compile and run and whose
 * 81,000 objects are slow to copy: here that holds up only this thread, which hands back the
 * database as flat arrays (ngram-table.ts), moved, not copied, and keeps them in a file
 * (eld-cache.ts), so that only the first start builds them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { writeCachedTable } from './eld-cache.js';
import { hashOf, type EldData, type NgramTable } from './ngram-table.js';

export interface EldWorkerData {
  readonly databaseUrl: string;
  readonly dictionaryUrl: string;
  readonly patternsUrl: string;
  /** The file the table is kept in for the next start; null to keep it nowhere. */
  readonly cacheFile: string | null;
}

const { databaseUrl, dictionaryUrl, patternsUrl, cacheFile } = workerData as EldWorkerData;

function part<T>(module: unknown, name: string, is: (value: unknown) => value is T, url: string): T {
  const value = (module as Record<string, unknown>)[name];
  if (!is(value)) throw new Error(`eld's ${url} has no ${name} as expected: has eld changed inside?`);
  return value;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((c) => typeof c === 'string' && c.length === 1);
const isRegExp = (value: unknown): value is RegExp => value instanceof RegExp;

async function fromEld(): Promise<EldData> {
  const [databaseModule, dictionaryModule, patternsModule] = await Promise.all([import(databaseUrl), import(dictionaryUrl), import(patternsUrl)]);
  const database = part(databaseModule, 'ngramsData', isObject, databaseUrl);
  const dictionary = part(dictionaryModule, 'dictionary', isStrings, dictionaryUrl);
  const separators = part(patternsModule, 'separators', isRegExp, patternsUrl);
  if (!isObject(database['languages']) || !isObject(database['ngrams'])) throw new Error(`eld's ${databaseUrl} has no languages and ngrams: has eld changed inside?`);
  const table = tableOf(database['languages'], database['ngrams']);
  return { table, dictionary: dictionary.join(''), separators: { source: separators.source, flags: separators.flags } };
}

function tableOf(languagesByIndex: Record<string, unknown>, ngrams: Record<string, unknown>): NgramTable {
  const languages: string[] = [];
  for (const [index, code] of Object.entries(languagesByIndex)) languages[Number(index)] = String(code);
  const grams = Object.keys(ngrams);
  const charStart = new Uint32Array(grams.length + 1);
  const pairStart = new Uint32Array(grams.length + 1);
  let charCount = 0;
  let pairCount = 0;
  grams.forEach((gram, i) => {
    charStart[i] = charCount;
    pairStart[i] = pairCount;
    charCount += gram.length;
    pairCount += Object.keys(ngrams[gram] as object).length;
  });
  charStart[grams.length] = charCount;
  pairStart[grams.length] = pairCount;
  const chars = new Uint8Array(charCount);
  const pairLanguage = new Uint8Array(pairCount);
  const pairScore = new Uint8Array(pairCount);
  const slots = new Uint32Array(2 ** Math.ceil(Math.log2(grams.length * 2)));
  grams.forEach((gram, i) => {
    for (let c = 0; c < gram.length; c++) {
      const code = gram.charCodeAt(c);
      if (code > 0xff) throw new Error(`eld's n-gram ${JSON.stringify(gram)} has a character above U+00FF: has eld changed inside?`);
      chars[charStart[i]! + c] = code;
    }
    let pair = pairStart[i]!;
    for (const [language, score] of Object.entries(ngrams[gram] as Record<string, unknown>)) {
      if (typeof score !== 'number' || score < 0 || score > 0xff) throw new Error(`eld's n-gram ${JSON.stringify(gram)} has a score that is no byte: has eld changed inside?`);
      pairLanguage[pair] = Number(language);
      pairScore[pair++] = score;
    }
    const mask = slots.length - 1;
    let slot = hashOf(gram) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = i + 1;
  });
  return { languages, chars, charStart, pairStart, pairLanguage, pairScore, slots };
}

const data = await fromEld();
// Written before answering, so that nothing is left to do once the answer is taken: a Hotline that
// stops at once leaves no thread working behind it.
if (cacheFile !== null) await writeCachedTable(cacheFile, data);
const { table } = data;
parentPort!.postMessage(data, [table.chars.buffer, table.charStart.buffer, table.pairStart.buffer, table.pairLanguage.buffer, table.pairScore.buffer, table.slots.buffer]);
