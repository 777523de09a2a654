/**
 * The main thread's side of the documents' thread (document-worker.ts): a file in, its passages
 * or what is wrong with it out. The thread starts with the first file and ends with close().
 */
import type { Worker } from 'node:worker_threads';
import { spawnModule } from '../worker-module.js';
import type { ReadAnswer, ReadRequest } from './document-protocol.js';

export class DocumentReader {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(answer: ReadAnswer): void; reject(error: Error): void }>();

  read(request: Omit<ReadRequest, 'id'>): Promise<ReadAnswer> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<ReadAnswer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id } satisfies ReadRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnModule(import.meta.url, 'document-worker', undefined);
    worker.on('message', (answer: ReadAnswer) => {
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      waiting?.resolve(answer);
    });
    const failAll = (error: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the documents' thread ended (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }
}
