import type { Logger } from '../logger.js';

/**
 * Work that only records a turn's start, done once its request is on the wire. The request's bytes
 * leave on the next tick (Node's http hands a kept connection to a request then), and a tick queued
 * after it runs next, still before any of the turn's own promise steps; an event read in the same
 * tick (ws emits a chunk's messages at once) has the call do it first (`flush`). So the record is
 * whole before anything else touches the call, and the caller's wait carries none of it.
 */
export class AfterRequest {
  private readonly queued: (() => void)[] = [];

  constructor(private readonly log: Logger) {}

  add(work: () => void): void {
    if (this.queued.push(work) === 1) process.nextTick(() => this.flush());
  }

  /** Does what waits now (nothing when nothing does); one failing piece of work does not stop the rest. */
  flush(): void {
    for (const work of this.queued.splice(0)) {
      try {
        work();
      } catch (error) {
        this.log.error({ err: error }, 'recording the turn failed');
      }
    }
  }
}
