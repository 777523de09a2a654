/**
 * eld's n-gram database as a few flat arrays, which a thread hands to another without copying and
 * which the garbage collector has nothing in to trace: as eld ships it, 81,000 objects, whose
 * making held the main thread up for ~0.8 s. Built by eld-data-worker.ts, read by eld-scorer.ts.
 *
 * eld spells a text's UTF-8 bytes as characters, an ASCII byte as itself and any other byte as the
 * character its dictionary gives it, all below U+0100: an n-gram is a short string of those.
 */
export interface NgramTable {
  /** eld's languages by their index: ISO 639-1 codes. */
  readonly languages: readonly string[];
  /** The n-grams' characters, one after the other. */
  readonly chars: Uint8Array<ArrayBuffer>;
  /** N-gram i is chars[charStart[i]] up to chars[charStart[i + 1]]. */
  readonly charStart: Uint32Array<ArrayBuffer>;
  /** N-gram i's scores are pairLanguage/pairScore[pairStart[i]] up to [pairStart[i + 1]]. */
  readonly pairStart: Uint32Array<ArrayBuffer>;
  readonly pairLanguage: Uint8Array<ArrayBuffer>;
  readonly pairScore: Uint8Array<ArrayBuffer>;
  /** Open addressing by hashOf(): n-gram index + 1, 0 for an empty slot; a power of two long. */
  readonly slots: Uint32Array<ArrayBuffer>;
}

/** What eld's detector needs beside its database, from its own source (eld-scorer.ts). */
export interface EldText {
  /** Its dictionary: the character each byte 0-255 is spelled with. */
  readonly dictionary: string;
  /** Its pattern of what separates words. */
  readonly separators: { readonly source: string; readonly flags: string };
}

export interface EldData extends EldText {
  readonly table: NgramTable;
}

/** FNV-1a over the n-gram's characters. */
export function hashOf(gram: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < gram.length; i++) hash = Math.imul(hash ^ gram.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The n-gram's index in the table, or -1 when the database does not have it. */
export function indexOf(table: NgramTable, gram: string): number {
  const mask = table.slots.length - 1;
  for (let slot = hashOf(gram) & mask; ; slot = (slot + 1) & mask) {
    const entry = table.slots[slot]!;
    if (entry === 0) return -1;
    if (spells(table, entry - 1, gram)) return entry - 1;
  }
}

function spells(table: NgramTable, index: number, gram: string): boolean {
  const start = table.charStart[index]!;
  if (table.charStart[index + 1]! - start !== gram.length) return false;
  for (let i = 0; i < gram.length; i++) if (table.chars[start + i] !== gram.charCodeAt(i)) return false;
  return true;
}
