import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Llm } from '../llm/llm.js';
import { builtinVariables } from '../prompts/builtins.js';
import type { PromptName, PromptSet } from '../prompts/prompt-store.js';
import type { PendingCall } from '../outbound/pending-calls.js';
import type { Action } from '../protocol/actions.js';
import type {
  AssistantSpeakEvent,
  SessionEndEvent,
  SessionStartEvent,
  UserSpeakEvent,
  VoiceEvent,
} from '../protocol/events.js';
import type { TranscriptWriter } from '../transcripts/transcript-store.js';
import { DuplicateFilter } from './duplicate-filter.js';
import { Playback } from './playback.js';
import { Reply, type SpokenChunk, type ToolCallRecord } from './reply.js';
import { parseTransferTarget } from './tools.js';
import { Turn, type FinalAction, type TurnOutcome } from './turn.js';

/** Limits and timings every call shares, from the configuration. */
export interface CallSettings {
  llmTimeoutMs: number;
  llmTotalTimeoutMs: number;
  /** Consecutive failed turns after which the call goes to TRANSFER_TARGET, or ends politely. */
  llmMaxFailures: number;
  playbackGraceMs: number;
  /** Budget of the history sent to the LLM, in characters; the oldest turns go first. */
  historyMaxChars: number;
  timeZone: string | undefined;
}

/** Where a call's actions go: a WebSocket, or webhook answers. */
export interface ActionSink {
  send(action: Action): void;
  /** The turn is over: nothing more will be sent until the next event (or a deferred hangup/transfer). */
  idle?(): void;
}

/**
 * How sentences reach the voice service. `stream`: each the moment it is
 * complete (WebSocket). `whole`: one speak with the whole reply. `sentences`:
 * the first at once, the rest together each time the previous speech ended
 * (webhook answers carry one action each).
 */
export type SpeechPacing = 'stream' | 'whole' | 'sentences';

export interface CallDeps {
  llm: Llm;
  /** The prompts as they were when the call began: an edit applies from the next call. */
  prompts: PromptSet;
  tools: ChatCompletionTool[];
  transfer: { defaultTarget: string | undefined; targets: Record<string, string> };
  /** The outbound call Hotline requested to this number, if any. */
  takeOutboundRequest: (toPhoneNumber: string | undefined) => PendingCall | undefined;
  settings: CallSettings;
  pacing: SpeechPacing;
  logger: Logger;
  transcript: TranscriptWriter;
  metrics: Metrics;
}

/** How the call ends once the speech before it has played. */
type Ending = { type: 'hangup' } | { type: 'transfer'; target: string };

/** How long voice activity holds speech back when no recognised words follow it. */
const HOLD_FOR_CALLER_MS = 1500;

type HistoryEntry = { role: 'user'; text: string } | { role: 'assistant'; reply: Reply };

/**
 * One phone call: its conversation, what the caller heard, and the turn in
 * flight. Transport-agnostic: events come in through `handle`, actions leave
 * through the sink.
 */
export class Call {
  readonly id: string;
  private readonly log: Logger;
  private readonly history: HistoryEntry[] = [];
  private readonly playback = new Playback();
  private readonly duplicates = new DuplicateFilter();
  private turn: Turn | undefined;
  private turnCount = 0;
  /** Sentences generated but not yet delivered, under `whole` and `sentences` pacing. */
  private held: SpokenChunk[] = [];
  /** The last reply not yet written to the transcript: it may still be cut by a barge-in. */
  private unsettled: Reply | undefined;
  private pendingFinal: { ending: Ending; record: ToolCallRecord | undefined; timer: NodeJS.Timeout } | undefined;
  /** LLM turns that failed in a row; too many and the call goes to a person, or ends politely. */
  private failures = 0;
  private started = false;
  /** Template variables of this call: built-ins and, for a requested outbound call, its variables. */
  private variables: Record<string, string | undefined> = {};
  private systemPrompt = '';
  private hungUp = false;
  private ended = false;
  /** Set by user_speech_started: the caller is talking, so nothing new is said until their words arrive. */
  private callerSpeaking: NodeJS.Timeout | undefined;

