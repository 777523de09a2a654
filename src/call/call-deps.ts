/**
 * What a call is given: the settings every call shares, where its actions go,
 * and the parts it talks to. The transports and the registry build these; the
 * call owns the shapes.
 */
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { CallerLines, Redact } from './ports/redaction.js';
import type { CallMetrics } from './ports/call-metrics.js';
import type { Llm } from '../llm/llm.js';
import type { TokenUsage } from '../llm/usage.js';
import type { PromptSet } from '../prompts/prompt-store.js';
import type { PendingCall } from './ports/outbound-request.js';
import type { Action } from '../protocol/actions.js';
import type { Session } from '../protocol/events.js';
import type { TranscriptLog } from './ports/transcript.js';
import type { BusinessConnections, CallerContextSource, ToolBox } from './ports/business-tools.js';
import type { CallActivityObserver } from './ports/call-activity.js';
import type { CallSoFar, VoicemailDetector } from './ports/call-summary.js';
import type { CallTrace } from './ports/tracing.js';
import type { KnowledgeLookup } from './ports/knowledge.js';
import type { LanguageDetector } from './ports/language.js';
import type { TransferSetup } from './ending/transfer.js';
import type { VoicemailTiming } from './input/voicemail-watch.js';

/** Limits and timings every call shares, from the configuration. */
export interface CallSettings {
  llmTimeoutMs: number;
  /** A reasoning model that says nothing for this long fails the turn. */
  llmThinkingTimeoutMs: number;
  llmTotalTimeoutMs: number;
  /** Consecutive failed turns after which the call goes to TRANSFER_TARGET, or ends politely. */
  llmMaxFailures: number;
  /** LLM requests one turn may make while the model calls tools. */
  llmMaxToolRounds: number;
  /** Token cap of each LLM request; undefined sends none. */
  llmMaxTokens: number | undefined;
  /** The longest reply spoken, in characters. */
  replyMaxChars: number;
  /** A reasoning model silent this long: the caller hears the thinking line (streaming transports only); 0 never. */
  thinkingFillerMs: number;
  playbackGraceMs: number;
  /** Budget of the history sent to the LLM, in characters; the oldest turns go first. */
  historyMaxChars: number;
  timeZone: string | undefined;
  /** false: every call in the prompts folder's own language, whatever its folders, request or words (LANGUAGES). Default true. */
  perCallLanguages?: boolean;
  /** false: no configure_transcription is sent (CONFIGURE_TRANSCRIPTION). Default true. */
  configureTranscription?: boolean;
  /** A business tool still running this long: the caller hears its hold line. */
  toolHoldMs: number;
  /** While it runs on, another hold line this long after the last one has played. */
  toolHoldRepeatMs: number;
  /** Text messages one call may send to the person on the line (SMS_MAX_PER_CALL); none without. */
  smsMaxPerCall?: number | undefined;
}

/** Where a call's actions go: a WebSocket, or webhook answers. */
export interface ActionSink {
  send(action: Action): void;
  /** The turn is over: nothing more will be sent until the next event (or a deferred hangup/transfer). */
  idle?(): void;
  /** False once the connection is gone, so another one may take the call over (a reconnect). */
  readonly open?: boolean;
  /** Resolves once the actions sent so far have left for the service, or after `timeoutMs`. */
  drain?(timeoutMs: number): Promise<void>;
  /** Hotline ended the call: the connection goes too. */
  close?(): void;
}

/**
 * How sentences reach the voice service. `stream`: each the moment it is
 * complete (WebSocket). `whole`: one speak with the whole reply. `sentences`:
 * the first at once, the rest together each time the previous speech ended
 * (webhook answers carry one action each).
 */
export type SpeechPacing = 'stream' | 'whole' | 'sentences';

/** Why Hotline itself ends a call: the caller said nothing for too long, Hotline is shutting down, or a person running it said so. */
export type LeaveReason = 'idle' | 'shutdown' | 'operator';

export interface TakenRequest {
  /** The outbound call Hotline requested that this call answers, if any. */
  readonly request: PendingCall | undefined;
  readonly recorded: Promise<void> | undefined;
}

export interface CallDeps {
  llm: Llm;
  /** The prompts as they were when the call began: an edit applies from the next call. */
  prompts: PromptSet;
  tools: ChatCompletionTool[];
  /** The business's own tools (HTTP, MCP), asked for at each turn: the offer changes as servers come and go. */
  toolBox?: ToolBox | undefined;
  /** Looks the caller up as the call starts; the greeting waits for it at most its timeout. */
  callerContext?: CallerContextSource | undefined;
  /** Connections to the business systems, opened before a turn may need them. */
  businessConnections?: BusinessConnections | undefined;
  /** Tells an outbound call's first words from a mailbox's greeting. */
  voicemail?: { detector: VoicemailDetector; timing: VoicemailTiming } | undefined;
  transfer: TransferSetup;
  /**
   * The call started (its session_start): the outbound call Hotline requested that it answers, if
   * any — at once, or a moment later when another replica requested it — and when its start is on
   * record (the greeting waits for that, within a short bound).
   */
  started: (session: Pick<Session, 'direction' | 'from_phone_number' | 'to_phone_number'>) => TakenRequest | Promise<TakenRequest>;
  settings: CallSettings;
  pacing: SpeechPacing;
  /**
   * Hotline may stop the service's playback with a barge_in action: only where
   * the speak that follows still reaches the service (a WebSocket, or webhook
   * answers that carry several actions).
   */
  canStopPlayback: boolean;
  logger: Logger;
  transcript: TranscriptLog;
  metrics: CallMetrics;
  /** Told of the call's phase and latest words as they change (a live view). */
  activity?: CallActivityObserver | undefined;
  /** Told of the call's record as it goes (see CallObserver.callProgress). */
  progress?: ((call: CallSoFar) => void) | undefined;
  /**
   * Each reply is written to the record as soon as it has played, not only with the next turn: where
   * another replica may take the call up from its record (replicas on one store). One write more per turn.
   */
  recordEachReply?: boolean | undefined;
  /** What a model's tokens cost (src/llm/prices.ts); without it turns have tokens but no price. */
  prices?: { costOf(model: string, usage: TokenUsage): number | undefined } | undefined;
  /** What is written of anyone's words (the transcript writer applies it too); none without. */
  redact?: Redact | undefined;
  /** The model is given the redacted words as well; by default it hears what the caller said, within the call. */
  redactFromModel?: boolean | undefined;
  /** This call's reader of the caller's utterances, one after another (a number may be said across two); each on its own with `redact` without. */
  callerLines?: CallerLines | undefined;
  /** The call's trace (its turns, LLM requests, tool runs and speaks); none without. */
  trace?: CallTrace | undefined;
  /** The business's documents, looked up at each turn; none without (KNOWLEDGE_DIR empty or missing). */
  knowledge?: KnowledgeLookup | undefined;
  /** Tells which language the caller's words are in, for prompts with languages; without it only the service's tag switches. */
  languageDetector?: LanguageDetector | undefined;
}
