/**
 * The call core's tracing port (src/call/ports/tracing.ts) with OpenTelemetry spans: a trace per
 * call, and under it a span per turn, per LLM request (GenAI conventions), per tool run and per
 * speak until it has played. Parents are passed explicitly, never through a context manager: no
 * async hook runs on the call path, and nothing here is asked for unless a span is open.
 *
 * Words, numbers, tool arguments and results are personal data: they reach a span only with
 * OTEL_INCLUDE_CONTENT=true, and then redacted as the logs are.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import type { ToolOutcome } from '../call/ports/business-tools.js';
import type { Redact } from '../call/ports/redaction.js';
import type {
  CallTrace,
  CallTraceStart,
  CallTracing,
  PlaybackEnd,
  LlmRequestEnd,
  LlmRequestStart,
  LlmRequestTrace,
  SpeakTrace,
  SpeakTraceStart,
  TraceLogFields,
  ToolTrace,
  ToolTraceStart,
  TurnTrace,
  TurnTraceEnd,
} from '../call/ports/tracing.js';
import * as A from './attributes.js';
import type { EndedCalls } from './ended-calls.js';
import { traceHeaders } from './propagation.js';

export interface CallTracerOptions {
  /** Words and numbers in spans (OTEL_INCLUDE_CONTENT). */
  readonly includeContent: boolean;
  /** Applied to every word that reaches a span. */
  readonly redact: Redact;
  /** gen_ai.provider.name of the LLM. */
  readonly provider: string;
  /** Where each ended call's span context is kept for its report's delivery. */
  readonly ended: EndedCalls;
}

/** Time limits that ended a request: failures, unlike a barge-in. */
const FAILED_ABORTS = new Set(['timeout', 'thinking-timeout', 'total-timeout']);

/** Tool outcomes that are failures of the run. */
const FAILED_TOOL_OUTCOMES = new Set<ToolOutcome>(['error', 'timeout', 'unavailable', 'invalid']);

export class OtelCallTracing implements CallTracing {
  readonly recording = true;

  constructor(
    private readonly tracer: Tracer,
    private readonly options: CallTracerOptions,
  ) {}

  call(start: CallTraceStart): CallTrace {
    return new OtelCallTrace(this.tracer, this.options, start);
  }
}

/** A span that ends once, and leaves its call's list of open spans as it does. */
class ChildSpan {
  private done = false;

  constructor(
    readonly span: Span,
    private readonly open: Set<ChildSpan>,
  ) {
    open.add(this);
  }

  get ended(): boolean {
    return this.done;
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.open.delete(this);
    this.span.end();
  }

  /** Its call ended first: the span ends too, marked so. */
  cutShort(): void {
    if (this.done) return;
    this.span.setAttribute(A.UNFINISHED, true);
    this.end();
  }
}

class OtelCallTrace implements CallTrace {
  readonly recording = true;
  readonly logFields: TraceLogFields;
  private readonly span: Span;
  /** The context the call's own children start in. */
  readonly context: Context;
  /** Child spans not ended yet: they end with the call at the latest. */
  readonly open = new Set<ChildSpan>();
  private done = false;

  constructor(
    readonly tracer: Tracer,
    readonly options: CallTracerOptions,
    readonly start: CallTraceStart,
  ) {
    const attributes: Attributes = {
      [A.SESSION_ID]: start.sessionId,
      [A.CALL_DIRECTION]: start.direction,
      [A.CALL_ADOPTED]: start.adopted,
    };
    if (options.includeContent) {
      if (start.from !== undefined) attributes[A.CALL_FROM] = start.from;
      if (start.to !== undefined) attributes[A.CALL_TO] = start.to;
    }
    this.span = tracer.startSpan('call', { kind: SpanKind.SERVER, attributes }, ROOT_CONTEXT);
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
    const { traceId, spanId } = this.span.spanContext();
    this.logFields = { trace_id: traceId, span_id: spanId };
  }

  /** Words for a span: redacted, and only when content is included. */
  words(text: string): string | undefined {
    return this.options.includeContent ? this.options.redact(text) : undefined;
  }

  child(name: string, kind: SpanKind, attributes: Attributes, parent: Context): ChildSpan {
    return new ChildSpan(this.tracer.startSpan(name, { kind, attributes }, parent), this.open);
  }

  turn(id: number, callerText: string): TurnTrace {
    return new OtelTurnTrace(this, id, callerText);
  }

  speak(start: SpeakTraceStart): SpeakTrace {
    return new OtelSpeakTrace(this, start, this.context);
  }

