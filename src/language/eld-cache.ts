/**
 * eld's database as ngram-table.ts lays it out, kept in one file after the first start: building
 * the table from eld's module costs ~1.5-2 s of CPU (its 1.6 MB object literal compiled and walked),
 * reading it back a few milliseconds. Every start of Hotline with two or more languages paid that,
 * and on a busy machine a start's seconds are what its first caller waits through.
 *
 * The file is named after eld's version and database, so an updated eld is read afresh; it is
 * written to a temporary name and renamed, so a reader sees a whole file or none; and a file that
 * does not read back exactly (cut short, another layout) is ignored and written again. Used only
 * by the thread that loads eld (eld-data-worker.ts): nothing here runs on a call's thread.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import type { EldData, NgramTable } from './ngram-table.js';

/** Changed whenever the layout below changes: a file of another layout is then never read. */
const MAGIC = 'hotline-eld-table-1\n';

const ARRAYS = ['chars', 'charStart', 'pairStart', 'pairLanguage', 'pairScore', 'slots'] as const;
type ArrayName = (typeof ARRAYS)[number];

interface Header {
  readonly languages: readonly string[];
  readonly dictionary: string;
  readonly separators: { readonly source: string; readonly flags: string };
  /** Each array's length in elements, in the order of ARRAYS. */
  readonly lengths: readonly number[];
}

const WIDE: ReadonlySet<ArrayName> = new Set(['charStart', 'pairStart', 'slots']);

/** The file that holds this eld version's database, in `dir`. */
export function cacheFileOf(dir: string, eldVersion: string, database: string): string {
  return path.join(dir, `eld-${eldVersion.replace(/[^0-9A-Za-z.-]/g, '_')}-${database}.table`);
}

/** The table the file holds, or undefined when there is none or it is not one this layout wrote. */
export async function readCachedTable(file: string): Promise<EldData | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch {
    return undefined;
  }
  return tableFrom(bytes);
}

/** Writes the table where the next start finds it; a cache that cannot be written is no fault. */
export async function writeCachedTable(file: string, data: EldData): Promise<boolean> {
  const temporary = `${file}.${process.pid}-${threadId}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(temporary, bytesOf(data));
    await rename(temporary, file);
    return true;
  } catch {
    await rm(temporary, { force: true }).catch(() => {});
    return false;
  }
}

function bytesOf({ table, dictionary, separators }: EldData): Buffer {
  const header: Header = { languages: table.languages, dictionary, separators, lengths: ARRAYS.map((name) => table[name].length) };
  const head = Buffer.from(`${MAGIC}${JSON.stringify(header)}\n`, 'utf8');
  // Padding so each Uint32Array starts at a multiple of 4 in the file, as it will in memory.
  const parts: Buffer[] = [head, Buffer.alloc((4 - (head.length % 4)) % 4)];
  for (const name of ARRAYS) {
    const array = table[name];
    parts.push(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
    parts.push(Buffer.alloc((4 - (array.byteLength % 4)) % 4));
  }
  return Buffer.concat(parts);
}

function tableFrom(bytes: Buffer): EldData | undefined {
  if (bytes.subarray(0, MAGIC.length).toString('utf8') !== MAGIC) return undefined;
  const end = bytes.indexOf(0x0a, MAGIC.length);
  if (end < 0) return undefined;
  let header: Header;
  try {
    header = JSON.parse(bytes.subarray(MAGIC.length, end).toString('utf8')) as Header;
  } catch {
    return undefined;
  }
  if (!isHeader(header)) return undefined;
  let offset = end + 1;
  offset += (4 - (offset % 4)) % 4;
  const arrays: Partial<Record<ArrayName, Uint8Array<ArrayBuffer> | Uint32Array<ArrayBuffer>>> = {};
  for (const [i, name] of ARRAYS.entries()) {
    const length = header.lengths[i]!;
    const byteLength = length * (WIDE.has(name) ? 4 : 1);
    if (offset + byteLength > bytes.length) return undefined;
    // A copy of its own, so the array's buffer can be handed to another thread whole.
    const own = new ArrayBuffer(byteLength);
    new Uint8Array(own).set(bytes.subarray(offset, offset + byteLength));
    arrays[name] = WIDE.has(name) ? new Uint32Array(own) : new Uint8Array(own);
    offset += byteLength + ((4 - (byteLength % 4)) % 4);
  }
  if (offset !== bytes.length) return undefined;
  const table = { languages: header.languages, ...arrays } as NgramTable;
  if (!consistent(table)) return undefined;
  return { table, dictionary: header.dictionary, separators: header.separators };
}

function isHeader(value: unknown): value is Header {
  if (typeof value !== 'object' || value === null) return false;
  const header = value as Record<string, unknown>;
  const separators = header['separators'] as Record<string, unknown> | undefined;
  return (
    Array.isArray(header['languages']) &&
    header['languages'].every((code) => typeof code === 'string') &&
    typeof header['dictionary'] === 'string' &&
    typeof separators?.['source'] === 'string' &&
    typeof separators['flags'] === 'string' &&
    Array.isArray(header['lengths']) &&
    header['lengths'].length === ARRAYS.length &&
    header['lengths'].every((n) => Number.isSafeInteger(n) && n >= 0)
  );
}

/**
 * The arrays point inside each other as ngram-table.ts says: a file written by this layout does. A
 * damaged one could send a lookup out of the table, or round a table with no empty slot for ever.
 */
function consistent(table: NgramTable): boolean {
  const grams = table.charStart.length - 1;
  const shaped =
    grams >= 0 &&
    table.pairStart.length === grams + 1 &&
    table.charStart[grams] === table.chars.length &&
    table.pairStart[grams] === table.pairLanguage.length &&
    table.pairLanguage.length === table.pairScore.length &&
    table.slots.length > 0 &&
    (table.slots.length & (table.slots.length - 1)) === 0;
  if (!shaped) return false;
  let empty = false;
  for (const slot of table.slots) {
    if (slot > grams) return false;
    if (slot === 0) empty = true;
  }
  for (let i = 0; i < grams; i++) {
    if (table.charStart[i]! > table.charStart[i + 1]! || table.pairStart[i]! > table.pairStart[i + 1]!) return false;
  }
  for (const language of table.pairLanguage) if (language >= table.languages.length) return false;
  return empty;
}
