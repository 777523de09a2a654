import type { PendingCall } from './outbound-request.js';
import type { CallSoFar, CallSummary } from './call-record-schema.js';

/**
 * What the call core tells about each call once it has ended, for whoever
 * keeps a record of calls (reports, campaigns). The core owns this interface;
 * `server.ts` wires an implementation in, so the core never imports one.
 * The record itself is declared once, as a schema, in call-record-schema.ts.
 */

export {
  CALL_END_REASONS,
  type CallEndReason,
  type CallProgress,
  type CallSoFar,
  type CallSummary,
  type HeardLine,
  type KnowledgeRef,
  type ToolRunSummary,
  type TurnSummary,
} from './call-record-schema.js';

/**
 * A call has started: someone picked up (or a mailbox did), or called in. `from` and `to` as the
 * service wrote them; `tags`: an outbound call Hotline requested, the request's own tags (a campaign and contact id).
 */
export type CallStartedInfo = Pick<CallSummary, 'sessionId' | 'direction' | 'from' | 'to' | 'tags'>;

/** Told of every call that ended, once its transcript is on disk. Must not throw. */
export interface CallObserver {
  callEnded(summary: CallSummary): void;
  /**
   * The call's record so far, from session_start on and again as it goes (a turn, a tool run, a
   * barge-in, an ending sent): never on the path from the caller's words to the reply, coalesced
   * to one per moment. A record keeper writes it as it happens, so a process killed mid-call
   * leaves the call's record behind.
   */
  callProgress?(call: CallSoFar): void;
  /**
   * At the session_start of every call: told at once, before the call's first
   * word, so a campaign can mark the contact of a requested call reached, and
   * the person on the line is known to every replica, before anything else
   * could go wrong. The greeting waits for a promise returned here (a moment,
   * and never longer than a short bound): a process killed during the
   * greeting then finds the person reached.
   */
  callStarted?(info: CallStartedInfo): void | Promise<void>;
  /**
   * A requested outbound call that never became a call: a session_end for a
   * session this process never saw, matching the request by number (a busy line).
   */
  callNotConnected?(request: PendingCall, reason: string): void;
}

/** Tells an outbound call's first words from a mailbox's greeting. */
export interface VoicemailDetector {
  /** From the words alone: clearly a mailbox, clearly a person, or unsure. */
  classify(text: string): 'voicemail' | 'human' | 'unsure';
  /**
   * The model's judgement for words the phrases are unsure of; resolves
   * 'human' when the model cannot tell in time. Never rejects.
   */
  judge(text: string, signal: AbortSignal): Promise<'voicemail' | 'human'>;
}