  language(language: string, chosenBy: string): void {
    if (this.done) return;
    this.span.setAttribute(A.CALL_LANGUAGE, language);
    this.span.addEvent(A.LANGUAGE_EVENT, { [A.CALL_LANGUAGE]: language, 'hotline.language.chosen_by': chosenBy });
  }

  end(end: { readonly reason: string; readonly callId: string; readonly turns: number }): void {
    if (this.done) return;
    this.done = true;
    for (const child of [...this.open]) child.cutShort();
    this.span.setAttributes({ [A.CALL_ID]: end.callId, [A.CALL_END_REASON]: end.reason, [A.CALL_TURNS]: end.turns });
    this.span.end();
    this.options.ended.remember(end.callId, this.span.spanContext());
  }
}

class OtelTurnTrace implements TurnTrace {
  private readonly child: ChildSpan;
  private readonly context: Context;

  constructor(
    private readonly call: OtelCallTrace,
    id: number,
    callerText: string,
  ) {
    const attributes: Attributes = { [A.TURN_ID]: id };
    const words = call.words(callerText);
    if (words !== undefined) attributes[A.TURN_CALLER_TEXT] = words;
    this.child = call.child('turn', SpanKind.INTERNAL, attributes, call.context);
    this.context = trace.setSpan(ROOT_CONTEXT, this.child.span);
  }

  llmRequest(start: LlmRequestStart): LlmRequestTrace {
    return new OtelLlmRequestTrace(this.call, start, this.context);
  }

  tool(start: ToolTraceStart): ToolTrace {
    return new OtelToolTrace(this.call, start, this.context);
  }

  speak(start: SpeakTraceStart): SpeakTrace {
    return new OtelSpeakTrace(this.call, start, this.context);
  }

  firstSpeak(ms: number): void {
    if (!this.child.ended) this.child.span.setAttribute(A.TURN_FIRST_SPEAK_MS, Math.round(ms * 1000) / 1000);
  }

  knowledge(places: readonly string[], ms: number): void {
    if (this.child.ended) return;
    this.child.span.setAttribute(A.TURN_KNOWLEDGE_PASSAGES, [...places]);
    this.child.span.setAttribute(A.TURN_KNOWLEDGE_MS, Math.round(ms * 1000) / 1000);
  }

  knowledgeUsed(places: readonly string[]): void {
    if (!this.child.ended) this.child.span.setAttribute(A.TURN_KNOWLEDGE_USED, [...places]);
  }

  end(end: TurnTraceEnd): void {
    if (this.child.ended) return;
    const { span } = this.child;
    span.setAttribute(A.TURN_OUTCOME, end.status);
    if (end.action) span.setAttribute(A.TURN_ACTION, end.action);
    if (end.status === 'failed') failed(span, errorType(end.error));
    this.child.end();
  }
}

class OtelLlmRequestTrace implements LlmRequestTrace {
  private readonly child: ChildSpan;
  private readonly startedAt = performance.now();
  private firstTokenSeen = false;

  constructor(
    private readonly call: OtelCallTrace,
    start: LlmRequestStart,
    parent: Context,
  ) {
    const { provider } = call.options;
    const attributes: Attributes = {
      [A.GEN_AI_OPERATION_NAME]: 'chat',
      [A.GEN_AI_PROVIDER_NAME]: provider,
      [A.GEN_AI_SYSTEM]: provider,
      [A.GEN_AI_REQUEST_MODEL]: start.model,
      [A.GEN_AI_CONVERSATION_ID]: call.start.sessionId,
      [A.LLM_ROUND]: start.round,
    };
    if (start.maxTokens !== undefined) attributes[A.GEN_AI_REQUEST_MAX_TOKENS] = start.maxTokens;
    if (start.temperature !== undefined) attributes[A.GEN_AI_REQUEST_TEMPERATURE] = start.temperature;
    this.child = call.child(`chat ${start.model}`, SpanKind.CLIENT, attributes, parent);
  }

  firstToken(): void {
    if (this.firstTokenSeen || this.child.ended) return;
    this.firstTokenSeen = true;
    const seconds = (performance.now() - this.startedAt) / 1000;
    this.child.span.setAttribute(A.GEN_AI_TIME_TO_FIRST_CHUNK, seconds);
    this.child.span.addEvent(A.FIRST_TOKEN_EVENT);
  }

