import type { Worker } from 'node:worker_threads';
import { spawnModule } from '../src/worker-module.js';

/** Starts one of the bench's worker modules (given by its base name, next to this file) on a thread. */
export function spawnWorker(name: string, workerData: unknown): Worker {
  return spawnModule(import.meta.url, name, workerData);
}
