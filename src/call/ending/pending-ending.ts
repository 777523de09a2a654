import type { Logger } from '../../logger.js';
import type { EndingCause } from '../call-record.js';
import type { ToolCallRecord } from '../speech/reply.js';
import type { TransferDestination } from './transfer.js';

/** How the call ends once the speech before it has played, and why. */
export type Ending = ({ type: 'hangup' } | { type: 'transfer'; destination: TransferDestination }) & { cause: EndingCause };

/**
 * A hangup or transfer waiting for the speech before it to play: a goodbye is
 * never cut. The end of playback is reported by assistant_speech_ended; since
 * that may never come, a timer on the playback estimate stands in for it.
 */
export class PendingEnding {
  private pending: { ending: Ending; record: ToolCallRecord | undefined; timer: NodeJS.Timeout } | undefined;

  constructor(
    /** How long until what was delivered has played, grace included. */
    private readonly waitMs: () => number,
    /** The wait ran out without assistant_speech_ended. */
    private readonly onOverdue: () => void,
    private readonly log: Logger,
  ) {}

  get waiting(): boolean {
    return this.pending !== undefined;
  }

  wait(ending: Ending, record: ToolCallRecord | undefined): void {
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = { ending, record, timer: this.timer() };
  }

  /** Waits the playback estimate afresh: more speech went out, or the caller's hold ended. */
  rewait(): void {
    if (!this.pending) return;
    clearTimeout(this.pending.timer);
    this.pending.timer = this.timer();
  }

  /** The ending, now due; it is no longer pending. */
  take(): Ending | undefined {
    const pending = this.pending;
    if (!pending) return undefined;
    clearTimeout(pending.timer);
    this.pending = undefined;
    return pending.ending;
  }

  /** It will not happen: the model sees why. */
  cancel(why: string): void {
    const pending = this.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending = undefined;
    if (pending.record) pending.record.result = `not done: ${why}`;
    this.log.info({ action: pending.ending.type, why }, 'call-ending action cancelled');
  }

  private timer(): NodeJS.Timeout {
    return setTimeout(() => {
      this.log.info('no assistant_speech_ended in time; going on without it');
      this.onOverdue();
    }, this.waitMs());
  }
}
