import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Llm } from '../llm/llm.js';
import type { PromptSet } from '../prompts/prompt-store.js';
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
import { CallPrompts } from './call-prompts.js';
import { History } from './history.js';
import { Playback } from './playback.js';
import { RedeliveryFilter } from './redelivery.js';
import { Reply, type SpokenChunk, type ToolCallRecord } from './reply.js';
import { ReplyLog } from './reply-log.js';
import { PendingEnding, type Ending } from './pending-ending.js';
import { resolveTransferTarget } from './tools.js';
import { Turn, type FinalAction, type TurnOutcome } from './turn.js';

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

/** Why Hotline itself ends a call: the caller said nothing for too long, or Hotline is shutting down. */
export type LeaveReason = 'idle' | 'shutdown';

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

/** How long voice activity holds speech back when no recognised words follow it. */
const HOLD_FOR_CALLER_MS = 1500;

/**
 * One phone call: its conversation, what the caller heard, and the turn in
 * flight. Transport-agnostic: events come in through `handle`, actions leave
 * through the sink.
 */
export class Call {
  readonly id: string;
  private readonly log: Logger;
  private readonly history: History;
  private readonly playback = new Playback();
  private readonly redelivery = new RedeliveryFilter();
  private readonly replies: ReplyLog;
  private turn: Turn | undefined;
  private turnCount = 0;
  /** Sentences generated but not yet delivered, under `whole` and `sentences` pacing. */
  private held: SpokenChunk[] = [];
  private readonly ending: PendingEnding;
  /** LLM turns that failed in a row; too many and the call goes to a person, or ends politely. */
  private failures = 0;
  private started = false;
  private readonly prompts: CallPrompts;
  private systemPrompt = '';
  private fillerText: string | undefined;
  private hungUp = false;
  /** A transfer went out: a session_start for this session now means the call came back. */
  private transferSent = false;
  private ended = false;
  /** Set while Hotline ends the call itself; resolves when the call-ending action has gone out. */
  private leaving: { done: Promise<void>; resolve: () => void } | undefined;
  /** Set by user_speech_started: the caller is talking, so nothing new is said until their words arrive. */
  private callerSpeaking: NodeJS.Timeout | undefined;

  constructor(
    id: string,
    private currentSink: ActionSink,
    private readonly deps: CallDeps,
  ) {
    this.id = id;
    this.log = deps.logger;
    this.history = new History(deps.settings.historyMaxChars, deps.logger);
    this.replies = new ReplyLog(deps.transcript);
    this.prompts = new CallPrompts(deps.prompts, deps.settings.timeZone, deps.logger);
    this.ending = new PendingEnding(
      () => this.playback.remainingMs() + deps.settings.playbackGraceMs,
      () => this.onEndingOverdue(),
      deps.logger,
    );
  }

  /** True while an LLM turn is generating. */
  get generating(): boolean {
    return this.turn !== undefined;
  }

  /** The connection the call's actions go to. */
  get sink(): ActionSink {
    return this.currentSink;
  }

  /** Another connection takes the call over (its owner is gone: a reconnect). */
  attach(sink: ActionSink): void {
    this.currentSink = sink;
  }

  /** Handles every event but session_end, which ends the call through end(). */
  handle(event: Exclude<VoiceEvent, SessionEndEvent>): void {
    if (this.ended) return;
    if (this.redelivery.isRedelivery(event)) {
      this.log.debug({ type: event.type }, 'redelivered event ignored');
      return;
    }
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
    this.ending.cancel('the call ended first');
    this.stopHolding();
    this.replies.settle();
    this.ended = true;
    this.leaving?.resolve();
    this.deps.transcript.append({ role: 'event', text: 'session_end', reason, origin });
    this.log.info({ reason, turns: this.turnCount }, 'call ended');
    return this.deps.transcript.close();
  }

  /**
   * Hotline ends the call the way a person would: generation stops, the
   * caller hears a short line (a prompt file), then the call is hung up — or,
   * on shutdown with TRANSFER_TARGET set, transferred — once the line has
   * played. Resolves when that action has gone out, or the call ended first.
   */
  leave(reason: LeaveReason): Promise<void> {
    // A hangup already went out: there is nothing left to say.
    if (this.ended || this.hungUp) return Promise.resolve();
    if (this.leaving) return this.leaving.done;
    let resolve = (): void => undefined;
    const done = new Promise<void>((r) => (resolve = r));
    this.leaving = { done, resolve };
    this.log.info({ reason }, 'Hotline is ending the call');
    if (this.turn) {
      this.turn.abort('ended');
      this.settleTurn();
    }
    this.held = [];
    this.ending.cancel('Hotline is ending the call');
    const target = this.deps.transfer.defaultTarget;
    if (reason === 'shutdown' && target) {
      this.speakLine(this.prompts.render('shutdownTransfer'));
      this.endAfterSpeech({ type: 'transfer', target });
    } else {
      this.speakLine(this.prompts.render(reason === 'idle' ? 'idleGoodbye' : 'shutdownGoodbye'));
      this.endAfterSpeech({ type: 'hangup' });
    }
    return done;
  }

