import type { Logger } from '../logger.js';

/**
 * Holds a call's events while it gets ready (an adopted call's past read
 * from disk, the caller's record looked up), then lets them through in the
 * order they came: nothing is answered from a half-known call.
 */
export class EventGate<Event> {
  private preparing: Promise<void> | undefined;
  private waiting: Event[] = [];

  constructor(
    private readonly handle: (event: Event) => void,
    private readonly log: Logger,
    /** Runs once the events that waited have been handled. */
    private readonly opened: () => void = () => undefined,
  ) {}

  /** True while the call gets ready. */
  get closed(): boolean {
    return this.preparing !== undefined;
  }

  /** Resolves once the call is ready (at once when it is). */
  ready(): Promise<void> {
    return this.preparing ?? Promise.resolve();
  }

  /** Keeps the event for later if the call is getting ready; false: handle it now. */
  hold(event: Event): boolean {
    if (!this.preparing) return false;
    this.waiting.push(event);
    return true;
  }

  /** Events wait until `work` is done (or failed: logged), then are handled in the order they came. */
  prepare(work: Promise<void>): void {
    this.preparing = work
      .catch((error: unknown) => this.log.error({ err: error }, 'getting the call ready failed'))
      .finally(() => {
        this.preparing = undefined;
        const waiting = this.waiting;
        this.waiting = [];
        for (const event of waiting) this.handle(event);
        this.opened();
      });
  }

  /** The call is over: what waits is dropped. */
  clear(): void {
    this.waiting = [];
  }
}
