/**
 * What the call core tells whoever traces calls: a call, its turns, each turn's LLM requests and
 * tool runs, and every speak from the moment it is sent until it has played. The core owns these
 * shapes; `src/telemetry` implements them with OpenTelemetry and `server.ts` wires that in when
 * tracing is configured.
 *
 * Without it the core holds the no-op objects below: every method is empty and returns one of these
 * same objects, so a Hotline that traces nothing allocates nothing for it and pays an empty call
 * where a span would start. Work that only feeds a trace is skipped where `recording` is false.
 */
import type { TokenUsage } from '../../llm/usage.js';
import type { ToolOutcome } from './business-tools.js';

/** trace_id and span_id, as the call's log lines carry them. */
export interface TraceLogFields {
  readonly trace_id: string;
  readonly span_id: string;
}

export interface CallTraceStart {
  readonly sessionId: string;
  readonly direction: 'inbound' | 'outbound';
  /** The numbers on the line: personal data, kept out of spans unless content is included. */
  readonly from: string | undefined;
  readonly to: string | undefined;
  /** A call this process did not see start (a restart, another replica's call). */
  readonly adopted: boolean;
}

/** Where calls are traced. */
export interface CallTracing {
  /** False for the no-op. */
  readonly recording: boolean;
  call(start: CallTraceStart): CallTrace;
}

/**
 * How a speak's playback ended: played out, cut by the caller, stopped (the caller started to talk,
 * the call ended), or never reported (a service that sends no playback events; known at the call's end).
 */
export type PlaybackEnd = 'played' | 'cut' | 'stopped' | 'unreported';

/** One speak (or audio clip) sent; it ends once it has played, was cut, or the call ended. */
export interface SpeakTrace {
  /** assistant_speak: the service has started to play it. */
  started(durationMs: number | undefined): void;
  ended(how: PlaybackEnd): void;
}

export interface SpeakTraceStart {
  readonly kind: 'speak' | 'audio';
  /** What the caller is to hear: personal data (it may repeat what they said). */
  readonly text: string;
  readonly sentences: number;
}

/** What a speak is traced under: its turn, or the call for what no turn said (a greeting, a goodbye). */
export interface SpeechParent {
  speak(start: SpeakTraceStart): SpeakTrace;
}

export interface CallTrace extends SpeechParent {
  readonly recording: boolean;
  /** The call's trace for its log lines; undefined when nothing is recorded. */
  readonly logFields: TraceLogFields | undefined;
  /** A turn begins with the caller's words (personal data). */
  turn(id: number, callerText: string): TurnTrace;
  /** The call is in `language` from now on: chosen at its start (`request`, `line`, `default`) or switched to. */
  language(language: string, chosenBy: string): void;
  /** The call is over (or handed to another replica); spans of it still open end with it. */
  end(end: { readonly reason: string; readonly callId: string; readonly turns: number }): void;
}

export interface LlmRequestStart {
  /** 1 for the turn's first request; the next follow tool results. */
  readonly round: number;
  readonly model: string;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
}

export interface LlmRequestEnd {
  /** The stream's last chunk, where the server names the model that answered and the response's id. */
  readonly last?: unknown;
  readonly usage?: TokenUsage | undefined;
  readonly costUsd?: number | undefined;
  /** Why the turn stopped it (a barge-in, a time limit), if it did. */
  readonly aborted?: string | undefined;
  readonly error?: unknown;
}

export interface LlmRequestTrace {
  /** The request's first token (answer or reasoning) has arrived. */
  firstToken(): void;
  end(end: LlmRequestEnd): void;
}

export interface ToolTraceStart {
  readonly name: string;
  /** The model's id of the call. */
  readonly callId: string;
  /** Where the tool comes from: `tools/order_status.yaml`, `MCP server crm`. */
  readonly source: string | undefined;
  readonly sideEffect: boolean;
  /** The model asked again for a change already made: nothing runs, the earlier result is given. */
  readonly reused: boolean;
  /** The model's arguments: personal data. */
  readonly arguments: string;
}

export interface ToolTrace {
  /** W3C Trace Context headers (`traceparent`, `tracestate`) for the business system; undefined when nothing is recorded. */
  readonly propagation: Readonly<Record<string, string>> | undefined;
  /** `result` is what the model reads: personal data. */
  end(outcome: ToolOutcome, result: string): void;
}

export interface TurnTraceEnd {
  readonly status: 'completed' | 'aborted' | 'failed';
  readonly error?: unknown;
  /** The model ended the turn with a hangup or transfer. */
  readonly action?: 'hangup' | 'transfer' | undefined;
}

export interface TurnTrace extends SpeechParent {
  llmRequest(start: LlmRequestStart): LlmRequestTrace;
  tool(start: ToolTraceStart): ToolTrace;
  /** The turn's first sentence has left for the service, `ms` after the caller's words arrived. */
  firstSpeak(ms: number): void;
  /** The business's documents the turn was given (`places`: passagePlace of each), found in `ms`. */
  knowledge(places: readonly string[], ms: number): void;
  /** Of them, the reply drew on these. */
  knowledgeUsed(places: readonly string[]): void;
  end(end: TurnTraceEnd): void;
}

export const NO_SPEAK_TRACE: SpeakTrace = Object.freeze({ started: () => {}, ended: () => {} });

export const NO_LLM_REQUEST_TRACE: LlmRequestTrace = Object.freeze({ firstToken: () => {}, end: () => {} });

export const NO_TOOL_TRACE: ToolTrace = Object.freeze({ propagation: undefined, end: () => {} });

export const NO_TURN_TRACE: TurnTrace = Object.freeze({
  speak: () => NO_SPEAK_TRACE,
  llmRequest: () => NO_LLM_REQUEST_TRACE,
  tool: () => NO_TOOL_TRACE,
  firstSpeak: () => {},
  knowledge: () => {},
  knowledgeUsed: () => {},
  end: () => {},
});

export const NO_CALL_TRACE: CallTrace = Object.freeze({
  recording: false,
  logFields: undefined,
  speak: () => NO_SPEAK_TRACE,
  turn: () => NO_TURN_TRACE,
  language: () => {},
  end: () => {},
});

/** Traces nothing: what a Hotline without tracing holds. */
export const NO_CALL_TRACING: CallTracing = Object.freeze({ recording: false, call: () => NO_CALL_TRACE });
