/**
 * The dashboard's reader thread: answers ReadRequests from a read-only
 * connection of its own (see ThreadReads).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Database } from '../store/database.js';
import { queriesOn, type PromptsToCheck, type ReadRequest, type ReadResponse } from './reads.js';

const { file, prompts } = workerData as { file: string; prompts: PromptsToCheck };
const queries = queriesOn(Database.openReader(file), prompts);
const port = parentPort!;

port.on('message', (request: ReadRequest) => {
  void answer(request).then((response) => port.postMessage(response));
});

async function answer(request: ReadRequest): Promise<ReadResponse> {
  try {
    const run = queries[request.name] as (...args: unknown[]) => unknown;
    return { id: request.id, ok: true, value: await run(...request.args) };
  } catch (error) {
    return { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
