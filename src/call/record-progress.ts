import type { CallSoFar } from './ports/call-summary.js';

/**
 * Tells whoever follows calls as they go (CallObserver.callProgress) that a call's record changed:
 * once the work of this moment is done — a turn's request has gone to the model first — and once
 * however many changes the moment made. Apart from the call: it is about when to tell, not the call.
 */
export class RecordProgress {
  private queued = false;

  constructor(
    private readonly progress: ((call: CallSoFar) => void) | undefined,
    private readonly soFar: () => CallSoFar,
    private readonly ended: () => boolean,
  ) {}

  changed(): void {
    const { progress } = this;
    if (!progress || this.queued || this.ended()) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      // An ended call's record is its summary, told when its transcript is closed.
      if (!this.ended()) progress(this.soFar());
    });
  }
}