  constructor(
    id: string,
    private sink: ActionSink,
    private readonly deps: CallDeps,
  ) {
    this.id = id;
    this.log = deps.logger;
  }

  /** True while an LLM turn is generating. */
  get generating(): boolean {
    return this.turn !== undefined;
  }

  /** The latest connection to carry this call's events receives its actions. */
  attach(sink: ActionSink): void {
    this.sink = sink;
  }

  /** Handles every event but session_end, which ends the call through end(). */
  handle(event: Exclude<VoiceEvent, SessionEndEvent>): void {
    if (this.ended) return;
    switch (event.type) {
      case 'session_start':
        return this.onSessionStart(event);
      case 'user_speak':
        return this.onUserSpeak(event);
      case 'assistant_speak':
        return this.onAssistantSpeak(event);
      case 'assistant_speech_ended':
        return this.onSpeechEnded();
      case 'user_speech_started':
        return this.onUserSpeechStarted();
    }
  }

  /** Ends the call: generation stops, nothing more is sent, the transcript is closed. */
  end(reason: string, origin: 'service' | 'hotline'): Promise<void> {
    if (this.ended) return Promise.resolve();
    if (this.turn) {
      this.turn.abort('ended');
      this.turn.reply.interrupted = true;
    }
    this.held = [];
    this.settleTurn();
    this.cancelFinal('the call ended first');
    this.stopHolding();
    this.settleReply();
    this.ended = true;
    this.deps.transcript.append({ role: 'event', text: 'session_end', reason, origin });
    this.log.info({ reason, turns: this.turnCount }, 'call ended');
    return this.deps.transcript.close();
  }

  /**
   * The conversation as the next LLM request will see it. Beyond the history
   * budget the oldest turns are left out; the system prompt, the greeting and
   * the newest turn always stay. Whole entries go, so every tool call keeps
   * its result. The transcript on disk is not affected.
   */
  messages(): ChatCompletionMessageParam[] {
    const groups = this.history.map((entry): ChatCompletionMessageParam[] =>
      entry.role === 'user' ? [{ role: 'user', content: entry.text }] : entry.reply.toMessages(),
    );
    const sizeOf = (group: ChatCompletionMessageParam[]) => JSON.stringify(group).length;
    const [greeting = [], ...rest] = groups;
    let budget = this.deps.settings.historyMaxChars - this.systemPrompt.length - sizeOf(greeting);
    let keepFrom = rest.length;
    while (keepFrom > 0) {
      const size = sizeOf(rest[keepFrom - 1]!);
      if (size > budget && keepFrom < rest.length) break;
      budget -= size;
      keepFrom -= 1;
    }
    if (keepFrom > 0) this.log.debug({ dropped: keepFrom }, 'oldest turns left out of the LLM request');
    return [{ role: 'system', content: this.systemPrompt }, ...greeting, ...rest.slice(keepFrom).flat()];
  }

  private onSessionStart(event: SessionStartEvent): void {
    if (this.duplicates.isDuplicate(event)) return this.log.debug('duplicate session_start ignored');
    const { session } = event;
    if (this.started) {
      // The same session starting again is the call coming back from a transfer nobody answered.
      this.log.info('session_start again: call is back from an unanswered transfer');
      this.deps.transcript.append({ role: 'event', text: 'session_restart' });
      this.hungUp = false;
      this.interrupt(false);
      this.speakLine(this.render('transferFailed'));
      return;
    }
    this.started = true;
    const outbound = session.direction === 'outbound';
    const request = outbound ? this.deps.takeOutboundRequest(session.to_phone_number) : undefined;
    this.variables = {
      ...builtinVariables(
        { from: session.from_phone_number, to: session.to_phone_number, direction: session.direction },
        new Date(),
        this.deps.settings.timeZone,
      ),
      ...request?.variables,
    };
    this.systemPrompt = this.render('system');
    this.log.info(
      { direction: session.direction, from: session.from_phone_number, to: session.to_phone_number, requested: !!request },
      'call started',
    );
    this.deps.transcript.append({
      role: 'event',
      text: 'session_start',
      direction: session.direction,
      from: session.from_phone_number,
      to: session.to_phone_number,
      ...(request ? { variables: request.variables } : {}),
    });
    this.speakLine(this.render(this.greetingFor(outbound, request)));
  }

