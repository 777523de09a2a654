/**
 * The dashboard's reader thread: answers ReadRequests from a read-only
 * connection of its own (see ThreadReads).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Database } from '../store/database.js';
import { queriesOn, type ReadRequest, type ReadResponse } from './reads.js';

const { file } = workerData as { file: string };
const queries = queriesOn(Database.openReader(file));
const port = parentPort!;

port.on('message', (request: ReadRequest) => {
  let response: ReadResponse;
  try {
    const run = queries[request.name] as (...args: unknown[]) => unknown;
    response = { id: request.id, ok: true, value: run(...request.args) };
  } catch (error) {
    response = { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(response);
});
