import type { Logger } from '../../logger.js';
import type { AudioClip } from '../../prompts/prompt-store.js';
import type { Action } from '../../protocol/actions.js';
import { PendingEnding, type Ending } from './pending-ending.js';
import type { ToolCallRecord } from '../speech/reply.js';
import { transferAction, type CallParties } from './transfer.js';
import type { Voice } from '../speech/voice.js';

export interface CallEndingHost {
  readonly log: Logger;
  readonly sessionId: string;
  readonly voice: Voice;
  /** True once the call is over: nothing more goes out. */
  ended(): boolean;
  /** True while the caller talks: nothing goes out over their words, the ending neither. */
  heldBack(): boolean;
  /** The call ends or goes elsewhere: no more input is awaited. */
  stopInput(): void;
  transferClip(): AudioClip | undefined;
  parties(): CallParties;
  playbackGraceMs: number;
  send(action: Action): void;
  /** The reply before the ending is final: into the transcript. */
  settleReply(): void;
  /** The call-ending action went out (or, with `undefined`, a transfer came back unanswered). */
  recordEnding(ending: Ending | undefined): void;
}

/**
 * How a call ends: a hangup or transfer waits until the speech before it has
 * played (a goodbye is never cut), and Hotline ending the call itself (idle,
 * shutdown) resolves once that action has gone out.
 */
export class CallEnding {
  private readonly pending: PendingEnding;
  /** A hangup went out. */
  private hungUp = false;
  /** A transfer went out: a session_start for this session now means the call came back. */
  private transferred = false;
  /** Set while Hotline ends the call itself; resolves when the call-ending action has gone out. */
  private leaving: { done: Promise<void>; resolve: () => void } | undefined;
  /** An operator hands the call over: the caller's words no longer call it off, until it comes back unanswered. */
  private handingOver = false;

  constructor(private readonly host: CallEndingHost) {
    this.pending = new PendingEnding(
      () => host.voice.playback.remainingMs() + host.playbackGraceMs,
      () => this.onOverdue(),
      host.log,
    );
  }

  /** A hangup or transfer waits for the speech before it. */
  get waiting(): boolean {
    return this.pending.waiting;
  }

  get hungUpAlready(): boolean {
    return this.hungUp;
  }

  /** The call is on its way out: hung up, Hotline is ending it, or an operator hands it over. */
  get closing(): boolean {
    return this.hungUp || this.leaving !== undefined || this.handingOver;
  }

  get leavingNow(): boolean {
    return this.leaving !== undefined;
  }

  /**
   * Hotline starts ending the call itself. Resolves once the call-ending
   * action has gone out (or the call ended first); `fresh` is false when it
   * was already under way, and nothing needs to be said again.
   */
  leave(): { done: Promise<void>; fresh: boolean } {
    if (this.leaving) return { done: this.leaving.done, fresh: false };
    let resolve = (): void => undefined;
    const done = new Promise<void>((r) => (resolve = r));
    this.leaving = { done, resolve };
    return { done, fresh: true };
  }

  /**
   * The session started again: back from a transfer nobody answered — true
   * if a transfer went out, and the call goes on.
   */
  cameBack(): boolean {
    if (!this.transferred) return false;
    this.transferred = false;
    this.hungUp = false;
    this.handingOver = false;
    this.host.recordEnding(undefined);
    return true;
  }

  /** A person hands the call over: like `after`, but what the caller says meanwhile no longer calls it off. */
  handOver(ending: Ending): void {
    this.handingOver = true;
    this.after(ending);
  }

  /** Transfer and hangup wait until the speech before them has played. */
  after(ending: Ending, record?: ToolCallRecord): void {
    const { voice } = this.host;
    this.host.stopInput();
    if (ending.type === 'transfer') this.playClipBeforeTransfer();
    if (!voice.playback.pending && !voice.holding && !this.host.heldBack()) return this.send(ending);
    this.pending.wait(ending, record);
  }

  cancel(why: string): void {
    this.pending.cancel(why);
  }

  /** More speech went out, or the caller's hold ended: wait for playback afresh. */
  rewait(): void {
    this.pending.rewait();
  }

  /** Playback has ended: a waiting ending goes out now, unless the caller is talking. */
  fire(): void {
    if (this.host.heldBack()) return;
    const ending = this.pending.take();
    if (ending) this.send(ending);
  }

  /** The call is over: nothing waits any more. */
  dispose(): void {
    this.pending.cancel('the call ended first');
    this.leaving?.resolve();
  }

  /** The prompt set's transfer chime, after the announcement and before the line goes to a person. */
  private playClipBeforeTransfer(): void {
    const clip = this.host.transferClip();
    // Words still held back (the caller is talking) would follow the chime: then better no chime.
    if (clip && !this.host.voice.clip(clip)) this.host.log.debug('transfer chime left out: words are still held back');
  }

  private onOverdue(): void {
    // Speech first, always: held sentences go out before the call ends.
    if (this.host.voice.holding) {
      this.host.voice.deliver();
      this.pending.rewait();
      return;
    }
    this.fire();
  }

  private send(ending: Ending): void {
    const { host } = this;
    if (host.ended()) return;
    if (ending.type === 'hangup') {
      this.hungUp = true;
      host.send({ type: 'hangup', session_id: host.sessionId });
    } else {
      this.transferred = true;
      host.send(transferAction(host.sessionId, ending.destination, host.parties()));
    }
    host.log.info({ action: ending.type, cause: ending.cause }, 'call-ending action sent');
    host.recordEnding(ending);
    host.settleReply();
    this.leaving?.resolve();
  }
}