  /**
   * The connection dropped; the service may reconnect. Nothing said now would
   * reach the caller, so generation stops and the reply counts only what was
   * delivered before.
   */
  suspend(): void {
    if (this.ended) return;
    this.interrupt(false);
    this.replies.settle();
  }

  /** The conversation as the next LLM request will see it. */
  private messages(): ChatCompletionMessageParam[] {
    return this.history.messages(this.systemPrompt);
  }

  private onSessionStart(event: SessionStartEvent): void {
    const { session } = event;
    if (this.started) {
      // The same session starting again is the call coming back from a transfer nobody answered —
      // if a transfer went out. Otherwise it is the start again, redelivered.
      if (!this.transferSent) return this.log.info('session_start again without a transfer; ignored');
      this.log.info('session_start again: call is back from an unanswered transfer');
      this.deps.transcript.append({ role: 'event', text: 'session_restart' });
      this.transferSent = false;
      this.hungUp = false;
      this.interrupt(false);
      this.speakLine(this.prompts.render('transferFailed'));
      return;
    }
    this.started = true;
    const outbound = session.direction === 'outbound';
    const request = outbound ? this.deps.takeOutboundRequest(session.to_phone_number) : undefined;
    this.prompts.begin(session, request);
    this.systemPrompt = this.prompts.render('system');
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
    this.speakLine(this.prompts.greeting(outbound, request));
  }

  private onUserSpeak(event: UserSpeakEvent): void {
    const text = event.text.trim();
    if (this.hungUp || this.leaving) return this.log.info('caller spoke while the call was ending; ignored');
    // Recognition noise must not cancel a reply and leave the caller in silence.
    if (text === '') return this.log.debug('empty user_speak ignored');
    this.stopHolding();
    if (event.barged_in) this.deps.metrics.bargedIn();
    this.interrupt(event.barged_in);
    this.log.debug({ text, bargedIn: event.barged_in }, 'caller said');
    this.replies.settle();
    this.history.addUser(text);
    this.deps.transcript.append({ role: 'user', text, ...(event.barged_in ? { barged_in: true } : {}) });
    this.startTurn();
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
      if (!this.ending.waiting) return;
      if (!this.playback.pending) return this.firePendingFinal();
      this.ending.rewait();
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
    this.settleIfPlayed();
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
    this.ending.cancel('the caller spoke before it happened');
    for (const reply of this.playback.interrupt(bargedIn)) reply.interrupted = true;
  }