  end(end: LlmRequestEnd): void {
    if (this.child.ended) return;
    const { span } = this.child;
    const last = end.last;
    if (isRecord(last)) {
      if (typeof last.model === 'string') span.setAttribute(A.GEN_AI_RESPONSE_MODEL, last.model);
      if (typeof last.id === 'string') span.setAttribute(A.GEN_AI_RESPONSE_ID, last.id);
    }
    const { usage } = end;
    if (usage) {
      span.setAttribute(A.GEN_AI_USAGE_INPUT_TOKENS, usage.prompt);
      span.setAttribute(A.GEN_AI_USAGE_OUTPUT_TOKENS, usage.completion);
      if (usage.cached !== undefined) span.setAttribute(A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cached);
      if (usage.reasoning !== undefined) span.setAttribute(A.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, usage.reasoning);
    }
    if (end.costUsd !== undefined) span.setAttribute(A.LLM_COST_USD, end.costUsd);
    if (end.aborted !== undefined) span.setAttribute(A.ABORTED, end.aborted);
    if (end.error !== undefined && end.aborted === undefined) {
      const status = httpStatusOf(end.error);
      if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      failed(span, errorType(end.error), this.call.options.includeContent ? this.call.options.redact(messageOf(end.error)) : undefined);
    } else if (end.aborted !== undefined && FAILED_ABORTS.has(end.aborted)) {
      failed(span, end.aborted);
    }
    this.child.end();
  }
}

class OtelToolTrace implements ToolTrace {
  private readonly child: ChildSpan;
  readonly propagation: Readonly<Record<string, string>>;

  constructor(
    private readonly call: OtelCallTrace,
    start: ToolTraceStart,
    parent: Context,
  ) {
    const attributes: Attributes = {
      [A.GEN_AI_OPERATION_NAME]: 'execute_tool',
      [A.GEN_AI_TOOL_NAME]: start.name,
      [A.GEN_AI_TOOL_CALL_ID]: start.callId,
      // The conventions' word for a tool the agent runs itself against an outside system.
      [A.GEN_AI_TOOL_TYPE]: 'extension',
      [A.TOOL_SIDE_EFFECT]: start.sideEffect,
      [A.TOOL_REUSED]: start.reused,
    };
    if (start.source !== undefined) attributes[A.TOOL_SOURCE] = start.source;
    const args = call.words(start.arguments);
    if (args !== undefined) attributes[A.GEN_AI_TOOL_CALL_ARGUMENTS] = args;
    this.child = call.child(`execute_tool ${start.name}`, SpanKind.INTERNAL, attributes, parent);
    this.propagation = traceHeaders(this.child.span);
  }

  end(outcome: ToolOutcome, result: string): void {
    if (this.child.ended) return;
    const { span } = this.child;
    span.setAttribute(A.TOOL_OUTCOME, outcome);
    const words = this.call.words(result);
    if (words !== undefined) span.setAttribute(A.GEN_AI_TOOL_CALL_RESULT, words);
    if (FAILED_TOOL_OUTCOMES.has(outcome)) failed(span, outcome);
    this.child.end();
  }
}

class OtelSpeakTrace implements SpeakTrace {
  private readonly child: ChildSpan;

  constructor(call: OtelCallTrace, start: SpeakTraceStart, parent: Context) {
    const attributes: Attributes = {
      [A.SPEAK_KIND]: start.kind,
      [A.SPEAK_CHARS]: start.text.length,
      [A.SPEAK_SENTENCES]: start.sentences,
    };
    const words = start.text === '' ? undefined : call.words(start.text);
    if (words !== undefined) attributes[A.SPEAK_TEXT] = words;
    this.child = call.child(start.kind, SpanKind.INTERNAL, attributes, parent);
  }

  started(durationMs: number | undefined): void {
    if (this.child.ended) return;
    this.child.span.addEvent(A.PLAYBACK_STARTED_EVENT, durationMs === undefined ? undefined : { [A.PLAYBACK_DURATION_MS]: durationMs });
  }

  ended(how: PlaybackEnd): void {
    if (this.child.ended) return;
    this.child.span.setAttribute(A.SPEAK_PLAYBACK, how);
    this.child.end();
  }
}

function failed(span: Span, type: string, message?: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus(message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message });
}

/** The error's class (LlmTimeoutError, APIConnectionError): its message may quote what was said. */
function errorType(error: unknown): string {
  if (error instanceof Error) return error.constructor.name === 'Error' ? error.name : error.constructor.name;
  return typeof error;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function httpStatusOf(error: unknown): number | undefined {
  if (!isRecord(error)) return undefined;
  const { status } = error;
  return typeof status === 'number' ? status : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
