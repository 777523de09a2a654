/**
 * Writes each call's record as it happens — from session_start, at each turn, tool run, barge-in
 * and ending, and when it ends — without the call ever waiting for the database.
 *
 * Each record is journalled (write-journal.ts) and kept in a queue, one entry per call (a newer
 * snapshot of a call replaces the one still waiting), then written. A database that is locked,
 * full, read-only, restarting or unreachable makes the writes wait and be tried again with
 * backoff until they succeed; the calls go on. A record the database refuses for good is kept in
 * the journal's refused records and logged, never dropped silently.
 *
 * Snapshots carry a revision that only grows (the clock, in microseconds, kept strictly
 * increasing): a late or repeated write never replaces a newer one, across restarts too.
 */
import type { CallProgress, CallSoFar, CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { isPassing } from './store-errors.js';
import type { JournalEntry, WriteJournal } from './write-journal.js';

/** Where the records go: the calls table (CallRepository). */
export interface CallRows {
  /** Stores these snapshots (distinct calls) at once; each keeps the newer of its own and the row's. */
  saveAll(calls: readonly CallProgress[]): Promise<void>;
}

/** Records written in one statement: one round trip to the store for many calls' changes. */
const BATCH = 50;

/** How far behind the database the writer is: for /readyz, metrics and `npm run db -- status`. */
export interface WriteBacklog {
  /** Calls whose latest record is not in the database yet. */
  readonly pending: number;
  /** How long the oldest of them has waited, in ms (0 when none waits). */
  readonly oldestMs: number;
  /** The last write's error code while writes are failing; undefined once one succeeds. */
  readonly failing: string | undefined;
}

export interface CallWriterOptions {
  readonly rows: CallRows;
  readonly journal: WriteJournal;
  readonly logger: Logger;
  /** An ended call's final record is in the database: its report may be made (it refers to the row). */
  readonly stored?: ((summary: CallSummary) => void) | undefined;
  /** Told of each failed write, for the metric. */
  readonly failed?: (() => void) | undefined;
  /** The first wait after a failed write, doubled each time up to `maxBackoffMs`. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

interface Waiting {
  readonly entry: JournalEntry;
  /** performance.now() when the call's oldest unwritten record came. */
  readonly since: number;
  /** Whether the stored hook is owed once this entry is in (a replayed record's report is found by the report sweep instead). */
  readonly tell: boolean;
}

export class CallWriter {
  private readonly waiting = new Map<string, Waiting>();
  private draining = false;
  private failing: string | undefined;
  private lastRevision = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly idle = new Set<() => void>();
  private closed = false;

  constructor(private readonly options: CallWriterOptions) {}

  /** A call in progress (CallObserver.callProgress). */
  callProgress(call: CallSoFar): void {
    this.put({ call: { ...call, revision: this.revision() }, final: false }, false);
  }

  /**
   * A call that ended (CallObserver.callEnded): written, then `stored` is told. The promise
   * resolves once it is written (or kept in the journal for good: refused, or the writer closed).
   */
  callEnded(summary: CallSummary): Promise<void> {
    const written = new Promise<void>((resolve) => {
      const waiting = this.finals.get(summary.callId) ?? [];
      waiting.push(resolve);
      this.finals.set(summary.callId, waiting);
    });
    this.put({ call: { ...summary, revision: this.revision() }, final: true }, true);
    if (this.closed) this.settleFinal(summary.callId);
    return written;
  }

  /** Who waits for a call's final record to be written. */
  private readonly finals = new Map<string, (() => void)[]>();

  private settleFinal(callId: string): void {
    for (const resolve of this.finals.get(callId) ?? []) resolve();
    this.finals.delete(callId);
  }

  /**
   * A call found in progress after a restart (the process before was killed): recorded as cut off,
   * its end the last sign of life `endedAt`; `stored` is told as for any ended call.
   */
  cutOff(call: CallProgress, endedAt: Date): Promise<void> {
    const started = Date.parse(call.startedAt);
    const summary: CallSummary = {
      ...call,
      from: call.from,
      to: call.to,
      endedAt: endedAt.toISOString(),
      durationMs: Number.isFinite(started) ? Math.max(0, endedAt.getTime() - started) : 0,
      endReason: 'cut_off',
    };
    return this.callEnded(summary);
  }

  /** Reads back what an earlier process journalled and did not get written, and writes it. */
  async replay(): Promise<number> {
    const { journal } = this.options;
    let count = 0;
    for (const file of await journal.leftOver()) {
      for await (const entry of journal.read(file)) {
        // Journalled again in this process's file first: the old file can go at once.
        this.put(entry, false, Math.max(entry.call.revision, 0));
        count += 1;
      }
      await journal.forget(file);
    }
    return count;
  }

  get backlog(): WriteBacklog {
    let oldest = Infinity;
    for (const { since } of this.waiting.values()) oldest = Math.min(oldest, since);
    return {
      pending: this.waiting.size,
      oldestMs: this.waiting.size === 0 ? 0 : Math.round(performance.now() - oldest),
      failing: this.failing,
    };
  }

  /** Resolves once nothing waits, or after `timeoutMs`; true when nothing waits. */
  async settled(timeoutMs = Infinity): Promise<boolean> {
    if (this.waiting.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let done: (() => void) | undefined;
    const result = await Promise.race([
      new Promise<boolean>((resolve) => {
        done = () => resolve(true);
        this.idle.add(done);
      }),
      ...(Number.isFinite(timeoutMs) ? [new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))] : []),
    ]);
    clearTimeout(timer);
    if (done) this.idle.delete(done);
    return result;
  }

  /**
   * Stops writing: what still waits stays in the journal for the next start. Tries for up to
   * `timeoutMs` first.
   */
  async close(timeoutMs: number): Promise<void> {
    const settled = await this.settled(timeoutMs);
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const callId of [...this.finals.keys()]) this.settleFinal(callId);
    if (!settled) this.options.logger.warn({ pending: this.waiting.size }, 'calls not yet in the database stay in the journal for the next start');
    else this.options.journal.rotate();
    await this.options.journal.close();
  }

  private revision(): number {
    // Microseconds: a restarted process's revisions are above the last one's.
    this.lastRevision = Math.max(Date.now() * 1000, this.lastRevision + 1);
    return this.lastRevision;
  }

  private put(entry: JournalEntry, tell: boolean, revisionAtLeast = 0): void {
    if (this.closed) return;
    if (revisionAtLeast > this.lastRevision) this.lastRevision = revisionAtLeast;
    this.options.journal.append(entry);
    const before = this.waiting.get(entry.call.callId);
    // A newer snapshot of a call whose older one waits takes its place; a final one is never replaced by a progress one.
    if (before && (before.entry.call.revision > entry.call.revision || (before.entry.final && !entry.final))) return;
    this.waiting.set(entry.call.callId, { entry, since: before?.since ?? performance.now(), tell: tell || (before?.tell ?? false) });
    this.drain();
  }

  private drain(): void {
    if (this.draining || this.retryTimer || this.closed) return;
    this.draining = true;
    void this.writeAll()
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'the call writer stopped unexpectedly'))
      .finally(() => {
        this.draining = false;
      });
  }

  private async writeAll(): Promise<void> {
    while (this.waiting.size > 0 && !this.closed) {
      const batch: [string, Waiting][] = [];
      for (const entry of this.waiting) {
        batch.push(entry);
        if (batch.length === BATCH) break;
      }
      try {
        await this.options.rows.saveAll(batch.map(([, waiting]) => waiting.entry.call));
      } catch (error) {
        if (!this.refused(error)) return;
        // Refused for good: one record is bad. Written one at a time, the good ones go in and the bad one is set aside.
        for (const [callId, waiting] of batch) {
          try {
            await this.options.rows.saveAll([waiting.entry.call]);
          } catch (single) {
            if (!this.refused(single)) return;
            this.options.logger.error({ err: single, callId }, 'the database refused a call record for good; it is kept in the journal (rejected/)');
            this.options.journal.reject(waiting.entry, single instanceof Error ? single.message : String(single));
            this.forget(callId, waiting);
            if (waiting.entry.final) this.settleFinal(callId);
            continue;
          }
          this.written(callId, waiting);
        }
        continue;
      }
      for (const [callId, waiting] of batch) this.written(callId, waiting);
    }
    if (this.waiting.size === 0) {
      // Everything journalled is in the database.
      this.options.journal.rotate();
      for (const done of this.idle) done();
    }
  }

  /** A write failed: true when the database refused it for good; false when it is to be tried again later (retry scheduled). */
  private refused(error: unknown): boolean {
    this.options.failed?.();
    if (!isPassing(error)) return true;
    if (this.failing === undefined) this.options.logger.warn({ err: error, pending: this.waiting.size }, 'the database refused a write; calls are kept and written when it is back');
    // The code only (SQLITE_BUSY, ECONNREFUSED…): /readyz is public, the message is in the log.
    const code = (error as { code?: unknown } | null)?.code;
    this.failing = typeof code === 'string' ? code : 'error';
    this.retryLater();
    return false;
  }

  private written(callId: string, waiting: Waiting): void {
    if (this.failing !== undefined) this.options.logger.info({ pending: this.waiting.size - 1 }, 'the database takes writes again');
    this.failing = undefined;
    this.backoff = undefined;
    this.forget(callId, waiting);
    if (waiting.entry.final && waiting.tell) this.tellStored(waiting.entry.call);
    if (waiting.entry.final) this.settleFinal(callId);
  }

  /** Done with this entry, unless a newer one of the call came while it was written. */
  private forget(callId: string, written: Waiting): void {
    if (this.waiting.get(callId) === written) this.waiting.delete(callId);
    else {
      // The newer one goes to the back: other calls' records get their turn.
      const newer = this.waiting.get(callId);
      this.waiting.delete(callId);
      if (newer) this.waiting.set(callId, newer);
    }
  }

  /** The wait before the next try: doubled while the database stays away, back to the first once a write succeeds. */
  private backoff: number | undefined;

  private retryLater(): void {
    const wait = this.backoff ?? this.options.backoffMs ?? 100;
    this.backoff = Math.min(wait * 2, this.options.maxBackoffMs ?? 5_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.drain();
    }, wait);
  }

  private tellStored(call: CallProgress): void {
    try {
      this.options.stored?.(call as CallSummary);
    } catch (error) {
      this.options.logger.error({ err: error, callId: call.callId }, 'telling of a stored call failed');
    }
  }
}