  /** A requested outbound call gets its tailored greeting, unless that would leave a hole in it. */
  private greetingFor(outbound: boolean, request: PendingCall | undefined): PromptName {
    if (!outbound) return 'greeting';
    if (request && !this.deps.prompts.wouldLeaveEmpty('outboundGreeting', this.variables)) return 'outboundGreeting';
    return 'outboundGenericGreeting';
  }

  private render(name: PromptName): string {
    return this.deps.prompts.render(name, this.variables, (placeholder) =>
      this.log.warn({ prompt: name, placeholder }, 'prompt placeholder has no value; rendered empty'),
    );
  }

  private onUserSpeak(event: UserSpeakEvent): void {
    if (this.duplicates.isDuplicate(event)) return this.log.debug('duplicate user_speak ignored');
    const text = event.text.trim();
    if (this.hungUp) return this.log.info('caller spoke after hangup was sent; ignored');
    // Recognition noise must not cancel a reply and leave the caller in silence.
    if (text === '') return this.log.debug('empty user_speak ignored');
    this.stopHolding();
    if (event.barged_in) this.deps.metrics.bargedIn();
    this.interrupt(event.barged_in);
    this.log.debug({ text, bargedIn: event.barged_in }, 'caller said');
    this.settleReply();
    this.history.push({ role: 'user', text });
    this.deps.transcript.append({ role: 'user', text, ...(event.barged_in ? { barged_in: true } : {}) });
    this.startTurn(false);
  }

  /**
   * Voice activity comes before the recognised words: hold back sentences not
   * yet sent (and a hangup or transfer) until user_speak arrives. If it never
   * does (a cough, a noise), go on after HOLD_FOR_CALLER_MS.
   */
  private onUserSpeechStarted(): void {
    clearTimeout(this.callerSpeaking);
    this.callerSpeaking = setTimeout(() => {
      this.callerSpeaking = undefined;
      this.log.debug('no words followed the voice activity; going on');
      this.deliverHeld();
      const pending = this.pendingFinal;
      if (!pending) return;
      if (!this.playback.pending) return this.firePendingFinal();
      clearTimeout(pending.timer);
      pending.timer = this.playbackTimer();
    }, HOLD_FOR_CALLER_MS);
  }

  private stopHolding(): void {
    clearTimeout(this.callerSpeaking);
    this.callerSpeaking = undefined;
  }

  private onAssistantSpeak(event: AssistantSpeakEvent): void {
    this.playback.started(event.text, event.duration_ms);
  }

  private onSpeechEnded(): void {
    const drained = this.playback.ended();
    if (this.held.length > 0) this.deliverHeld();
    else if (drained) this.firePendingFinal();
  }

  /**
   * The caller spoke: stop generating, cancel a pending hangup or transfer,
   * and cut what was playing down to what the caller heard.
   */
  private interrupt(bargedIn: boolean): void {
    if (this.turn) {
      this.turn.abort('superseded');
      this.turn.reply.interrupted = true;
      this.settleTurn();
    }
    // Sentences never delivered were never heard: the reply keeps them as undelivered.
    this.held = [];
    this.cancelFinal('the caller spoke before it happened');
    for (const reply of this.playback.interrupt(bargedIn)) reply.interrupted = true;
  }

