import type { TokenUsage } from '../../llm/usage.js';
import type { PendingCall } from './outbound-request.js';
import type { ToolOutcome } from './business-tools.js';

/**
 * What the call core tells about each call once it has ended, for whoever
 * keeps a record of calls (reports, campaigns). The core owns this interface;
 * `server.ts` wires an implementation in, so the core never imports one.
 */

/** How a call ended. */
export const CALL_END_REASONS = [
  /** The caller (or the person called) hung up, or the service ended the call. */
  'caller_hung_up',
  /** The model said goodbye and hung up. */
  'agent_hung_up',
  /** The call went to a person. */
  'transferred',
  /** The caller stayed silent through the re-prompts. */
  'silence',
  /** Hotline gave up after failed turns (the LLM kept failing). */
  'error',
  /** Hotline was shutting down. */
  'shutdown',
  /** No event for CALL_IDLE_TIMEOUT_MS. */
  'idle',
  /** An outbound call reached a mailbox: a message was left. */
  'voicemail',
  /** The connection to the voice service broke and did not come back. */
  'connection_lost',
  /** A person running Hotline ended the call (the dashboard, the admin API). */
  'operator_hung_up',
  /** A person running Hotline handed the call to a colleague. */
  'operator_transferred',
  /**
   * Hotline stopped while the call went on (killed, out of memory, a crash): found in progress when
   * it started again. The record holds what was said until then.
   */
  'cut_off',
] as const;
export type CallEndReason = (typeof CALL_END_REASONS)[number];

export interface TurnSummary {
  /** ISO time the caller's words arrived. */
  readonly at: string;
  /** From the caller's words to the LLM request (a mailbox check or a keypad pause may come between). */
  readonly llmRequestMs?: number;
  /** From the caller's words to the LLM's first token (answer or reasoning). */
  readonly llmFirstTokenMs?: number;
  /** From the caller's words to the first speak of the reply. */
  readonly firstSpeakMs?: number;
  /** From the caller's words to the service saying the reply began to play (assistant_speak). */
  readonly playbackStartedMs?: number;
  /** From the caller's words to the reply's speech having played (assistant_speech_ended). */
  readonly playbackEndedMs?: number;
  /** The caller cut this reply short. */
  readonly interrupted: boolean;
  /** The LLM failed this turn: the caller heard the apology. */
  readonly failed: boolean;
  /**
   * The tokens of the turn's LLM requests, summed, as the server counted them (`cached`: read from
   * its prompt cache). Absent when the server sent no counts, or the turn was cut before they came.
   */
  readonly tokens?: TokenUsage;
  /** The model the turn asked. */
  readonly model?: string;
  /** What its tokens cost, in USD, at the prices of the day (LLM_PRICES_FILE); absent for a model without a price. */
  readonly costUsd?: number;
}

export interface ToolRunSummary {
  readonly name: string;
  readonly arguments: string;
  readonly outcome: ToolOutcome;
  readonly durationMs: number;
  readonly reused: boolean;
}

/** A line of the conversation as the caller heard it: their words, or what of a reply was played to them. */
export interface HeardLine {
  readonly role: 'user' | 'assistant';
  readonly text: string;
}

export interface CallSummary {
  /** The call's own id, made by Hotline: a session id the service uses again is a new call with a new call id. */
  readonly callId: string;
  /** The voice service's id of the session. */
  readonly sessionId: string;
  readonly direction: 'inbound' | 'outbound';
  readonly from: string | undefined;
  readonly to: string | undefined;
  /** ISO times. */
  readonly startedAt: string;
  readonly endedAt: string;
  readonly durationMs: number;
  readonly endReason: CallEndReason;
  /** session_end's own reason, when the service sent one. */
  readonly serviceReason: string | undefined;
  readonly turns: readonly TurnSummary[];
  readonly bargeIns: number;
  readonly toolRuns: readonly ToolRunSummary[];
  /** An outbound call Hotline requested: the request's variables (and a campaign's, among them). */
  readonly variables: Readonly<Record<string, string>> | undefined;
  /** The request's own tags (a campaign and contact id), untouched by the call. */
  readonly tags: Readonly<Record<string, string>> | undefined;
  /** The call's JSONL transcript, complete on disk when the summary is given. */
  readonly transcriptFile: string;
  /**
   * The conversation as heard (no tool calls): with it another replica takes the call up where it
   * was (its owner killed, or stopping). Absent from records written before it was kept.
   */
  readonly conversation?: readonly HeardLine[];
}

/**
 * A call's record while it goes on (issue 22: written as it happens, from session_start on): what
 * is known so far. Its end, duration and end reason come when it ends; `revision` grows with each
 * snapshot of the same call, so a late or repeated write never replaces a newer one.
 */
export type CallProgress = CallSoFar & Partial<Pick<CallSummary, 'endedAt' | 'durationMs' | 'endReason'>> & { readonly revision: number };

/** What the core tells of a call in progress: its summary without an end. */
export type CallSoFar = Omit<CallSummary, 'endedAt' | 'durationMs' | 'endReason'>;

/** A call has started: someone picked up (or a mailbox did), or called in. */
export interface CallStartedInfo {
  readonly sessionId: string;
  readonly direction: 'inbound' | 'outbound';
  /** As the service wrote them. */
  readonly from?: string | undefined;
  readonly to: string | undefined;
  /** An outbound call Hotline requested: the request's own tags (a campaign and contact id). */
  readonly tags: Readonly<Record<string, string>> | undefined;
}

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
