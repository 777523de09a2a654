import type { Worker } from 'node:worker_threads';
import { HotlineError } from '../errors.js';
import { spawnModule } from '../worker-module.js';
import { digest, type Digest, type DigestRequest } from './answer-digest.js';
import type { DigestJob, DigestReply } from './answer-worker.js';

/**
 * Answers up to this size are digested where they arrive: parsing 64 KB of
 * JSON takes well under a millisecond. Bigger ones go to a thread of their
 * own, so that no answer holds the calls' event loop (a 4 MB one took 45 to
 * 120 ms there).
 */
export const INLINE_MAX_BYTES = 64 * 1024;
/** The thread ends after this long without work; the next big answer starts another. */
const IDLE_MS = 30_000;

/** The thread could not digest the answer (it failed, or died with the answer on it). */
export class AnswerDigestError extends HotlineError {
  readonly code = 'answer_digest_failed';
}

/** Digests a business system's answer (see answer-digest.ts), off the event loop when it is big. */
export function digestAnswer<R extends DigestRequest>(request: R): Promise<Digest<R>> {
  if (request.body.byteLength <= INLINE_MAX_BYTES) return Promise.resolve(digest(request));
  return answerThread.run(request) as Promise<Digest<R>>;
}

interface Pending {
  readonly resolve: (digest: Digest<DigestRequest>) => void;
  readonly reject: (error: AnswerDigestError) => void;
}

/** One thread for the whole process, started at the first big answer; it keeps no process alive. */
class AnswerThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  run(request: DigestRequest): Promise<Digest<DigestRequest>> {
    const worker = this.started();
    const id = this.nextId++;
    clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // While an answer is on it, the thread keeps the process alive like the request it answers.
      if (this.pending.size === 1) worker.ref();
      // The bytes move to the thread rather than being copied; a view into a larger buffer is copied first.
      const body = request.body.byteOffset === 0 && request.body.byteLength === request.body.buffer.byteLength ? request.body : request.body.slice();
      const job: DigestJob = { id, request: { ...request, body } };
      worker.postMessage(job, [body.buffer as ArrayBuffer]);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnModule(import.meta.url, 'answer-worker', undefined);
    worker.unref();
    worker.on('message', (reply: DigestReply) => this.settle(reply));
    // Either ends the thread; the answers on it fail, and the next big answer starts a new one.
    worker.on('error', (error) => this.lost(worker, `the answer thread failed: ${error.message}`));
    worker.on('exit', (code) => this.lost(worker, `the answer thread exited (${code})`));
    this.worker = worker;
    return worker;
  }

  private settle(reply: DigestReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if ('error' in reply) pending.reject(new AnswerDigestError(reply.error));
    else pending.resolve(reply.digest);
    if (this.pending.size === 0) this.idle();
  }

  private idle(): void {
    const worker = this.worker;
    worker?.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.worker !== worker || this.pending.size > 0) return;
      this.worker = undefined;
      void worker?.terminate();
    }, IDLE_MS);
    this.idleTimer.unref();
  }

  private lost(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const pending of this.pending.values()) pending.reject(new AnswerDigestError(reason));
    this.pending.clear();
  }
}

const answerThread = new AnswerThread();
