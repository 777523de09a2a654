/**
 * The signal of one piece of work — a request, a lookup — that aborts when any
 * of its parents does or after a time limit, and lets go of both once the work
 * is over (dispose). Use it instead of
 * `AbortSignal.any([parent, AbortSignal.timeout(ms)])` wherever the signal is
 * handed to code that adds an 'abort' listener and never removes it, as the
 * openai SDK and fetch do.
 *
 * Why (issue 21, memory growing with every call): on Node 20 a composite signal
 * with an 'abort' listener is held by a process-wide set until it aborts, while
 * a timeout signal that nothing else holds is collected together with its timer
 * — so the composite never aborts, and every request kept its signal, the SDK's
 * listener and all that closes over, for good. A parent that lives as long as
 * the process (a service's "stopping" signal) also gained a weak reference per
 * request. Here the parents hold a listener only while the work runs, and the
 * work's own signal is garbage with the scope.
 */
export class AbortScope {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly parents: readonly AbortSignal[];
  private timeUp = false;
  private readonly forward = (event: Event): void => {
    this.controller.abort((event.target as AbortSignal).reason);
  };

  constructor(parents: readonly (AbortSignal | undefined)[], timeoutMs?: number) {
    this.parents = parents.filter((parent): parent is AbortSignal => parent !== undefined);
    const fired = this.parents.find((parent) => parent.aborted);
    if (fired) {
      this.controller.abort(fired.reason);
      return;
    }
    for (const parent of this.parents) parent.addEventListener('abort', this.forward, { once: true });
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.timeUp = true;
        this.controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
      }, timeoutMs);
      // A time limit never keeps the process alive.
      this.timer.unref();
    }
  }

  /** The work's signal: aborted by a parent, or by the time limit. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True when the time limit, not a parent, ended the work. */
  get timedOut(): boolean {
    return this.timeUp;
  }

  /** The work is over: the parents and the timer let go of it. Idempotent. */
  dispose(): void {
    clearTimeout(this.timer);
    for (const parent of this.parents) parent.removeEventListener('abort', this.forward);
  }
}
