/**
 * Hotline on a thread of its own, as in production, where it has a process to
 * itself: the bench's callers, the scripted LLM server and the bookkeeping run
 * on the main thread and no longer queue on Hotline's event loop or fill its
 * heap. Everything measured inside Hotline is measured here and handed over on
 * request, so the probes cost Hotline no message per event:
 *   → { kind: 'ready', url, wsUrl, port, clockOffset }
 *   ← { id, command }   → { id, result } or { id, error }
 */
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { monitorEventLoopDelay, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { startHotline } from '../server.js';
import { clockOffset, now } from './clock.js';
import { probeCore } from './core-probe.js';
import { forcedGc, settleHeap } from './gc.js';
import { takeNice } from './priority.js';

export interface HotlineWorkerData {
  /** Marks the thread as this worker: importing the module anywhere else starts nothing. */
  role: 'hotline-bench-hotline';
  env: Record<string, string>;
  /** The nice value Hotline's thread should run at (see takeNice): the bench's own before its callers gave way. */
  nice?: number | undefined;
}

/** What a probe saw, in this thread's clock. */
export interface ProbeRecords {
  /** Each speak as it left Hotline (the transport's send returned). */
  speaks: { text: string; at: number }[];
  /** Each barge-in (user_speak with barged_in) as it entered the call core, and when the LLM socket was destroyed. */
  bargeIns: { session: string; receivedAt: number | undefined; enteredAt: number; socketDestroyedAt: number | undefined }[];
}

export interface LoopFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Share of the time this thread's event loop was busy, 0–1. */
  utilization: number;
}

export interface HeapFigures {
  rss: number;
  heapUsed: number;
  external: number;
  gcExposed: boolean;
}

export type HotlineCommand =
  | { kind: 'probe-start' }
  | { kind: 'probe-stop' }
  | { kind: 'loop-start' }
  | { kind: 'loop-stop' }
  | { kind: 'settle-heap' }
  | { kind: 'close' };

export interface HotlineResults {
  'probe-start': null;
  'probe-stop': ProbeRecords;
  'loop-start': null;
  'loop-stop': LoopFigures;
  'settle-heap': HeapFigures;
  close: null;
}

export type HotlineWorkerMessage =
  | { kind: 'ready'; url: string; wsUrl: string; port: number; clockOffset: number; nice: number | undefined }
  | { kind: 'answer'; id: number; result: HotlineResults[HotlineCommand['kind']] }
  | { kind: 'failed'; id: number; message: string };

async function main(port: NonNullable<typeof parentPort>, data: HotlineWorkerData): Promise<void> {
  // Before Hotline starts: the threads it starts (the SQLite store's) are born with this one's priority.
  const nice = takeNice(data.nice);
  const hotline = await startHotline(loadConfig(data.env), pino({ level: 'silent' }), { watchPrompts: false, env: data.env });

  let records: ProbeRecords | undefined;
  let unprobe: (() => void) | undefined;
  /** The barge-in the core is handling right now: it aborts the LLM stream synchronously. */
  let handling: ProbeRecords['bargeIns'][number] | undefined;

  /**
   * When the socket data being handled now reached Hotline's code: ws parses a
   * chunk and dispatches its events synchronously inside the socket's 'data'
   * event, so a listener put in front of ws's own stamps every event it carries.
   */
  let dataAt: number | undefined;
  diagnostics.subscribe('net.server.socket', (message) => {
    const { socket } = message as { socket: Socket };
    socket.prependListener('data', () => {
      dataAt = now();
    });
  });

  // Every client socket of this thread is watched from the start: Hotline keeps its LLM connections alive across phases.
  diagnostics.subscribe('net.client.socket', (message) => {
    const { socket } = message as { socket: Socket };
    const destroy = socket.destroy;
    socket.destroy = function destroyObserved(this: Socket, error?: Error) {
      if (handling && handling.socketDestroyedAt === undefined) handling.socketDestroyedAt = now();
      return destroy.call(this, error);
    };
  });

  let monitor: IntervalHistogram | undefined;
  let busyBefore: EventLoopUtilization | undefined;
  const gc = forcedGc();

  const run = async (command: HotlineCommand): Promise<HotlineResults[HotlineCommand['kind']]> => {
    switch (command.kind) {
      case 'probe-start': {
        unprobe?.();
        const current: ProbeRecords = { speaks: [], bargeIns: [] };
        records = current;
        unprobe = probeCore(hotline.registry, {
          entered(event, at) {
            if (event.type !== 'user_speak' || !event.barged_in) return;
            handling = { session: event.session.id, receivedAt: dataAt, enteredAt: at, socketDestroyedAt: undefined };
            current.bargeIns.push(handling);
          },
          handled() {
            handling = undefined;
          },
          speakLeft(text, at) {
            current.speaks.push({ text, at });
          },
        });
        return null;
      }
      case 'probe-stop': {
        unprobe?.();
        unprobe = undefined;
        const result = records ?? { speaks: [], bargeIns: [] };
        records = undefined;
        return result;
      }
      case 'loop-start':
        monitor?.disable();
        monitor = monitorEventLoopDelay({ resolution: 2 });
        monitor.enable();
        busyBefore = performance.eventLoopUtilization();
        return null;
      case 'loop-stop': {
        if (!monitor) throw new Error('the event-loop monitor is not running');
        monitor.disable();
        const figures = {
          p50Ms: monitor.percentile(50) / 1e6,
          p99Ms: monitor.percentile(99) / 1e6,
          maxMs: monitor.max / 1e6,
          utilization: performance.eventLoopUtilization(busyBefore).utilization,
        };
        monitor = undefined;
        return figures;
      }
      case 'settle-heap': {
        await settleHeap(gc.gc);
        const usage = process.memoryUsage();
        return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, gcExposed: gc.exposed };
      }
      case 'close':
        await hotline.close();
        return null;
    }
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
