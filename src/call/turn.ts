import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { LlmEmptyReplyError, LlmTimeoutError, LlmTotalTimeoutError } from '../errors.js';
import { JsonStringFieldStream } from '../llm/json-string-field-stream.js';
import type { Llm, LlmRequest } from '../llm/llm.js';
import { SentenceChunker } from './chunker.js';
import { Reply, type ToolCallRecord } from './reply.js';
import { toSpeech } from './speech-text.js';
import { HANGUP, parseSpeakText, SPEAK, TRANSFER } from './tools.js';

export type FinalAction = { name: 'transfer' | 'hangup'; record: ToolCallRecord };

export type TurnOutcome =
  | { status: 'completed'; finalAction?: FinalAction }
  | { status: 'aborted' }
  | { status: 'failed'; error: unknown };

export type AbortReason = 'superseded' | 'timeout' | 'total-timeout' | 'ended';

interface ToolCallStream {
  id: string;
  name: string;
  args: string;
  /** Set while the arguments of a `speak` call stream into speech. */
  text?: JsonStringFieldStream;
  /** Characters of the speak text already spoken. */
  spoken: string;
}

export interface TurnOptions {
  id: number;
  llm: Llm;
  request: LlmRequest;
  firstTokenTimeoutMs: number;
  /** A stream that never ends is cut here; what was complete has been spoken. */
  totalTimeoutMs: number;
  /** A retry of a turn that failed before it said anything: never retried again. */
  retry: boolean;
  /**
   * Sends one speakable chunk. The call decides whether this turn may still
   * speak; the turn records the chunk only when it was sent.
   */
  speak: (turn: Turn, text: string) => void;
  /** Called once, when the first token of the reply arrives. */
  onFirstToken?: (turn: Turn) => void;
}

/**
 * One LLM turn: streams the reply, turns text (plain content and the `speak`
 * tool's argument alike) into sentence chunks the moment each is complete,
 * and collects the call-ending tool, if any.
 */
export class Turn {
  readonly id: number;
  readonly reply = new Reply();
  /** When the turn began: the caller's words had just arrived. */
  readonly startedAt = performance.now();
  private readonly controller = new AbortController();
  private abortReason: AbortReason | undefined;
  private readonly chunker = new SentenceChunker();
  private source: 'content' | ToolCallStream | undefined;
  private readonly toolCalls: ToolCallStream[] = [];
  private firstTokenTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: TurnOptions) {
    this.id = options.id;
  }

  get isRetry(): boolean {
    return this.options.retry;
  }

  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  /** Stops generation at once: the HTTP stream is closed and nothing more is spoken. */
  abort(reason: AbortReason): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller.abort(reason);
  }

  async run(): Promise<TurnOutcome> {
    const { llm, request, firstTokenTimeoutMs, totalTimeoutMs } = this.options;
    this.firstTokenTimer = setTimeout(() => this.abort('timeout'), firstTokenTimeoutMs);
    const totalTimer = setTimeout(() => this.abort('total-timeout'), totalTimeoutMs);
    try {
      const stream = await llm.stream(request, this.controller.signal);
      for await (const chunk of stream) {
        if (this.abortReason) break;
        this.consume(chunk);
      }
      if (this.abortReason) return this.abortedOutcome();
      this.endSource();
      return this.complete();
    } catch (error) {
      if (this.abortReason) return this.abortedOutcome();
      // A broken stream: complete sentences went out, the fragment is dropped.
      return { status: 'failed', error };
    } finally {
      clearTimeout(this.firstTokenTimer);
      clearTimeout(totalTimer);
    }
  }

  private abortedOutcome(): TurnOutcome {
    if (this.abortReason === 'timeout') {
      return { status: 'failed', error: new LlmTimeoutError(this.options.firstTokenTimeoutMs) };
    }
    if (this.abortReason === 'total-timeout') {
      return { status: 'failed', error: new LlmTotalTimeoutError(this.options.totalTimeoutMs) };
    }
    return { status: 'aborted' };
  }

  private consume(chunk: ChatCompletionChunk): void {
    const delta = chunk.choices[0]?.delta;
    if (!delta) return;
    if (this.firstTokenTimer && (delta.content || delta.tool_calls?.length)) {
      // The timeout guards the wait for the first token only; a long answer may take its time.
      clearTimeout(this.firstTokenTimer);
      this.firstTokenTimer = undefined;
      this.options.onFirstToken?.(this);
    }
    if (delta.content) {
      if (this.source !== 'content') {
        this.endSource();
        this.source = 'content';
        this.reply.beginContent();
      }
      this.say(this.chunker.push(delta.content));
    }
    for (const call of delta.tool_calls ?? []) this.consumeToolCall(call);
  }

  private consumeToolCall(delta: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    let call = this.toolCalls[delta.index];
    if (!call) {
      call = { id: delta.id || `call_${this.id}_${delta.index}`, name: '', args: '', spoken: '' };
      this.toolCalls[delta.index] = call;
    }
    if (delta.function?.name) call.name += delta.function.name;
    const piece = delta.function?.arguments;
    if (!piece) return;
    call.args += piece;
    if (call.name !== SPEAK) return;
    if (!call.text) {
      // Speech from a new speak call follows whatever was said before it.
      this.endSource();
      this.source = call;
      call.text = new JsonStringFieldStream('text');
      this.reply.beginSpeak(call.id);
    }
    if (this.source !== call) return;
    const text = call.text.push(piece);
    if (text) {
      call.spoken += text;
      this.say(this.chunker.push(text));
    }
    // The closing quote ends the text: no need to wait for the stream to end.
    if (call.text.done) this.endSource();
  }

  /** Flushes the pending text of the current source (content or a speak call). */
  private endSource(): void {
    if (this.source === undefined) return;
    this.source = undefined;
    this.say(this.chunker.flush());
  }

  private say(chunks: string[]): void {
    for (const chunk of chunks) {
      if (this.abortReason) return;
      const text = toSpeech(chunk);
      if (text !== '') this.options.speak(this, text);
    }
  }

  private complete(): TurnOutcome {
    let finalAction: FinalAction | undefined;
    for (const call of this.toolCalls) {
      if (!call) continue;
      if (call.name === SPEAK) {
        this.recoverSpeech(call);
        continue;
      }
      const record: ToolCallRecord = { id: call.id, name: call.name, arguments: call.args || '{}', result: '' };
      this.reply.toolCalls.push(record);
      if (call.name !== TRANSFER && call.name !== HANGUP) {
        record.result = `error: there is no tool named "${call.name}"`;
      } else if (finalAction) {
        record.result = `not done: ${finalAction.name} was already chosen in this reply`;
      } else {
        finalAction = { name: call.name, record };
      }
    }
    if (!finalAction && this.reply.chunkCount === 0) {
      return { status: 'failed', error: new LlmEmptyReplyError() };
    }
    return finalAction ? { status: 'completed', finalAction } : { status: 'completed' };
  }

  /**
   * A speak call whose text could not be streamed (name split across deltas,
   * arguments the incremental parser gave up on): speak what is left of it now.
   */
  private recoverSpeech(call: ToolCallStream): void {
    const text = parseSpeakText(call.args);
    if (text === undefined || !text.startsWith(call.spoken) || text.length === call.spoken.length) return;
    if (!call.text) this.reply.beginSpeak(call.id);
    this.source = call;
    this.say(this.chunker.push(text.slice(call.spoken.length)));
    call.spoken = text;
    this.endSource();
  }
}
