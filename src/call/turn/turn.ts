import { setTimeout as sleep } from 'node:timers/promises';
import { LlmEmptyReplyError, LlmThinkingTimeoutError, LlmTimeoutError, LlmTotalTimeoutError } from '../../errors.js';
import { readDelta, type ToolCallPiece } from '../../llm/delta.js';
import { JsonStringFieldStream } from '../../llm/json-string-field-stream.js';
import type { Llm, LlmRequest } from '../../llm/llm.js';
import { readChunks } from '../../llm/sse-chunks.js';
import { ThinkTagFilter } from '../../llm/think-tags.js';
import { readUsage, type TokenUsage } from '../../llm/usage.js';
import type { BusinessTool } from '../ports/business-tools.js';
import { NO_TURN_TRACE, type LlmRequestTrace, type TurnTrace } from '../ports/tracing.js';
import { SentenceChunker } from '../speech/chunker.js';
import { isRetryable, retryAfterMs } from './llm-retry.js';
import { Reply } from '../speech/reply.js';
import { hasSsml } from '../speech/ssml.js';
import { toSpeech } from '../speech/speech-text.js';
import { ToolCallAssembler, type ToolCallStream } from './tool-call-assembler.js';
import { endsTurn, sortRoundCalls, type FinalAction, type RoundCalls } from './round-calls.js';
import type { ToolCallRequest } from './tool-loop.js';
import { parseSpeakText, SPEAK } from './tools.js';
import { withKnowledgeNote } from '../knowledge-note.js';

/** What a chunk carries beyond its plain text. */
export interface SpeakExtra {
  /** The chunk with its SSML tags, for a speak's `ssml`. */
  ssml?: string;
  /** A hold line (for a thinking model, or while tools run): it goes out at once, whatever the pacing. */
  filler?: 'thinking' | 'tool';
}

export type TurnOutcome =
  | { status: 'completed'; finalAction?: FinalAction; capped?: boolean }
  | { status: 'aborted' }
  | { status: 'failed'; error: unknown };

export type AbortReason = 'superseded' | 'timeout' | 'thinking-timeout' | 'total-timeout' | 'capped' | 'ended';

export interface TurnLimits {
  /** No token at all (answer or reasoning) within this after a request: the turn fails. */
  firstTokenTimeoutMs: number;
  /** A model that only reasons this long after a request has nothing to say: the turn fails. */
  thinkingTimeoutMs: number;
  /** A stream that never ends is cut here; what was complete has been spoken. */
  totalTimeoutMs: number;
  /** The longest reply spoken, in characters; the stream is closed there. */
  maxChars: number;
  /** LLM requests while the model calls tools Hotline answers with results. */
  maxRounds: number;
  /** A reasoning model silent this long since the turn began gets `fillerText` spoken; 0 never. */
  fillerMs: number;
}

export interface TurnOptions {
  id: number;
  llm: Llm;
  /** The conversation before this turn; later rounds add what this turn said and its tool results. `tools`: speak, transfer, hangup. */
  request: LlmRequest;
  /** The business's own tools on offer now (asked each round: a server may have gone); each call of one is run through `runTools`. */
  businessTools?: () => readonly BusinessTool[];
  /**
   * Runs the round's business tool calls and fills in their results;
   * resolves at once when `signal` aborts. `say` speaks a hold line; `trace` is the turn's.
   */
  runTools?: (calls: readonly ToolCallRequest[], signal: AbortSignal, say: (line: string) => boolean, trace: TurnTrace) => Promise<void>;
  /** The turn's span, under which its LLM requests and tool runs are traced; none without. */
  trace?: TurnTrace;
  limits: TurnLimits;
  fillerText?: string;
  /** The hold line when the caller has heard `fillerText` already in this turn (prompts/thinking-again.md). */
  fillerAgainText?: string;
  /** SSML the model writes goes out as SSML; otherwise its tags are stripped. */
  ssml?: boolean;
  /**
   * Sends one speakable chunk: plain `text`, and `extra.ssml` when the chunk
   * carries SSML to keep. The call decides whether this turn may still speak.
   */
  speak: (turn: Turn, text: string, extra: SpeakExtra) => void;
  /** Called when the first token (answer or reasoning) of a request arrives. */
  onFirstToken?: (turn: Turn) => void;
  /** A failed request is about to be tried again, after `delayMs`. */
  onRetry?: (turn: Turn, error: unknown, delayMs: number) => void;
  /** A request's stream ended with the tokens the server counted for it (when it sends them); returns their price in USD, if known. */
  onUsage?: (turn: Turn, usage: TokenUsage) => number | undefined;
  /**
   * The business's documents for this turn, looked up before its first request: the note joins the
   * caller's newest words in each of the turn's requests (knowledge-note.ts). Never rejects.
   */
  knowledge?: () => Promise<string>;
}

