import { createReadStream, type Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { LEGACY_REJECTED_FILE, REJECTED_DIR } from './rejected-records.js';

/**
 * How many records the journal folder holds — each replica's folder in it too: journalled and not
 * confirmed written, and refused for good.
 */
export async function journalBacklog(dir: string, depth = 1): Promise<{ journalled: number; rejected: number }> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return { journalled: 0, rejected: 0 };
  }
  let journalled = 0;
  let rejected = 0;
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name === REJECTED_DIR) rejected += (await readdir(file)).filter((name) => name.endsWith('.json')).length;
    else if (entry.isDirectory() && depth > 0) {
      const inner = await journalBacklog(file, depth - 1);
      journalled += inner.journalled;
      rejected += inner.rejected;
    } else if (entry.name === LEGACY_REJECTED_FILE) rejected += await countLines(file);
    else if (entry.name.startsWith('journal-') && entry.name.endsWith('.jsonl')) journalled += await countLines(file);
  }
  return { journalled, rejected };
}

async function countLines(file: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(file)) {
    for (const byte of chunk as Buffer) if (byte === 10) lines += 1;
  }
  return lines;
}
