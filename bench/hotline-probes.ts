/**
 * What the bench measures inside a Hotline, wherever it runs: on a thread of the bench's
 * (hotline-worker.ts) or as a process of its own (process-probe.ts). Everything is recorded
 * on Hotline's side and handed over on request, so the probes cost Hotline no message per event.
 */
import diagnostics from 'node:diagnostics_channel';
import v8 from 'node:v8';
import type { Socket } from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import type { CallRegistry } from '../src/call/call-registry.js';
import { now } from './clock.js';
import { probeCore } from './core-probe.js';
import { forcedGc, settleHeap } from './gc.js';

/** What a probe saw, in the clock of Hotline's thread. */
export interface ProbeRecords {
  /**
   * Each speak as it left Hotline (the transport's send returned), and when the LLM socket's data
   * that was read last before it had reached JavaScript (`readAt`): what lies between the two is
   * Hotline's own work, what lies before is the wire, the kernel and the wait for the thread.
   */
  speaks: { text: string; at: number; readAt?: number | undefined }[];
  /** Each barge-in (user_speak with barged_in) as it entered the call core, and when the LLM socket was destroyed. */
  bargeIns: { session: string; receivedAt: number | undefined; enteredAt: number; socketDestroyedAt: number | undefined }[];
}

export interface LoopFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Share of the time this thread's event loop was busy, 0–1. */
  utilization: number;
  /** The longest garbage-collection pause of this thread, and all of them added up (undefined where not observed). */
  gcPauseMaxMs?: number;
  gcPauseTotalMs?: number;
  /**
   * Bytes allocated on this thread's V8 heap over the run: what its heap grew by plus what each
   * collection freed (v8.GCProfiler), so garbage counts whether or not it was collected yet.
   */
  allocatedBytes?: number;
  /** CPU time of the process over the run, user and system: Hotline's own where it runs as a process of its own. */
  processCpuMs?: number;
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

/** A command's answer, or why it failed, as both kinds of Hotline send it back. */
export type HotlineAnswer =
  | { kind: 'answer'; id: number; result: HotlineResults[HotlineCommand['kind']] }
  | { kind: 'failed'; id: number; message: string };

/** The same records on another clock: `shift` is added to every time. */
export function shiftRecords(records: ProbeRecords, shift: number): ProbeRecords {
  return {
    speaks: records.speaks.map((s) => ({ text: s.text, at: s.at + shift, readAt: s.readAt === undefined ? undefined : s.readAt + shift })),
    bargeIns: records.bargeIns.map((b) => ({
      session: b.session,
      receivedAt: b.receivedAt === undefined ? undefined : b.receivedAt + shift,
      enteredAt: b.enteredAt + shift,
      socketDestroyedAt: b.socketDestroyedAt === undefined ? undefined : b.socketDestroyedAt + shift,
    })),
  };
}

/**
 * The probes of one Hotline. Made before its calls start (the socket hooks see only sockets made
 * after); the registry may be attached later, and a probe started before it is installed then.
 */
export class HotlineProbes {
  private registry: CallRegistry | undefined;
  private records: ProbeRecords | undefined;
  private unprobe: (() => void) | undefined;
  /** The barge-in the core is handling right now: it aborts the LLM stream synchronously. */
  private handling: ProbeRecords['bargeIns'][number] | undefined;
  /**
   * When the socket data being handled now reached Hotline's code: ws parses a chunk and
   * dispatches its events synchronously inside the socket's 'data' event, so a listener put in
   * front of ws's own stamps every event it carries.
   */
  private dataAt: number | undefined;
  /** When data from a client socket (the LLM's, in a first-speak run) last reached this thread's code. */
  clientDataAt: number | undefined;
  private monitor: IntervalHistogram | undefined;
  private busyBefore: EventLoopUtilization | undefined;
  private gcObserver: PerformanceObserver | undefined;
  private gcPauses: number[] = [];
  private allocation: { profiler: v8.GCProfiler; heapUsed: number; cpu: NodeJS.CpuUsage } | undefined;
  private readonly gc = forcedGc();

  constructor() {
    diagnostics.subscribe('net.server.socket', (message) => {
      const { socket } = message as { socket: Socket };
      socket.prependListener('data', () => {
        this.dataAt = now();
      });
    });
    // Every client socket is watched from the start: Hotline keeps its LLM connections alive across phases.
    diagnostics.subscribe('net.client.socket', (message) => {
      const { socket } = message as { socket: Socket };
      socket.prependListener('data', () => {
        this.clientDataAt = now();
      });
      const destroy = socket.destroy;
      const probes = this;
      socket.destroy = function destroyObserved(this: Socket, error?: Error) {
        if (probes.handling && probes.handling.socketDestroyedAt === undefined) probes.handling.socketDestroyedAt = now();
        return destroy.call(this, error);
      };
    });
  }

  get attached(): boolean {
    return this.registry !== undefined;
  }

  attach(registry: CallRegistry): void {
    this.registry = registry;
    if (this.records && !this.unprobe) this.install(this.records);
  }

