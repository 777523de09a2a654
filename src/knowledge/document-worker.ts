/**
 * The documents' thread: reads a file of the knowledge folder, splits it into passages and stems
 * them, so that a large PDF or a long Markdown file never holds the calls' event loop. One request
 * at a time, in order.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import type { ReadAnswer, ReadRequest } from './document-protocol.js';
import { readPassages } from './documents.js';
import { DocumentError } from './passage.js';
import { termsOf } from './terms.js';

/** Part of every file's hash: a change to how files are split or stemmed indexes them all again. */
const SPLIT_VERSION = '1';

const port = parentPort!;

async function answer(request: ReadRequest): Promise<ReadAnswer> {
  const { id, file, language } = request;
  let bytes: Buffer;
  try {
    bytes = await readFile(request.absolute);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return { id, kind: 'gone' };
    return { id, kind: 'broken', hash: '', message: `cannot be read: ${(error as Error).message}` };
  }
  const hash = createHash('sha256').update(`${SPLIT_VERSION}\0${language}\0`).update(bytes).digest('hex');
  if (hash === request.knownHash) return { id, kind: 'unchanged', hash };
  try {
    const passages = (await readPassages(file, bytes)).map((p) => ({
      heading: p.heading,
      line: p.line,
      page: p.page,
      text: p.text,
      terms: termsOf(`${p.heading}\n${p.text}`, language).join(' '),
    }));
    return { id, kind: 'read', hash, passages };
  } catch (error) {
    const line = error instanceof DocumentError ? error.line : undefined;
    return { id, kind: 'broken', hash, message: error instanceof Error ? error.message : String(error), line };
  }
}

// One at a time: a burst of saves is read in order, and one thread's memory holds one file.
let queue: Promise<void> = Promise.resolve();
port.on('message', (request: ReadRequest) => {
  queue = queue.then(async () => port.postMessage(await answer(request)));
});
