/**
 * Hotline on a thread of its own, as in production, where it has a process to
 * itself: the bench's callers, the scripted LLM server and the bookkeeping run
 * on the main thread and no longer queue on Hotline's event loop or fill its
 * heap. Everything measured inside Hotline is measured here (hotline-probes.ts)
 * and handed over on request, so the probes cost Hotline no message per event:
 *   → { kind: 'ready', url, wsUrl, port, clockOffset }
 *   ← { id, command }   → { id, result } or { id, error }
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startHotline } from '../src/server.js';
import { clockOffset } from './clock.js';
import { HotlineProbes, type HotlineAnswer, type HotlineCommand, type HotlineResults } from './hotline-probes.js';
import { takeNice } from './priority.js';

export interface HotlineWorkerData {
  /** Marks the thread as this worker: importing the module anywhere else starts nothing. */
  role: 'hotline-bench-hotline';
  env: Record<string, string>;
  /** The nice value Hotline's thread should run at (see takeNice): the bench's own before its callers gave way. */
  nice?: number | undefined;
}

export type HotlineWorkerMessage =
  | { kind: 'ready'; url: string; wsUrl: string; port: number; clockOffset: number; nice: number | undefined }
  | HotlineAnswer;

async function main(port: NonNullable<typeof parentPort>, data: HotlineWorkerData): Promise<void> {
  // Before Hotline starts: the threads it starts (the SQLite store's) are born with this one's priority.
  const nice = takeNice(data.nice);
  const hotline = await startHotline(loadConfig(data.env), pino({ level: 'silent' }), { watchPrompts: false, env: data.env });
  const probes = new HotlineProbes();
  probes.attach(hotline.registry);

  const run = async (command: HotlineCommand): Promise<HotlineResults[HotlineCommand['kind']]> => {
    if (command.kind !== 'close') return probes.run(command);
    await hotline.close();
    return null;
  };

  port.on('message', ({ id, command }: { id: number; command: HotlineCommand }) => {
    run(command).then(
      (result) => port.postMessage({ kind: 'answer', id, result } satisfies HotlineWorkerMessage),
      (error: unknown) =>
        port.postMessage({ kind: 'failed', id, message: error instanceof Error ? error.message : String(error) } satisfies HotlineWorkerMessage),
    );
  });
  port.postMessage({
    kind: 'ready',
    url: hotline.url,
    wsUrl: hotline.wsUrl,
    port: hotline.port,
    clockOffset: clockOffset(),
    nice,
  } satisfies HotlineWorkerMessage);
}

const data = workerData as Partial<HotlineWorkerData> | undefined;
if (parentPort && data?.role === 'hotline-bench-hotline') {
  main(parentPort, data as HotlineWorkerData).catch((error: unknown) => {
    // Rethrown outside the promise so the worker fails with an 'error' event the bench reports.
    setImmediate(() => {
      throw error;
    });
  });
}
