/**
 * Hotline in a process of its own for the soak, as in production: its heap,
 * RSS and handles are its own, not the callers' or the scripted model's.
 * Driven over the IPC channel by soak.ts (see HotlineChild):
 *   ← { kind: 'start', env }     → { kind: 'ready', wsUrl, url }
 *   ← { id, command }            → { id, result } or { id, error }
 */
import { readdir } from 'node:fs/promises';
import v8 from 'node:v8';
import { pino } from 'pino';
import { forcedGc, settleHeap } from '../bench/gc.js';
import { loadConfig } from '../src/config.js';
import { startHotline, type RunningHotline } from '../src/server.js';

export interface MemoryFigures {
  /** V8's heap after a full collection, bytes. */
  heapUsed: number;
  /** The same without compiled code, which grows and shrinks with the JIT rather than with calls. */
  heapWithoutCode: number;
  rss: number;
  /** Memory of C++ objects bound to JavaScript (Buffers among them). */
  external: number;
  arrayBuffers: number;
  /** Timers, sockets, file handles and the like the event loop holds. */
  handles: number;
  /** Open file descriptors (Linux), undefined elsewhere. */
  fds: number | undefined;
  /** Calls in progress. */
  calls: number;
}

export type ChildCommand =
  | { kind: 'sample' }
  | { kind: 'settle' }
  | { kind: 'snapshot'; file: string }
  | { kind: 'close' };

export type ChildMessage =
  | { kind: 'ready'; wsUrl: string; url: string }
  | { kind: 'answer'; id: number; result: unknown }
  | { kind: 'failed'; id: number; message: string };

const CODE_SPACES = new Set(['code_space', 'code_large_object_space']);

async function sample(hotline: RunningHotline, gc: () => void): Promise<MemoryFigures> {
  await settleHeap(gc);
  const usage = process.memoryUsage();
  const code = v8
    .getHeapSpaceStatistics()
    .filter((space) => CODE_SPACES.has(space.space_name))
    .reduce((sum, space) => sum + space.space_used_size, 0);
  const fds = await readdir('/proc/self/fd').then(
    (entries) => entries.length,
    () => undefined,
  );
  return {
    heapUsed: usage.heapUsed,
    heapWithoutCode: usage.heapUsed - code,
    rss: usage.rss,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    handles: process.getActiveResourcesInfo().length,
    fds,
    calls: hotline.registry.size,
  };
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const { gc } = forcedGc();
  const env = await new Promise<Record<string, string>>((resolve) => {
    process.once('message', (message: { kind: 'start'; env: Record<string, string> }) => resolve(message.env));
  });
  const hotline = await startHotline(loadConfig(env), pino({ level: env.LOG_LEVEL ?? 'warn' }), { watchPrompts: false, env });
  const run = async (command: ChildCommand): Promise<unknown> => {
    switch (command.kind) {
      case 'sample':
        return sample(hotline, gc);
      case 'settle':
        // Every ended call stored and reported, so what is measured next is what stays.
        await hotline.registry.whenRecorded();
        await hotline.reports.whenIdle();
        return null;
      case 'snapshot':
        await settleHeap(gc);
        return v8.writeHeapSnapshot(command.file);
      case 'close':
        await hotline.close();
        return null;
    }
  };
  process.on('message', (message: { id?: number; command?: ChildCommand }) => {
    if (message.id === undefined || !message.command) return;
    const { id } = message;
    run(message.command).then(
      (result) => send({ kind: 'answer', id, result }),
      (error: unknown) => send({ kind: 'failed', id, message: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The soak went away: so does its Hotline.
  process.on('disconnect', () => process.exit(0));
  send({ kind: 'ready', wsUrl: hotline.wsUrl, url: hotline.url });
}

if (process.send) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
