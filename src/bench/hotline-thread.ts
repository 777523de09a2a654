/**
 * The main thread's handle on Hotline running in hotline-worker: its
 * addresses, and the probes and measurements taken on its thread, with every
 * time moved onto this thread's clock.
 */
import type { Worker } from 'node:worker_threads';
import { clockOffset } from './clock.js';
import type {
  HeapFigures,
  HotlineCommand,
  HotlineResults,
  HotlineWorkerData,
  HotlineWorkerMessage,
  LoopFigures,
  ProbeRecords,
} from './hotline-worker.js';
import { spawnWorker } from './spawn-worker.js';

type Pending = { resolve: (result: unknown) => void; reject: (error: Error) => void };

export class HotlineThread {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private failure: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly url: string,
    readonly wsUrl: string,
    readonly port: number,
    /** Worker time + shift = this thread's time. */
    private readonly shift: number,
    /** The nice value Hotline's thread runs at (undefined where it cannot be read). */
    readonly nice: number | undefined,
  ) {
    worker.on('message', (message: HotlineWorkerMessage) => {
      if (message.kind === 'ready') return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.kind === 'answer') waiter?.resolve(message.result);
      else waiter?.reject(new Error(`Hotline thread: ${message.message}`));
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`Hotline thread exited with code ${code}`)));
  }

  /** `nice`: the priority the thread takes back if it is born lower (see takeNice). */
  static async start(env: Record<string, string>, nice?: number): Promise<HotlineThread> {
    const data: HotlineWorkerData = { role: 'hotline-bench-hotline', env, nice };
    const worker = spawnWorker('hotline-worker', data);
    const ready = await new Promise<Extract<HotlineWorkerMessage, { kind: 'ready' }>>((resolve, reject) => {
      const onExit = (code: number): void => reject(new Error(`Hotline thread exited with code ${code} while starting`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.on('message', function awaitReady(message: HotlineWorkerMessage) {
        if (message.kind !== 'ready') return;
        worker.off('message', awaitReady);
        worker.off('error', reject);
        worker.off('exit', onExit);
        resolve(message);
      });
    });
    return new HotlineThread(worker, ready.url, ready.wsUrl, ready.port, clockOffset() - ready.clockOffset, ready.nice);
  }

  /** Starts recording speaks leaving Hotline and barge-ins entering it. */
  async startProbe(): Promise<void> {
    await this.call({ kind: 'probe-start' });
  }

  /** Stops recording and returns what was seen, in this thread's clock. */
  async stopProbe(): Promise<ProbeRecords> {
    const records = await this.call<'probe-stop'>({ kind: 'probe-stop' });
    const shift = this.shift;
    return {
      speaks: records.speaks.map((s) => ({ text: s.text, at: s.at + shift })),
      bargeIns: records.bargeIns.map((b) => ({
        session: b.session,
        receivedAt: b.receivedAt === undefined ? undefined : b.receivedAt + shift,
        enteredAt: b.enteredAt + shift,
        socketDestroyedAt: b.socketDestroyedAt === undefined ? undefined : b.socketDestroyedAt + shift,
      })),
    };
  }

  /** Starts measuring the event-loop delay and utilisation of Hotline's thread. */
  async startLoopMonitor(): Promise<void> {
    await this.call({ kind: 'loop-start' });
  }

  stopLoopMonitor(): Promise<LoopFigures> {
    return this.call<'loop-stop'>({ kind: 'loop-stop' });
  }

  /** Forces garbage collection on Hotline's thread; its heap figures afterwards (RSS is the whole process's). */
  settleHeap(): Promise<HeapFigures> {
    return this.call<'settle-heap'>({ kind: 'settle-heap' });
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call({ kind: 'close' }).catch(() => undefined);
    this.failure ??= new Error('Hotline thread closed');
    await this.worker.terminate();
  }

  private call<K extends HotlineCommand['kind']>(command: Extract<HotlineCommand, { kind: K }>): Promise<HotlineResults[K]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      this.worker.postMessage({ id, command });
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