  private startTurn(retry: boolean): void {
    const id = ++this.turnCount;
    const { settings } = this.deps.prompts;
    const turn = new Turn({
      id,
      llm: this.deps.llm,
      request: {
        messages: this.messages(),
        tools: this.deps.tools,
        model: settings.model,
        temperature: settings.temperature,
      },
      firstTokenTimeoutMs: this.deps.settings.llmTimeoutMs,
      totalTimeoutMs: this.deps.settings.llmTotalTimeoutMs,
      retry,
      speak: (t, text) => this.speakFromTurn(t, text),
      onFirstToken: (t) => this.deps.metrics.llmFirstTokenArrived(performance.now() - t.startedAt),
    });
    this.deps.metrics.turnStarted();
    this.turn = turn;
    turn
      .run()
      // run() reports failures as outcomes; the catches are only safety nets.
      .catch((error: unknown): TurnOutcome => ({ status: 'failed', error }))
      .then((outcome) => this.onTurnDone(turn, outcome))
      .catch((error: unknown) => this.log.error({ err: error, turn: id }, 'turn completion failed'));
  }

  /** The single gate every streamed chunk passes: a superseded turn can never speak. */
  private speakFromTurn(turn: Turn, text: string): void {
    if (this.ended || this.hungUp || turn !== this.turn || turn.aborted) return;
    this.held.push(turn.reply.addChunk(text));
    if (turn.reply.chunkCount === 1) this.deps.metrics.firstSpeakSent(performance.now() - turn.startedAt);
    const { pacing } = this.deps;
    if (pacing === 'stream' || (pacing === 'sentences' && !this.playback.pending)) this.deliverHeld();
  }

  /** Sends every held sentence as one speak action. */
  private deliverHeld(): void {
    if (this.held.length === 0 || this.callerSpeaking) return;
    const chunks = this.held;
    this.held = [];
    const text = chunks.length === 1 ? chunks[0]!.text : chunks.map((c) => c.text).join(' ');
    for (const chunk of chunks) chunk.delivered = true;
    this.send({ type: 'speak', session_id: this.id, text });
    this.playback.delivered(chunks, text);
  }

  private onTurnDone(turn: Turn, outcome: TurnOutcome): void {
    if (turn !== this.turn) return; // superseded: already settled by interrupt()
    this.settleTurn();
    if (this.ended) return;
    if (outcome.status === 'failed') {
      if (isRetryable(outcome.error) && turn.reply.chunkCount === 0 && !turn.isRetry) {
        // Nothing was said yet, so one quick retry costs the caller less than an apology.
        this.log.warn({ err: outcome.error, turn: turn.id }, 'LLM turn failed; retrying once');
        this.deps.metrics.llmFailed(outcome.error);
        this.startTurn(true);
        return;
      }
      this.onTurnFailed(turn, outcome.error);
    } else {
      this.failures = 0;
      if (this.deps.pacing === 'whole') this.deliverHeld();
      if (outcome.status === 'completed' && outcome.finalAction) this.scheduleFinal(outcome.finalAction);
    }
    this.sink.idle?.();
  }

  /** The caller always hears something: an apology, or after repeated failures a person or a polite goodbye. */
  private onTurnFailed(turn: Turn, error: unknown): void {
    this.failures += 1;
    this.deps.metrics.llmFailed(error);
    this.log.error({ err: error, turn: turn.id, failures: this.failures }, 'LLM turn failed');
    if (this.failures < this.deps.settings.llmMaxFailures) {
      // Delivered together with any sentences still held, so the apology follows what was said.
      this.speakLine(this.render('error'));
      return;
    }
    const target = this.deps.transfer.defaultTarget;
    // A human beats a broken bot.
    this.speakLine(this.render(target ? 'giveUpTransfer' : 'giveUp'));
    this.endAfterSpeech(target ? { type: 'transfer', target } : { type: 'hangup' });
  }

  /** Moves the turn's reply into history (as far as it was sent) and forgets the turn. */
  private settleTurn(): void {
    const turn = this.turn;
    if (!turn) return;
    this.turn = undefined;
    this.settleReply();
    this.history.push({ role: 'assistant', reply: turn.reply });
    this.unsettled = turn.reply;
  }