/** What one LLM request is building. */
class RoundState {
  readonly chunker = new SentenceChunker();
  readonly think = new ThinkTagFilter();
  readonly tools: ToolCallAssembler;
  /** Where spoken text comes from right now: plain content or one `speak` call's argument. */
  source: 'content' | ToolCallStream | undefined;
  /** An answer token (text or a tool call) has arrived for this request. */
  answered = false;
  /** The server's count of the request's tokens, from a chunk without a choice (see reportUsage). */
  usage: TokenUsage | undefined;

  constructor(turnId: number, round: number) {
    this.tools = new ToolCallAssembler((index) => `call_${turnId}_${round}_${index}`);
  }
}

/**
 * One LLM turn: streams the reply, turns text (plain content and the `speak`
 * tool's argument alike) into sentence chunks the moment each is complete,
 * runs the business's tools the model calls (through `runTools`) and answers
 * tools Hotline does not have with an error, asking again with the results
 * (bounded), and collects the call-ending tool, if any.
 */
export class Turn {
  readonly id: number;
  readonly reply = new Reply();
  /** The turn's span (the no-op when untraced). */
  readonly trace: TurnTrace;
  /** When the turn began: the caller's words had just arrived. */
  readonly startedAt = performance.now();
  private readonly controller = new AbortController();
  private abortReason: AbortReason | undefined;
  private retried = false;
  /** The model has started to answer (text or a tool call) in this turn. */
  private answerStarted = false;
  private fillerSpoken = false;
  /** The last thinking hold line said, so the next one is another. */
  private lastFiller: string | undefined;
  /** Hold lines said in this turn, thinking and tool lines alike. */
  private holds = 0;
  /** The last request has ended and asks for nothing more: what is said now is the turn's last words. */
  private lastWords = false;
  /** Sentences of the model's own answer (the filler is not one). */
  private answerChunks = 0;
  private spokenChars = 0;
  private requestStartedAt = 0;
  private firstTokenTimer: NodeJS.Timeout | undefined;
  private thinkingTimer: NodeJS.Timeout | undefined;
  private fillerTimer: NodeJS.Timeout | undefined;
  /** The span of the request streaming now. */
  private llmTrace: LlmRequestTrace | undefined;

  constructor(private readonly options: TurnOptions) {
    this.id = options.id;
    this.trace = options.trace ?? NO_TURN_TRACE;
  }

  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  /** True while the turn says its last words: the call may hold them to send them as the end of its turn. */
  get closing(): boolean {
    return this.lastWords;
  }

  /**
   * The caller has waited long for the model (a webhook request about to time
   * out): the hold line is said now. False if there is none or it is too late.
   */
  hold(): boolean {
    const { fillerText, fillerAgainText } = this.options;
    // Never the same line twice in a row: a caller told "let me think" three times stops believing it.
    const line = this.lastFiller === fillerText && fillerAgainText ? fillerAgainText : fillerText;
    if (!line || !this.sayHold(line, 'thinking')) return false;
    this.fillerSpoken = true;
    this.lastFiller = line;
    return true;
  }

  /** How many hold lines (thinking or tool) the caller has been told in this turn. */
  get holdsSaid(): number {
    return this.holds;
  }

