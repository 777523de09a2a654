/**
 * The dashboard's files thread: answers FileRequests (a transcript parsed, the prompts folder
 * checked) so that their parsing never holds the event loop the calls run on (see FileThread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fileQueries, type FileRequest, type FileResponse, type PromptsToCheck } from './file-thread.js';

const { prompts } = workerData as { prompts: PromptsToCheck };
const queries = fileQueries(prompts);
const port = parentPort!;

port.on('message', (request: FileRequest) => {
  void answer(request).then((response) => port.postMessage(response));
});

async function answer(request: FileRequest): Promise<FileResponse> {
  try {
    const run = queries[request.name] as (...args: unknown[]) => Promise<unknown>;
    return { id: request.id, ok: true, value: await run(...request.args) };
  } catch (error) {
    return { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
