import { setImmediate as turn } from 'node:timers/promises';

/** Long enough to get work done, short enough that a call's next event waits no longer than this. */
const SLICE_MS = 10;

/**
 * Long work on the event loop every call shares (a contact list of 150,000
 * rows), cut into slices: `enough()` says when a slice has had its time,
 * `next()` lets everything that waited run before the next slice.
 */
export class Slices {
  private startedAt = performance.now();
  /** The longest slice so far, in ms: what the calls waited at most. */
  longestMs = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  enough(): boolean {
    return performance.now() - this.startedAt >= this.sliceMs;
  }

  async next(): Promise<void> {
    this.longestMs = Math.max(this.longestMs, performance.now() - this.startedAt);
    await turn();
    this.startedAt = performance.now();
  }

  /** A turn for the others if this slice has had its time; call it often, it costs a clock read. */
  async breathe(): Promise<void> {
    if (this.enough()) await this.next();
  }
}
