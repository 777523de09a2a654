/**
 * Preloaded into a Hotline process the bench starts (`node --import process-probe.mjs dist/main.js`,
 * bundled by hotline-process.ts, which never puts it in dist/), so the real entry point runs unchanged and is measured as the thread
 * is (hotline-probes.ts). node:cluster starts its workers with the same flags, so each worker
 * loads it too. Each process that runs a Hotline connects to the bench on the port
 * HOTLINE_BENCH_PROBE_PORT names and takes commands there, one JSON line each way:
 *   → { kind: 'ready', pid, clockOffset, nice }
 *   ← { id, command }   → { kind: 'answer', id, result } or { kind: 'failed', id, message }
 * Without that variable it does nothing.
 */
import cluster from 'node:cluster';
import { isMainThread } from 'node:worker_threads';
import { getPriority } from 'node:os';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { CallRegistry } from '../src/call/call-registry.js';
import { clockOffset } from './clock.js';
import { HotlineProbes, type HotlineAnswer, type HotlineResults, type NumberedCommand } from './hotline-probes.js';

export const PROBE_PORT_VARIABLE = 'HOTLINE_BENCH_PROBE_PORT';

export type ProcessProbeMessage = { kind: 'ready'; pid: number; clockOffset: number; nice: number | undefined } | HotlineAnswer;

function niceValue(): number | undefined {
  try {
    return getPriority();
  } catch {
    return undefined;
  }
}

function start(port: number): void {
  const probes = new HotlineProbes();
  // Hotline makes its one registry inside startHotline, out of reach: its first event shows it.
  const dispatch = CallRegistry.prototype.dispatch;
  CallRegistry.prototype.dispatch = function dispatchFound(this: CallRegistry, ...args: Parameters<CallRegistry['dispatch']>) {
    CallRegistry.prototype.dispatch = dispatch;
    probes.attach(this);
    return dispatch.apply(this, args);
  };

  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  // The bench stops the process with a signal; this connection must not keep it alive meanwhile.
  socket.unref();
  // A bench that went away leaves Hotline running until it is signalled, as it would be anyway.
  socket.on('error', () => undefined);
  const send = (message: ProcessProbeMessage): void => {
    socket.write(`${JSON.stringify(message)}\n`);
  };
  createInterface({ input: socket }).on('line', (line) => {
    const { id, command } = JSON.parse(line) as NumberedCommand;
    const answer: Promise<HotlineResults[typeof command.kind]> =
      command.kind === 'close' ? Promise.reject(new Error('a Hotline process is closed by a signal')) : probes.run(command);
    answer.then(
      (result) => send({ kind: 'answer', id, result }),
      (error: unknown) => send({ kind: 'failed', id, message: error instanceof Error ? error.message : String(error) }),
    );
  });
  socket.once('connect', () => send({ kind: 'ready', pid: process.pid, clockOffset: clockOffset(), nice: niceValue() }));
}

const port = Number(process.env[PROBE_PORT_VARIABLE]);
// The primary of WORKERS=N only starts and watches the workers: it has no Hotline to measure. And a
// preload runs in every worker thread too (the store's, the documents'): those are not Hotlines,
// and a probe there would count their heaps, loops and the process's CPU over again.
const runsHotline = isMainThread && (cluster.isWorker || Number(process.env.WORKERS ?? '1') <= 1);
if (Number.isInteger(port) && port > 0 && runsHotline) start(port);
