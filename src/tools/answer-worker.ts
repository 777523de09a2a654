/**
 * The thread big business answers are digested on (see answer-thread.ts):
 * parsing megabytes of JSON takes tens of milliseconds, which the calls'
 * event loop must not lose.
 */
import { parentPort } from 'node:worker_threads';
import { digest, type DigestRequest } from './answer-digest.js';

export interface DigestJob {
  readonly id: number;
  readonly request: DigestRequest;
}

export type DigestReply = { readonly id: number; readonly digest: ReturnType<typeof digest> } | { readonly id: number; readonly error: string };

parentPort?.on('message', ({ id, request }: DigestJob) => {
  let reply: DigestReply;
  try {
    reply = { id, digest: digest(request) };
  } catch (error) {
    // A pathological answer (JSON nested deeper than the stack) fails its tool run, never this thread.
    reply = { id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  parentPort?.postMessage(reply);
});
