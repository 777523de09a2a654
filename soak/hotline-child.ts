import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChildCommand, ChildMessage, MemoryFigures } from './hotline-process.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** The soak's handle on Hotline in its child process (hotline-process.ts). */
export class HotlineChild {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private failure: Error | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly wsUrl: string,
    readonly url: string,
  ) {
    child.on('message', (message: ChildMessage) => {
      if (message.kind === 'ready') return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.kind === 'answer') waiter?.resolve(message.result);
      else waiter?.reject(new Error(`Hotline: ${message.message}`));
    });
    child.on('exit', (code) => {
      this.failure = new Error(`Hotline's process exited (${code})`);
      for (const waiter of this.pending.values()) waiter.reject(this.failure);
      this.pending.clear();
    });
  }

  /** Starts Hotline with exactly `env` as its configuration (nothing of this process's environment or .env). */
  static async start(env: Record<string, string>): Promise<HotlineChild> {
    const typescript = import.meta.url.endsWith('.ts');
    const entry = fileURLToPath(new URL(`./hotline-process.${typescript ? 'ts' : 'js'}`, import.meta.url));
    // From source the child needs tsx's loader; --expose-gc for exact figures either way.
    const loader = typescript ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
    const child = fork(entry, [], {
      execArgv: ['--expose-gc', ...loader],
      // glibc's malloc settings pass through, to compare RSS with and without them (MALLOC_ARENA_MAX).
      env: { PATH: process.env.PATH ?? '', ...mallocSettings() },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise<Extract<ChildMessage, { kind: 'ready' }>>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`Hotline's process exited (${code}) while starting`)));
      child.on('message', function awaitReady(message: ChildMessage) {
        if (message.kind !== 'ready') return;
        child.off('message', awaitReady);
        resolve(message);
      });
      child.send({ kind: 'start', env });
    });
    child.removeAllListeners('exit');
    return new HotlineChild(child, ready.wsUrl, ready.url);
  }

  /** Memory after a full collection, handles and calls in progress. */
  sample(): Promise<MemoryFigures> {
    return this.ask<MemoryFigures>({ kind: 'sample' });
  }

  /** Resolves once every ended call is stored and reported. */
  settle(): Promise<void> {
    return this.ask<void>({ kind: 'settle' });
  }

  /** Writes a heap snapshot (after a full collection) to `file`. */
  snapshot(file: string): Promise<string> {
    return this.ask<string>({ kind: 'snapshot', file });
  }

  async close(): Promise<void> {
    if (this.failure) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    await this.ask({ kind: 'close' }).catch(() => undefined);
    this.child.disconnect();
    await exited;
  }

  private ask<T>(command: ChildCommand): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (value) => resolve(value as T), reject });
      this.child.send({ id, command });
    });
  }
}

function mallocSettings(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('MALLOC_') && entry[1] !== undefined));
}