  /** Writes the last reply to the transcript once it can no longer change. */
  private settleReply(): void {
    const reply = this.unsettled;
    if (!reply) return;
    this.unsettled = undefined;
    const text = reply.heardText();
    if (reply.deliveredCount > 0) {
      this.deps.transcript.append({ role: 'assistant', text, ...(reply.interrupted ? { interrupted: true } : {}) });
    }
    for (const call of reply.toolCalls) {
      this.deps.transcript.append({ role: 'tool', text: call.result, name: call.name, arguments: call.arguments });
    }
  }

  /** Speaks a fixed line (greeting, apology) as a reply of its own. */
  private speakLine(text: string): void {
    this.settleReply();
    const reply = new Reply();
    reply.beginContent();
    this.held.push(reply.addChunk(text));
    this.history.push({ role: 'assistant', reply });
    this.unsettled = reply;
    this.deliverHeld();
  }

  /** The model's transfer or hangup. */
  private scheduleFinal(action: FinalAction): void {
    const { record } = action;
    if (action.name === 'hangup') {
      record.result = 'the call is ending';
      return this.endAfterSpeech({ type: 'hangup' }, record);
    }
    const target = this.resolveTransferTarget(record.arguments);
    if (!target) {
      record.result = 'not done: no transfer destination is configured';
      this.log.warn('model asked for a transfer, but TRANSFER_TARGET is not set');
      this.speakLine(this.render('transferFailed'));
      return;
    }
    record.result = `transferring the call to ${target}`;
    this.endAfterSpeech({ type: 'transfer', target }, record);
  }

  /** Transfer and hangup wait until the speech before them has played: a goodbye is never cut. */
  private endAfterSpeech(ending: Ending, record?: ToolCallRecord): void {
    if (!this.playback.pending && this.held.length === 0 && !this.callerSpeaking) return this.sendFinal(ending);
    this.pendingFinal = { ending, record, timer: this.playbackTimer() };
  }

  /** assistant_speech_ended may never come: an estimate of the playback time stands in for it. */
  private playbackTimer(): NodeJS.Timeout {
    return setTimeout(() => {
      const pending = this.pendingFinal;
      if (!pending) return;
      this.log.info('no assistant_speech_ended in time; going on without it');
      // Speech first, always: held sentences go out before the call ends.
      if (this.held.length > 0) {
        this.deliverHeld();
        pending.timer = this.playbackTimer();
        return;
      }
      this.firePendingFinal();
    }, this.playback.remainingMs() + this.deps.settings.playbackGraceMs);
  }

  private firePendingFinal(): void {
    const pending = this.pendingFinal;
    if (!pending || this.callerSpeaking) return;
    clearTimeout(pending.timer);
    this.pendingFinal = undefined;
    this.sendFinal(pending.ending);
  }

  private sendFinal(ending: Ending): void {
    if (this.ended) return;
    if (ending.type === 'hangup') {
      this.hungUp = true;
      this.send({ type: 'hangup', session_id: this.id });
    } else {
      this.send({ type: 'transfer', session_id: this.id, target: ending.target });
    }
    this.log.info({ action: ending.type }, 'call-ending action sent');
    this.settleReply();
  }

  private cancelFinal(why: string): void {
    const pending = this.pendingFinal;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pendingFinal = undefined;
    if (pending.record) pending.record.result = `not done: ${why}`;
    this.log.info({ action: pending.ending.type, why }, 'call-ending action cancelled');
  }

  private resolveTransferTarget(argumentsJson: string): string | undefined {
    const named = parseTransferTarget(argumentsJson);
    const { targets, defaultTarget } = this.deps.transfer;
    if (named && Object.hasOwn(targets, named)) return targets[named];
    return defaultTarget;
  }

  private send(action: Action): void {
    if (this.ended) return;
    this.sink.send(action);
  }
}

/** Rate limits, server errors and broken connections are worth one retry; a bad request is not. */
function isRetryable(error: unknown): boolean {
  if (error instanceof APIConnectionError) return !(error instanceof APIUserAbortError);
  return error instanceof APIError && (error.status === 429 || (error.status ?? 0) >= 500);
}
