import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { REJECTED_FILE } from './write-journal.js';

/** How many records the journal folder holds: journalled and not confirmed written, and refused for good. */
export async function journalBacklog(dir: string): Promise<{ journalled: number; rejected: number }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { journalled: 0, rejected: 0 };
  }
  let journalled = 0;
  let rejected = 0;
  for (const name of names) {
    if (name === REJECTED_FILE) rejected += await countLines(path.join(dir, name));
    else if (name.startsWith('journal-') && name.endsWith('.jsonl')) journalled += await countLines(path.join(dir, name));
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