  /** Says a hold line now, whatever the pacing; false once the turn can no longer speak. */
  private sayHold(line: string, kind: 'thinking' | 'tool'): boolean {
    if (this.abortReason || this.lastWords) return false;
    // A segment of its own: the model's answer that follows starts the next one.
    this.reply.beginContent();
    this.options.speak(this, line, { filler: kind });
    this.holds++;
    return true;
  }

  /** Stops generation at once: the HTTP stream is closed and nothing more is spoken. */
  abort(reason: AbortReason): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller.abort(reason);
  }

  async run(): Promise<TurnOutcome> {
    const { limits, request } = this.options;
    const totalTimer = setTimeout(() => this.abort('total-timeout'), limits.totalTimeoutMs);
    try {
      let roundOpen = false;
      const note = await this.options.knowledge?.();
      if (this.abortReason) return this.abortedOutcome();
      const asked = note === undefined ? request.messages : withKnowledgeNote(request.messages, note);
      for (let round = 1; round <= limits.maxRounds; round++) {
        const messages = round === 1 ? asked : [...asked, ...this.reply.toMessages('generated')];
        if (round > 1 && !roundOpen) this.reply.beginRound();
        roundOpen = false;
        // The last request offers no business tool: the model has to answer with what it knows by then.
        const offered = round === limits.maxRounds || !this.options.runTools ? [] : (this.options.businessTools?.() ?? []);
        const tools = offered.length > 0 ? [...request.tools, ...offered.map((t) => t.definition)] : request.tools;
        const state = await this.streamWithRetry(messages, tools, round);
        if (this.abortReason) return this.abortedOutcome();
        const { finalAction, unknownTools, toolCalls } = this.finishRound(state, offered);
        // A reply cut at its length limit carries out nothing it asked for after the cut.
        if (this.abortReason) return this.abortedOutcome();
        if (toolCalls.length > 0) {
          // Hold lines said while the tools run, and the answer after them, follow the results.
          this.reply.beginRound();
          roundOpen = true;
          await this.options.runTools!(toolCalls, this.controller.signal, (line) => this.sayHold(line, 'tool'), this.trace);
          if (this.abortReason) return this.abortedOutcome();
        }
        if (finalAction) return { status: 'completed', finalAction };
        if (!unknownTools && toolCalls.length === 0) break;
      }
      if (this.answerChunks === 0) return { status: 'failed', error: new LlmEmptyReplyError() };
      return { status: 'completed' };
    } catch (error) {
      if (this.abortReason) return this.abortedOutcome();
      // A broken stream: complete sentences went out, the fragment is dropped.
      return { status: 'failed', error };
    } finally {
      clearTimeout(totalTimer);
      this.clearRequestTimers();
      clearTimeout(this.fillerTimer);
    }
  }

  /** One request, and once per turn a retry of it while nothing has been said yet. */
  private async streamWithRetry(messages: LlmRequest['messages'], tools: LlmRequest['tools'], round: number): Promise<RoundState> {
    for (;;) {
      try {
        return await this.stream(messages, tools, round);
      } catch (error) {
        if (this.abortReason) throw error;
        const delayMs = this.retryDelay(error);
        if (delayMs === undefined) throw error;
        this.retried = true;
        this.options.onRetry?.(this, error, delayMs);
        // An abort (barge-in, time limit) ends the wait at once.
        if (delayMs > 0) await sleep(delayMs, undefined, { signal: this.controller.signal });
      }
    }
  }

  /**
   * Worth one retry when the failure is the server's (429, 5xx, a broken
   * connection) and the caller has heard nothing yet; a Retry-After is
   * honoured when waiting it out still ends within the first-token time
   * limit, the longest silence Hotline allows before it apologises.
   */
  private retryDelay(error: unknown): number | undefined {
    if (this.retried || this.answerChunks > 0 || !isRetryable(error)) return undefined;
    const wait = retryAfterMs(error);
    const elapsed = performance.now() - this.startedAt;
    return elapsed + wait < this.options.limits.firstTokenTimeoutMs ? wait : undefined;
  }

  private async stream(messages: LlmRequest['messages'], tools: LlmRequest['tools'], round: number): Promise<RoundState> {
    const state = new RoundState(this.id, round);
    const { request, llm } = this.options;
    const trace = this.trace.llmRequest({ round, model: request.model ?? llm.model, maxTokens: request.maxTokens, temperature: request.temperature });
    this.llmTrace = trace;
    this.requestStartedAt = performance.now();
    this.firstTokenTimer = setTimeout(() => this.abort('timeout'), this.options.limits.firstTokenTimeoutMs);
    try {
      const stream = await llm.stream({ ...request, messages, tools }, this.controller.signal);
      let last: unknown;
      // Each token is taken as its bytes arrive: the sentence it completes leaves within the same event.
      await readChunks(stream, (chunk) => {
        if (this.abortReason) return false;
        last = chunk;
        this.consume(chunk, state);
        return true;
      });
      const { usage, costUsd } = this.reportUsage(state, last);
      trace.end({ last, usage, costUsd, aborted: this.abortReason });
    } catch (error) {
      trace.end({ error, aborted: this.abortReason });
      throw error;
    } finally {
      this.llmTrace = undefined;
      this.clearRequestTimers();
    }
    return state;
  }

  private clearRequestTimers(): void {
    clearTimeout(this.firstTokenTimer);
    clearTimeout(this.thinkingTimer);
    this.firstTokenTimer = undefined;
    this.thinkingTimer = undefined;
  }

  /**
   * A server's count comes at the end of the stream: in a chunk without a choice (caught in consume,
   * where token chunks never look for it) or beside the finish in the last chunk (read here, once).
   * The last count wins: some servers repeat it, growing, on every chunk.
   */
  private reportUsage(state: RoundState, last: unknown): { usage?: TokenUsage; costUsd?: number | undefined } {
    const usage = readUsage(last) ?? state.usage;
    if (!usage) return {};
    return { usage, costUsd: this.options.onUsage?.(this, usage) };
  }

  private consume(chunk: unknown, state: RoundState): void {
    const delta = readDelta(chunk, !state.answered);
    if (!delta) {
      state.usage = readUsage(chunk) ?? state.usage;
      return;
    }
    let { text, reasoning } = delta;
    if (text !== '') {
      text = state.think.push(text);
      reasoning ||= state.think.thinking;
    }
    if (!state.answered) this.onEarlyToken(state, text !== '' || delta.toolCalls.length > 0, reasoning);
    if (text !== '') {
      if (state.source !== 'content') {
        this.endSource(state);
        state.source = 'content';
        this.reply.beginContent();
      }
      this.say(state.chunker.push(text));
    }
    for (const piece of delta.toolCalls) this.consumeToolCall(piece, state);
  }

  /** Until a request's first answer token: the time limits, and the filler for a model that thinks. */
  private onEarlyToken(state: RoundState, answered: boolean, reasoning: boolean): void {
    if (!answered && !reasoning) return;
    if (this.firstTokenTimer) {
      // The timeout guards the wait for the first sign of life only; a long answer may take its time.
      clearTimeout(this.firstTokenTimer);
      this.firstTokenTimer = undefined;
      this.llmTrace?.firstToken();
      this.options.onFirstToken?.(this);
    }
    if (answered) {
      state.answered = true;
      this.answerStarted = true;
      clearTimeout(this.thinkingTimer);
      clearTimeout(this.fillerTimer);
      this.thinkingTimer = undefined;
      return;
    }
    // Reasoning is not "no response", but a model that only thinks must not hold the caller forever.
    if (!this.thinkingTimer) {
      const left = this.options.limits.thinkingTimeoutMs - (performance.now() - this.requestStartedAt);
      this.thinkingTimer = setTimeout(() => this.abort('thinking-timeout'), Math.max(0, left));
    }
    this.scheduleFiller();
  }

  private scheduleFiller(): void {
    const { fillerText } = this.options;
    const { fillerMs } = this.options.limits;
    if (fillerMs <= 0 || !fillerText || this.fillerTimer || this.fillerSpoken || this.answerStarted) return;
    const wait = Math.max(0, fillerMs - (performance.now() - this.startedAt));
    this.fillerTimer = setTimeout(() => {
      if (this.abortReason || this.answerStarted || this.fillerSpoken) return;
      this.hold();
    }, wait);
  }

  private consumeToolCall(piece: ToolCallPiece, state: RoundState): void {
    const call = state.tools.accept(piece);
    if (!call || call.name !== SPEAK || !piece.arguments || call.overflow) return;
    if (!call.text) {
      // Speech from a new speak call follows whatever was said before it.
      this.endSource(state);
      state.source = call;
      call.text = new JsonStringFieldStream('text');
      this.reply.beginSpeak(call.id);
    }
    if (state.source !== call) return;
    const text = call.text.push(piece.arguments);
    if (text) {
      call.spoken += text;
      this.say(state.chunker.push(text));
    }
    // The closing quote ends the text: no need to wait for the stream to end.
    if (call.text.done) this.endSource(state);
  }

  /** Flushes the pending text of the current source (content or a speak call). */
  private endSource(state: RoundState): void {
    if (state.source === undefined) return;
    if (state.source === 'content') {
      const rest = state.think.flush();
      if (rest !== '') state.chunker.push(rest);
    }
    state.source = undefined;
    this.say(state.chunker.flush());
  }

  private say(chunks: string[]): void {
    for (const chunk of chunks) {
      if (this.abortReason) return;
      const text = toSpeech(chunk);
      if (text === '') continue;
      const extra: SpeakExtra = this.options.ssml && hasSsml(chunk) ? { ssml: toSpeech(chunk, true) } : {};
      if (this.spokenChars + text.length > this.options.limits.maxChars) {
        this.stopAtCap(text);
        return;
      }
      this.spokenChars += text.length;
      this.answerChunks += 1;
      this.options.speak(this, text, extra);
    }
  }

  /**
   * The reply reached its length limit: what was said stays, the LLM stream
   * is closed. A first sentence longer than the whole limit is cut at a word,
   * so the caller still hears something.
   */
  private stopAtCap(text: string): void {
    if (this.answerChunks === 0) {
      const cut = text.slice(0, this.options.limits.maxChars + 1);
      const words = cut.lastIndexOf(' ') > 0 ? cut.slice(0, cut.lastIndexOf(' ')) : cut.slice(0, -1);
      if (words !== '') {
        this.answerChunks += 1;
        this.spokenChars += words.length;
        this.options.speak(this, words, {});
      }
    }
    this.abort('capped');
  }

  private abortedOutcome(): TurnOutcome {
    const { limits } = this.options;
    switch (this.abortReason) {
      case 'timeout':
        return { status: 'failed', error: new LlmTimeoutError(limits.firstTokenTimeoutMs) };
      case 'thinking-timeout':
        return { status: 'failed', error: new LlmThinkingTimeoutError(limits.thinkingTimeoutMs) };
      case 'total-timeout':
        return { status: 'failed', error: new LlmTotalTimeoutError(limits.totalTimeoutMs) };
      case 'capped':
        return { status: 'completed', capped: true };
      default:
        return { status: 'aborted' };
    }
  }

  /** The end of one request: speech not streamed yet, the call-ending tool, business tools to run, and errors for unknown tools. */
  private finishRound(state: RoundState, business: readonly BusinessTool[]): RoundCalls {
    this.lastWords = endsTurn(state.tools.all());
    this.endSource(state);
    return sortRoundCalls(state.tools.all(), this.options.request.tools, business, {
      recoverSpeech: (call) => this.recoverSpeech(call, state),
      record: (record) => this.reply.addToolCall(record),
    });
  }

  /**
   * A speak call whose text could not be streamed (name split across deltas,
   * arguments the incremental parser gave up on): speak what is left of it now.
   */
  private recoverSpeech(call: ToolCallStream, state: RoundState): void {
    const text = parseSpeakText(call.args);
    if (text === undefined || !text.startsWith(call.spoken) || text.length === call.spoken.length) return;
    if (!call.text) this.reply.beginSpeak(call.id);
    state.source = call;
    this.say(state.chunker.push(text.slice(call.spoken.length)));
    call.spoken = text;
    this.endSource(state);
  }
}