  /** Every command but 'close', which is the caller's: a thread closes its Hotline, a process is signalled. */
  async run(command: Exclude<HotlineCommand, { kind: 'close' }>): Promise<HotlineResults[HotlineCommand['kind']]> {
    switch (command.kind) {
      case 'probe-start': {
        this.unprobe?.();
        this.unprobe = undefined;
        this.records = { speaks: [], bargeIns: [] };
        if (this.registry) this.install(this.records);
        return null;
      }
      case 'probe-stop': {
        this.unprobe?.();
        this.unprobe = undefined;
        const result = this.records ?? { speaks: [], bargeIns: [] };
        this.records = undefined;
        return result;
      }
      case 'loop-start':
        this.gcObserver?.disconnect();
        this.gcPauses = [];
        this.gcObserver = new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) this.gcPauses.push(entry.duration);
        });
        this.gcObserver.observe({ entryTypes: ['gc'] });
        this.monitor?.disable();
        this.monitor = monitorEventLoopDelay({ resolution: 2 });
        this.monitor.enable();
        this.busyBefore = performance.eventLoopUtilization();
        this.allocation?.profiler.stop();
        this.allocation = { profiler: new v8.GCProfiler(), heapUsed: v8.getHeapStatistics().used_heap_size, cpu: process.cpuUsage() };
        this.allocation.profiler.start();
        return null;
      case 'loop-stop': {
        const monitor = this.monitor;
        if (!monitor) throw new Error('the event-loop monitor is not running');
        monitor.disable();
        this.monitor = undefined;
        // Entries still queued are delivered now, not after the answer.
        for (const entry of this.gcObserver?.takeRecords() ?? []) this.gcPauses.push(entry.duration);
        this.gcObserver?.disconnect();
        this.gcObserver = undefined;
        const allocation = this.allocation;
        this.allocation = undefined;
        return {
          ...(allocation ? allocationSince(allocation) : {}),
          p50Ms: monitor.percentile(50) / 1e6,
          p99Ms: monitor.percentile(99) / 1e6,
          maxMs: monitor.max / 1e6,
          utilization: performance.eventLoopUtilization(this.busyBefore).utilization,
          gcPauseMaxMs: Math.max(0, ...this.gcPauses),
          gcPauseTotalMs: this.gcPauses.reduce((sum, ms) => sum + ms, 0),
        };
      }
      case 'settle-heap': {
        await settleHeap(this.gc.gc);
        const usage = process.memoryUsage();
        return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, gcExposed: this.gc.exposed };
      }
    }
  }

  private install(current: ProbeRecords): void {
    if (!this.registry) return;
    this.unprobe = probeCore(this.registry, {
      entered: (event, at) => {
        if (event.type !== 'user_speak' || !event.barged_in) return;
        this.handling = { session: event.session.id, receivedAt: this.dataAt, enteredAt: at, socketDestroyedAt: undefined };
        current.bargeIns.push(this.handling);
      },
      handled: () => {
        this.handling = undefined;
      },
      speakLeft: (text, at) => {
        current.speaks.push({ text, at, readAt: this.clientDataAt });
      },
    });
  }
}

/** Bytes allocated and the process's CPU since `start`: the heap's growth plus what every collection in between freed. */
function allocationSince(start: { profiler: v8.GCProfiler; heapUsed: number; cpu: NodeJS.CpuUsage }): { allocatedBytes: number; processCpuMs: number } {
  const { statistics } = start.profiler.stop();
  const freed = statistics.reduce((sum, gc) => sum + (gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize), 0);
  const cpu = process.cpuUsage(start.cpu);
  return { allocatedBytes: v8.getHeapStatistics().used_heap_size - start.heapUsed + freed, processCpuMs: (cpu.user + cpu.system) / 1000 };
}

/** What the bench needs of a Hotline it drives: a thread of its own (HotlineThread) or a process (HotlineProcess). */
export interface HotlineUnderTest {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  /** The nice value Hotline runs at (undefined where it cannot be read). */
  readonly nice: number | undefined;
  /** Hotline's processes, when it runs in processes of its own (none: it shares the bench's). */
  readonly pids: readonly number[];
  /** Starts recording speaks leaving Hotline and barge-ins entering it. */
  startProbe(): Promise<void>;
  /** Stops recording and returns what was seen, in the bench's clock. */
  stopProbe(): Promise<ProbeRecords>;
  /** Starts measuring the event-loop delay and utilisation of Hotline's thread. */
  startLoopMonitor(): Promise<void>;
  stopLoopMonitor(): Promise<LoopFigures>;
  /** Forces garbage collection in Hotline; its heap figures afterwards. */
  settleHeap(): Promise<HeapFigures>;
  close(): Promise<void>;
}

/** A command as it travels to a Hotline, numbered so its answer finds its way back. */
export interface NumberedCommand {
  id: number;
  command: HotlineCommand;
}

/** The bench's side of the commands to one Hotline: each answer settles the call that asked for it. */
export class CommandChannel {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  private failure: Error | undefined;

  /** `who` names the Hotline in the errors its failures become. */
  constructor(
    private readonly send: (message: NumberedCommand) => void,
    private readonly who: string,
  ) {}

  get failed(): boolean {
    return this.failure !== undefined;
  }

  call<K extends HotlineCommand['kind']>(command: Extract<HotlineCommand, { kind: K }>): Promise<HotlineResults[K]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      this.send({ id, command });
    });
  }

  settle(answer: HotlineAnswer): void {
    const waiter = this.pending.get(answer.id);
    this.pending.delete(answer.id);
    if (answer.kind === 'answer') waiter?.resolve(answer.result);
    else waiter?.reject(new Error(`${this.who}: ${answer.message}`));
  }

  /** Every call waiting, and every later one, fails with the first error. */
  fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