  private startTurn(): void {
    const id = ++this.turnCount;
    const { settings } = this.deps;
    const prompt = this.prompts.settings;
    const filler = this.deps.pacing === 'stream' && settings.thinkingFillerMs > 0;
    if (filler) this.fillerText ??= this.prompts.render('thinking');
    const turn = new Turn({
      id,
      llm: this.deps.llm,
      request: {
        messages: this.messages(),
        tools: this.deps.tools,
        model: prompt.model,
        temperature: prompt.temperature,
        maxTokens: settings.llmMaxTokens,
      },
      limits: {
        firstTokenTimeoutMs: settings.llmTimeoutMs,
        thinkingTimeoutMs: settings.llmThinkingTimeoutMs,
        totalTimeoutMs: settings.llmTotalTimeoutMs,
        maxChars: settings.replyMaxChars,
        maxRounds: settings.llmMaxToolRounds,
        fillerMs: filler ? settings.thinkingFillerMs : 0,
      },
      ...(filler && this.fillerText ? { fillerText: this.fillerText } : {}),
      speak: (t, text) => this.speakFromTurn(t, text),
      onFirstToken: (t) => this.deps.metrics.llmFirstTokenArrived(performance.now() - t.startedAt),
      onRetry: (t, error, delayMs) => {
        // Nothing was said yet, so a retry costs the caller less than an apology.
        this.log.warn({ err: error, turn: t.id, delayMs }, 'LLM request failed; retrying once');
        this.deps.metrics.llmFailed(error);
      },
    });
    this.deps.metrics.turnStarted();
    this.turn = turn;
    this.history.addReply(turn.reply);
    this.replies.track(turn.reply);
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
      this.onTurnFailed(turn, outcome.error);
    } else {
      this.failures = 0;
      if (outcome.status === 'completed' && outcome.capped) {
        this.log.warn({ turn: turn.id, maxChars: this.deps.settings.replyMaxChars }, 'reply cut at REPLY_MAX_CHARS');
      }
      if (this.deps.pacing === 'whole') this.deliverHeld();
      if (outcome.status === 'completed' && outcome.finalAction) this.scheduleFinal(outcome.finalAction);
    }
    this.awaitPlayed();
    this.sink.idle?.();
  }

  /** The caller always hears something: an apology, or after repeated failures a person or a polite goodbye. */
  private onTurnFailed(turn: Turn, error: unknown): void {
    this.failures += 1;
    this.deps.metrics.llmFailed(error);
    this.log.error({ err: error, turn: turn.id, failures: this.failures }, 'LLM turn failed');
    if (this.failures < this.deps.settings.llmMaxFailures) {
      // Delivered together with any sentences still held, so the apology follows what was said.
      this.speakLine(this.prompts.render('error'));
      return;
    }
    const target = this.deps.transfer.defaultTarget;
    // A human beats a broken bot.
    this.speakLine(this.prompts.render(target ? 'giveUpTransfer' : 'giveUp'));
    this.endAfterSpeech(target ? { type: 'transfer', target } : { type: 'hangup' });
  }

  /** Forgets the finished turn; its reply stays in history and is written once it has played. */
  private settleTurn(): void {
    if (!this.turn) return;
    this.turn = undefined;
    this.settleIfPlayed();
  }

  /** The reply in the transcript as soon as nothing of it can change any more. */
  private settleIfPlayed(): void {
    if (this.turn || this.held.length > 0 || this.playback.pending) return;
    this.replies.settle();
  }

  /**
   * The turn is over but its speech may still be playing: settle its reply on
   * assistant_speech_ended, or — the service may never report it — once the
   * playback estimate has run out.
   */
  private awaitPlayed(): void {
    if (this.replies.tracking) this.replies.settleAfter(this.playback.remainingMs() + this.deps.settings.playbackGraceMs);
  }

  /** Speaks a fixed line (greeting, apology) as a reply of its own. */
  private speakLine(text: string): void {
    const reply = new Reply();
    reply.beginContent();
    this.held.push(reply.addChunk(text));
    this.history.addReply(reply);
    this.replies.track(reply);
    this.deliverHeld();
    this.awaitPlayed();
  }

  /** The model's transfer or hangup. */
  private scheduleFinal(action: FinalAction): void {
    const { record } = action;
    if (action.name === 'hangup') {
      record.result = 'the call is ending';
      return this.endAfterSpeech({ type: 'hangup' }, record);
    }
    const target = resolveTransferTarget(record.arguments, this.deps.transfer);
    if (!target) {
      record.result = 'not done: no transfer destination is configured';
      this.log.warn('model asked for a transfer, but TRANSFER_TARGET is not set');
      this.speakLine(this.prompts.render('transferFailed'));
      return;
    }
    record.result = `transferring the call to ${target}`;
    this.endAfterSpeech({ type: 'transfer', target }, record);
  }

  /** Transfer and hangup wait until the speech before them has played: a goodbye is never cut. */
  private endAfterSpeech(ending: Ending, record?: ToolCallRecord): void {
    if (!this.playback.pending && this.held.length === 0 && !this.callerSpeaking) return this.sendFinal(ending);
    this.ending.wait(ending, record);
  }

  private onEndingOverdue(): void {
    // Speech first, always: held sentences go out before the call ends.
    if (this.held.length > 0) {
      this.deliverHeld();
      this.ending.rewait();
      return;
    }
    this.firePendingFinal();
  }

  private firePendingFinal(): void {
    if (this.callerSpeaking) return;
    const ending = this.ending.take();
    if (ending) this.sendFinal(ending);
  }

  private sendFinal(ending: Ending): void {
    if (this.ended) return;
    if (ending.type === 'hangup') {
      this.hungUp = true;
      this.send({ type: 'hangup', session_id: this.id });
    } else {
      this.transferSent = true;
      this.send({ type: 'transfer', session_id: this.id, target: ending.target });
    }
    this.log.info({ action: ending.type }, 'call-ending action sent');
    this.replies.settle();
    this.leaving?.resolve();
  }

  private send(action: Action): void {
    if (this.ended) return;
    // Something happened in the call: an event that repeats the last one is no longer a redelivery.
    this.redelivery.reset();
    this.currentSink.send(action);
  }
}
