/**
 * The main thread's handle on Hotline running in hotline-worker: its
 * addresses, and the probes and measurements taken on its thread, with every
 * time moved onto this thread's clock.
 */
import { clockOffset } from './clock.js';
import { CommandChannel, shiftRecords, type HeapFigures, type HotlineUnderTest, type LoopFigures, type ProbeRecords } from './hotline-probes.js';
import type { HotlineWorkerData, HotlineWorkerMessage } from './hotline-worker.js';
import { spawnWorker } from './spawn-worker.js';
import type { WorkerLike } from './thread-process.js';

export class HotlineThread implements HotlineUnderTest {
  readonly pids: readonly number[] = [];
  private readonly commands: CommandChannel;

  private constructor(
    private readonly worker: WorkerLike,
    readonly url: string,
    readonly wsUrl: string,
    readonly port: number,
    /** Worker time + shift = this thread's time. */
    private readonly shift: number,
    /** The nice value Hotline's thread runs at (undefined where it cannot be read). */
    readonly nice: number | undefined,
  ) {
    this.commands = new CommandChannel((message) => worker.postMessage(message), 'Hotline thread');
    worker.on('message', (message: HotlineWorkerMessage) => {
      if (message.kind !== 'ready') this.commands.settle(message);
    });
    worker.on('error', (error) => this.commands.fail(error));
    worker.on('exit', (code) => this.commands.fail(new Error(`Hotline thread exited with code ${code}`)));
  }
  /** `nice`: the priority the thread takes back if it is born lower (see takeNice). */
  static start(env: Record<string, string>, nice?: number): Promise<HotlineThread> {
    return HotlineThread.spawn('hotline-worker', { role: 'hotline-bench-hotline', env, nice } satisfies HotlineWorkerData);
  }

  /**
   * A module beside this one that answers as hotline-worker does: raw-reader-worker, the floor, is measured alike.
   * `spawn`: on a thread here, or on one in a process of its own (ThreadProcess.spawn).
   */
  static async spawn(module: string, data: unknown, spawn: (module: string, data: unknown) => WorkerLike = spawnWorker): Promise<HotlineThread> {
    const worker = spawn(module, data);
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
    await this.commands.call({ kind: 'probe-start' });
  }

  /** Stops recording and returns what was seen, in this thread's clock. */
  async stopProbe(): Promise<ProbeRecords> {
    return shiftRecords(await this.commands.call<'probe-stop'>({ kind: 'probe-stop' }), this.shift);
  }

  /** Starts measuring the event-loop delay and utilisation of Hotline's thread. */
  async startLoopMonitor(): Promise<void> {
    await this.commands.call({ kind: 'loop-start' });
  }

  stopLoopMonitor(): Promise<LoopFigures> {
    return this.commands.call<'loop-stop'>({ kind: 'loop-stop' });
  }

  /** Forces garbage collection on Hotline's thread; its heap figures afterwards (RSS is the whole process's). */
  settleHeap(): Promise<HeapFigures> {
    return this.commands.call<'settle-heap'>({ kind: 'settle-heap' });
  }

  async close(): Promise<void> {
    if (!this.commands.failed) await this.commands.call({ kind: 'close' }).catch(() => undefined);
    this.commands.fail(new Error('Hotline thread closed'));
    await this.worker.terminate();
  }
}
