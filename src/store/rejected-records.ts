/**
 * Call records the database refused for good (a bug, never an outage), kept in a replica's journal
 * folder for someone to look at: one file each in `rejected/`.
 *
 * One file per record, so that nothing is ever rewritten: the call writer adds a record by writing a
 * file aside and renaming it into place (a reader sees it whole or not at all), and an erasure takes
 * a person's records out by removing their files. Adding one never races removing another, in this
 * process or in `npm run data` beside it; a shared file rewritten by one while the other appends
 * would lose what was appended in between.
 *
 * Records kept before, as lines of `rejected.jsonl`, are read and erased as ever: nothing appends to
 * that file any more, so it is rewritten (aside, then renamed) without the erased lines.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The folder of a journal that holds its refused records. */
export const REJECTED_DIR = 'rejected';
/** Where refused records were kept before: lines of one file. */
export const LEGACY_REJECTED_FILE = 'rejected.jsonl';
const RECORD = /^\d+-[0-9a-f]+\.json$/;

/** One refused record as read back: where it is, and what it says (undefined when it cannot be parsed). */
export interface RejectedRecord {
  readonly record: Record<string, unknown> | undefined;
  /** Its own file, or the legacy file it is a line of. */
  readonly file: string;
  readonly legacy: boolean;
}

/** Keeps a record in the journal folder `dir`, whole; rejects when it could not be written. */
export async function keepRejected(dir: string, record: object): Promise<void> {
  const folder = path.join(dir, REJECTED_DIR);
  await mkdir(folder, { recursive: true });
  const name = `${Date.now()}-${randomBytes(6).toString('hex')}.json`;
  const aside = path.join(folder, `.${name}.tmp`);
  await writeFile(aside, `${JSON.stringify(record)}\n`, { flag: 'wx', mode: 0o600 });
  await rename(aside, path.join(folder, name));
}

/**
 * Every refused record of the journal folder `dir`, in both layouts. A file that cannot be read
 * rejects: what it holds would otherwise go unreported. A folder or file not there holds nothing,
 * and neither does a record removed while it was being read.
 */
export async function readRejected(dir: string): Promise<RejectedRecord[]> {
  const records: RejectedRecord[] = [];
  const legacy = path.join(dir, LEGACY_REJECTED_FILE);
  const text = await readIfThere(legacy);
  for (const line of text?.split('\n') ?? []) if (line.trim() !== '') records.push({ record: parseRecord(line), file: legacy, legacy: true });
  const folder = path.join(dir, REJECTED_DIR);
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return records;
    throw error;
  }
  for (const name of names.filter((one) => RECORD.test(one)).sort()) {
    const file = path.join(folder, name);
    const one = await readIfThere(file);
    if (one !== undefined) records.push({ record: parseRecord(one), file, legacy: false });
  }
  return records;
}

/** How many refused records the journal folder `dir` holds. */
export async function countRejected(dir: string): Promise<number> {
  return (await readRejected(dir)).length;
}

/**
 * Removes the records `erase` picks: their files, and their lines of the legacy file (rewritten aside
 * and renamed over it). The number removed.
 */
export async function removeRejected(dir: string, erase: (record: Record<string, unknown>) => boolean): Promise<number> {
  let removed = 0;
  for (const found of await readRejected(dir)) {
    if (found.legacy || found.record === undefined || !erase(found.record)) continue;
    await rm(found.file, { force: true });
    removed += 1;
  }
  const legacy = path.join(dir, LEGACY_REJECTED_FILE);
  const text = await readIfThere(legacy);
  if (text === undefined) return removed;
  const kept = text.split('\n').filter((line) => {
    if (line.trim() === '') return false;
    const record = parseRecord(line);
    return record === undefined || !erase(record);
  });
  const gone = text.split('\n').filter((line) => line.trim() !== '').length - kept.length;
  if (gone === 0) return removed;
  const aside = `${legacy}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(aside, kept.map((line) => `${line}\n`).join(''), { mode: 0o600 });
  await rename(aside, legacy);
  return removed + gone;
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function parseRecord(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
