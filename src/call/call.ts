import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { loggableLlmError } from '../llm/llm-errors.js';
import type { Logger } from '../logger.js';
import type { PromptName, SpeakStyle } from '../prompts/prompt-store.js';
import type { PendingCall } from './ports/outbound-request.js';
import type { Action } from '../protocol/actions.js';
import type {
  AssistantSpeakEvent,
  Session,
  SessionEndEvent,
  SessionStartEvent,
  VoiceEvent,
} from '../protocol/events.js';
import type { PriorCall } from './ports/prior-call.js';
import type { CallerContextSource } from './ports/business-tools.js';
import type { ControlOutcome } from './ports/call-control.js';
import type { ActionSink, CallDeps, LeaveReason, TakenRequest } from './call-deps.js';
import { CallEnding } from './ending/call-ending.js';
import { CallActivityTracker } from './ports/call-activity.js';
import { eachOnItsOwn, keepWords, type CallerLine, type Redact } from './ports/redaction.js';
import { CallerWords } from './caller-words.js';
import { NO_CALL_TRACE, type CallTrace, type SpeechParent } from './ports/tracing.js';
import { maskedOrNone } from '../phone/mask-number.js';
import { CallRecord } from './call-record.js';
import type { CallSoFar, CallSummary, VoicemailDetector } from './ports/call-summary.js';
import { CallPrompts } from './call-prompts.js';
import { CallTools } from './turn/call-tools.js';
import { lookUpCaller } from './input/caller-context.js';
import { CallerInput, type CallerInputHost, type InputMarks } from './input/caller-input.js';
import { EventGate } from './event-gate.js';
import { History } from './history.js';
import { RedeliveryFilter } from './redelivery.js';
import { Reply, type SpokenChunk } from './speech/reply.js';
import { ReplyLog } from './speech/reply-log.js';
import type { SilenceStep } from './input/silence.js';
import { notInterruptible } from './speech/speak-action.js';
import { hasSsml, stripSsml } from './speech/ssml.js';
import { defaultDestination, namedDestination, type CallParties } from './ending/transfer.js';
import { Turn, type SpeakExtra, type TurnOutcome } from './turn/turn.js';
import { TurnConsequences } from './turn/turn-consequences.js';
import { turnRequest } from './turn/turn-request.js';
import { Voice } from './speech/voice.js';
import { VoicemailWatch, type VoicemailTiming } from './input/voicemail-watch.js';

/** What the caller hears as Hotline hangs up of its own accord. */
const LEAVE_LINES = {
  idle: 'idleGoodbye',
  shutdown: 'shutdownGoodbye',
  operator: 'operatorGoodbye',
} as const satisfies Record<LeaveReason, PromptName>;

/**
 * One phone call: its conversation, what the caller heard, and the turn in
 * flight. Transport-agnostic: events come in through `handle`, actions leave
 * through the sink.
 */
export class Call {
  readonly id: string;
  private readonly log: Logger;
  private readonly history: History;
  private readonly voice: Voice;
  private readonly redelivery = new RedeliveryFilter();
  private readonly replies: ReplyLog;
  private turn: Turn | undefined;
  private readonly record: CallRecord;
  private turnCount = 0;
  private readonly redact: Redact;
  private readonly callerWords: CallerWords;
  /** What afterRequest() holds until the turn's request is on the wire. */
  private readonly recording: (() => void)[] = [];
  private readonly ending: CallEnding;
  /** A failed turn's apology or giving up, and the model's hangup or transfer. */
  private readonly consequences: TurnConsequences;
  private started = false;
  private readonly prompts: CallPrompts;
  private fillerText: string | undefined;
  private fillerAgainText: string | undefined;
  private ended = false;
  /** Words, keys, voice activity and silence: what each means for the call. */
  private readonly input: CallerInput;
  /** Listens for a mailbox on an outbound call, until a person has spoken. */
  private voicemail: VoicemailWatch | undefined;
  /** The business tools the model calls: offered, run, held for, and each change made once. */
  private readonly tools: CallTools;
  /** Who is on the line, for a transfer's caller id. */
  private parties: CallParties = { party: undefined, line: undefined };
  /** The phase and latest words, for whoever shows calls live. */
  private readonly activity: CallActivityTracker;
  /** Events wait here while the call gets ready (an adopted call's past, the caller's record). */
  private readonly gate: EventGate<Exclude<VoiceEvent, SessionEndEvent>>;
  /** The call's spans (the no-op when calls are not traced). */
  private readonly trace: CallTrace;
  /** The latest turn: its words may still go out after it has settled (its last sentence, a paced one). */
  private lastTurn: Turn | undefined;

  constructor(
    id: string,
    private currentSink: ActionSink,
    private readonly deps: CallDeps,
  ) {
    this.id = id;
    this.log = deps.logger;
    this.redact = deps.redact ?? keepWords;
    this.trace = deps.trace ?? NO_CALL_TRACE;
    this.history = new History(deps.settings.historyMaxChars, deps.logger, this.redact);
    this.callerWords = new CallerWords(deps.callerLines ?? eachOnItsOwn(this.redact)(), this.history, deps.transcript, deps.logger, deps.redactFromModel ?? false);
    this.replies = new ReplyLog(deps.transcript);
    this.record = new CallRecord(id, deps.transcript, () => this.recordChanged(), () => this.history.heard(), deps.recordEachReply ?? false, this.redact);
    // Ready, and the events that waited started nothing (an adopted call's assistant_speech_ended):
    // a request waiting for an answer gets "nothing to say" now, not after the hold line's wait.
    this.gate = new EventGate((event) => this.handle(event), deps.logger, () => {
      if (!this.ended && !this.busy) this.sink.idle?.();
    });
    this.activity = new CallActivityTracker(deps.activity, { generating: () => this.turn !== undefined, speaking: () => this.voice.playback.pending });
    this.prompts = new CallPrompts(deps.prompts, deps.settings.timeZone, deps.logger);
    this.input = new CallerInput(this.inputHost(), deps.prompts.settings);
    this.voice = new Voice(
      id,
      this.input.silence,
      (action) => this.send(action),
      () => this.speechHeld,
      // Untraced, the voice is given nothing: its speaks then cost no look-up of their turn.
      this.trace.recording ? (chunks, start) => this.speechParentOf(chunks).speak(start) : undefined,
    );
    this.ending = new CallEnding({
      log: this.log,
      sessionId: id,
      voice: this.voice,
      ended: () => this.ended,
      heldBack: () => this.speechHeld,
      stopInput: () => this.input.stop(),
      transferClip: () => this.prompts.audio('transfer'),
      parties: () => this.parties,
      playbackGraceMs: deps.settings.playbackGraceMs,
      send: (action) => this.send(action),
      settleReply: () => this.replies.settle(),
      recordEnding: (ending) => (ending ? this.record.endingSent(ending.type, ending.cause) : this.record.endingUndone()),
    });
    this.consequences = new TurnConsequences({
      log: this.log,
      metrics: deps.metrics,
      transfer: deps.transfer,
      maxFailures: deps.settings.llmMaxFailures,
      speakLine: (name, options) => this.speakLine(name, options),
      endAfter: (ending, record) => this.ending.after(ending, record),
    });
    this.tools = new CallTools({
      log: this.log,
      toolBox: deps.toolBox,
      prompts: this.prompts,
      voice: this.voice,
      transcript: deps.transcript,
      record: this.record,
      metrics: deps.metrics,
      activity: this.activity,
      timing: { holdMs: deps.settings.toolHoldMs, repeatMs: deps.settings.toolHoldRepeatMs },
    });
  }

  /** True while an LLM turn is generating. */
  get generating(): boolean {
    return this.turn !== undefined;
  }

  /**
   * True while an answer is on its way: a turn generating, digits being typed, the call getting ready
   * (its past, the caller's record), or an answer held while the model judges whether a mailbox answered.
   */
  get busy(): boolean {
    return this.turn !== undefined || this.input.typing || this.gate.closed || (this.voicemail?.judging ?? false);
  }

  /** The person on the line (the caller, or the person called), once the call has begun. */
  get party(): string | undefined {
    return this.parties.party;
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
    if (this.recording.length > 0) this.recordNow();
    if (this.ended || this.gate.hold(event)) return;
    if (this.redelivery.isRedelivery(event)) {
      this.log.debug({ type: event.type }, 'redelivered event ignored');
      return;
    }
    this.dispatch(event);
    this.activity.note();
  }

  private dispatch(event: Exclude<VoiceEvent, SessionEndEvent>): void {
    switch (event.type) {
      case 'session_start':
        return this.onSessionStart(event);
      case 'user_speak':
        return this.input.speech(event);
      case 'assistant_speak':
        return this.onAssistantSpeak(event);
      case 'assistant_speech_ended':
        // Not while the reply still streams: its own connection is busy, and free again once it ends.
        if (!this.turn) this.expectTurn();
        return this.onSpeechEnded();
      case 'user_speech_started':
        this.expectTurn();
        return this.input.speechStarted();
      case 'dtmf_received':
        return this.input.key(event.digit);
      case 'user_input_timeout':
        return this.input.silent('service');
      case 'user_barge_in':
        return this.input.bargeIn(event);
      case 'sms_failed':
        this.log.warn({ event }, 'the service could not send a text message');
        this.deps.transcript.append({ role: 'event', text: 'sms_failed' });
        return;
    }
  }

  /**
   * A call this process never saw start (a restart, a webhook landing on
   * another instance): no greeting, its past read from the transcript on disk
   * if there is one, and the event that brought it answered as usual.
   */
  adopt(session: Session, prior: Promise<PriorCall | undefined | 'ended'>): void {
    this.started = true;
    this.gate.prepare(
      prior.then(
        // An ended call is not opened again: the registry has dropped this one.
        (past) => (past === 'ended' ? undefined : this.restore(session, past)),
        (error: unknown) => {
          this.log.error({ err: error }, 'the transcript of an adopted call could not be read; going on without it');
          this.restore(session, undefined);
        },
      ),
    );
  }

  private restore(session: Session, past: PriorCall | undefined): void {
    const known = past?.session;
    this.beginCall(
      {
        direction: known?.direction ?? session.direction,
        from_phone_number: known?.from ?? session.from_phone_number,
        to_phone_number: known?.to ?? session.to_phone_number,
      },
      past?.variables ? { variables: past.variables } : undefined,
    );
    for (const line of past?.lines ?? []) {
      if (line.role === 'user') this.history.addUser(line.text);
      else this.history.addReply(Reply.heard(line.text));
    }
    // The same call as before the restart (or at the replica that had it): the same record.
    if (past?.record) this.record.continueFrom(past.record);
    else if (past?.callId) this.record.continueAs(past.callId);
    const restored = past?.lines.length ?? 0;
    this.log.info({ restored, transcript: past !== undefined }, 'call adopted: an event for a session this process did not know');
    this.deps.transcript.append({ role: 'event', text: 'session_adopted', restored, call_id: this.record.callId });
  }

  /** Ends the call: generation stops, nothing more is sent, the transcript is closed. */
  end(reason: string, origin: 'service' | 'hotline'): Promise<void> {
    if (this.recording.length > 0) this.recordNow();
    if (this.ended) return Promise.resolve();
    if (this.turn) {
      this.turn.abort('ended');
      this.turn.reply.interrupted = true;
    }
    this.voice.drop();
    this.settleTurn();
    this.expectNothing();
    this.input.dispose();
    this.voicemail?.dispose();
    this.replies.settle();
    this.ended = true;
    this.gate.clear();
    this.ending.dispose();
    this.activity.ended();
    // Whether the call is over for good, or Hotline let go of a call the service may still have.
    const open = this.record.leftOpen(origin);
    this.deps.transcript.append({
      role: 'event',
      text: 'session_end',
      reason,
      origin,
      end_reason: this.record.endReasonOf(reason, origin),
      ...(open ? { open: true } : {}),
    });
    this.log.info({ reason, turns: this.turnCount }, 'call ended');
    this.voice.playback.endTraces();
    this.trace.end({ reason, callId: this.record.callId, turns: this.turnCount });
    return this.deps.transcript.close();
  }

  /** Resolves once an adopted call's past is in (at once for any other call). */
  whenReady(): Promise<void> {
    return this.gate.ready();
  }

  /**
   * Between turns — nothing generating, playing, held or about to end the call — the call's record
   * as it stands: what another replica needs to take the call up where it is.
   */
  quietRecord(): CallSoFar | undefined {
    if (!this.started || this.ended || this.turn || this.gate.closed) return undefined;
    if (this.voice.holding || this.voice.playback.pending || this.ending.waiting || this.ending.closing) return undefined;
    if ((this.voicemail?.judging ?? false) || this.input.typing || this.input.holdingBack) return undefined;
    return this.record.soFar();
  }

  /**
   * Another replica takes the call up from `quietRecord()` (this one is stopping): this one lets go
   * of it without a word to the caller, and its record stays the call's, in progress.
   */
  letGo(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    this.gate.clear();
    this.expectNothing();
    this.input.dispose();
    this.ending.dispose();
    this.replies.settle();
    this.activity.ended();
    this.deps.transcript.append({ role: 'event', text: 'session_end', reason: 'handed_over', origin: 'hotline', open: true });
    this.log.info({ turns: this.turnCount }, 'call handed over to another replica');
    this.voice.playback.endTraces();
    this.trace.end({ reason: 'handed_over', callId: this.record.callId, turns: this.turnCount });
    return this.deps.transcript.close();
  }

  /** The call turned out to have ended before (see CallRegistry): nothing of it is said or written. */
  drop(): void {
    if (this.ended) return;
    this.ended = true;
    this.gate.clear();
    this.expectNothing();
    this.input.dispose();
    this.voicemail?.dispose();
    this.ending.dispose();
    this.trace.end({ reason: 'ended_before', callId: this.record.callId, turns: this.turnCount });
    this.deps.transcript.discard();
  }

  /** The call's transcript file (known for certain once the transcript is closed). */
  get transcriptFile(): string {
    return this.deps.transcript.file;
  }

  /**
   * Hotline ends the call the way a person would: generation stops, the
   * caller hears a short line (a prompt file), then the call is hung up — or,
   * on shutdown with TRANSFER_TARGET set, transferred — once the line has
   * played. Resolves when that action has gone out, or the call ended first.
   */
  leave(reason: LeaveReason): Promise<void> {
    // A hangup already went out: there is nothing left to say.
    if (this.ended || this.ending.hungUpAlready) return Promise.resolve();
    const { done, fresh } = this.ending.leave();
    if (!fresh) return done;
    this.log.info({ reason }, 'Hotline is ending the call');
    if (reason === 'operator') {
      // A person decided: what plays now stops where the service allows it, and the goodbye follows at once.
      this.deps.transcript.append({ role: 'event', text: 'operator_hangup' });
      this.stopTalking();
    }
    if (this.turn) {
      this.turn.abort('ended');
      this.settleTurn();
    }
    this.voice.drop();
    this.input.stop();
    this.ending.cancel('Hotline is ending the call');
    const destination = defaultDestination(this.deps.transfer);
    if (reason === 'shutdown' && destination) {
      this.speakLine('shutdownTransfer', { final: true });
      this.ending.after({ type: 'transfer', destination, cause: reason });
    } else {
      this.speakLine(LEAVE_LINES[reason], { final: true });
      this.ending.after({ type: 'hangup', cause: reason });
    }
    return done;
  }

  /**
   * A person running Hotline hands the call to a colleague now: generation
   * and playback stop, the caller hears operator-transfer.md, then the
   * transfer. The caller's words no longer call it off; a transfer nobody
   * answers brings the call back as any transfer does. `target` names one of
   * the call's transfer targets; without it, TRANSFER_TARGET.
   */
  handOver(target: string | undefined): Exclude<ControlOutcome, 'not_found'> {
    if (this.ended || this.ending.closing) return 'ending';
    const destination = target === undefined ? defaultDestination(this.deps.transfer) : namedDestination(target, this.deps.transfer);
    if (!destination) return 'no_destination';
    this.log.info({ target: destination.target }, 'an operator hands the call over');
    this.deps.transcript.append({ role: 'event', text: 'operator_transfer' });
    this.stopTalking();
    this.speakLine('operatorTransfer', { final: true });
    this.ending.handOver({ type: 'transfer', destination, cause: 'operator' });
    return 'done';
  }

  /**
   * The connection dropped; the service may reconnect. Nothing said now would
   * reach the caller, so generation stops and the reply counts only what was
   * delivered before.
   */
  suspend(): void {
    if (this.ended) return;
    this.interrupt(false);
    this.input.stop();
    this.replies.settle();
  }

  /**
   * A webhook request has waited long for the model: the caller hears the hold
   * line now instead of the service timing out. False when there is nothing
   * to hold for.
   */
  holdOn(): boolean {
    if (!this.turn || this.voice.holding || this.speechHeld) return false;
    return this.tools.holdNow() || this.turn.hold();
  }

  /** Hold lines the caller has heard while waiting for the turn in progress (0 without one). */
  get holdsInTurn(): number {
    return this.turn?.holdsSaid ?? 0;
  }

  /**
   * Nothing new is said: the caller has started to talk and their words have
   * not arrived, or the model is judging whether a mailbox answered.
   */
  private get speechHeld(): boolean {
    return this.input.holdingBack || (this.voicemail?.judging ?? false);
  }

  /** The call as the business's record keeps it; asked once it has ended. */
  summary(reason: string, origin: 'service' | 'hotline'): CallSummary {
    return this.record.summary(reason, origin);
  }

  private progressQueued = false;

  /**
   * The record changed: it is told once the work of this moment is done — a turn's request has
   * gone to the model first — and once however many changes the moment made.
   */
  private recordChanged(): void {
    const progress = this.deps.progress;
    if (!progress || this.progressQueued || this.ended) return;
    this.progressQueued = true;
    setImmediate(() => {
      this.progressQueued = false;
      // An ended call's record is its summary, told when its transcript is closed.
      if (!this.ended) progress(this.record.soFar());
    });
  }

  /** The conversation as the next LLM request will see it. */
  private messages(): ChatCompletionMessageParam[] {
    return this.history.messages(this.prompts.system.text);
  }

  /** The call's variables and system prompt, once it is known who is on the line. */
  private beginCall(
    session: Pick<Session, 'direction' | 'from_phone_number' | 'to_phone_number'>,
    request: Pick<PendingCall, 'variables' | 'tags'> | undefined,
  ): void {
    this.prompts.begin(session, request?.variables);
    const outbound = session.direction === 'outbound';
    const parties = { direction: outbound ? ('outbound' as const) : ('inbound' as const), from: session.from_phone_number, to: session.to_phone_number };
    this.record.began(parties, request);
    this.activity.began(this.id, parties);
    this.parties = outbound
      ? { party: session.to_phone_number, line: session.from_phone_number }
      : { party: session.from_phone_number, line: session.to_phone_number };
  }

  private onSessionStart(event: SessionStartEvent): void {
    const { session } = event;
    if (this.started) {
      // The same session starting again is the call coming back from a transfer nobody answered —
      // if a transfer went out. Otherwise it is the start again, redelivered.
      if (!this.ending.cameBack()) return this.log.info('session_start again without a transfer; ignored');
      this.log.info('session_start again: call is back from an unanswered transfer');
      this.deps.transcript.append({ role: 'event', text: 'session_restart' });
      this.interrupt(false);
      this.speakLine('transferFailed');
      return;
    }
    this.started = true;
    this.expectTurn();
    const outbound = session.direction === 'outbound';
    const taken = this.deps.started(session);
    if (!(taken instanceof Promise)) {
      const ready = this.begin(session, outbound, taken);
      if (ready) this.gate.prepare(ready);
      return;
    }
    // Requested by another replica: its variables come from the store, and the caller's events wait for them.
    this.gate.prepare(taken.then((found) => this.begin(session, outbound, found)));
  }

  /** The call begins, as whoever requested it asked; what the greeting waits for, if anything. */
  private begin(session: Session, outbound: boolean, taken: TakenRequest | undefined): Promise<void> | undefined {
    if (this.ended) return undefined;
    const request = taken?.request;
    this.beginCall(session, request);
    if (outbound && this.deps.voicemail) this.voicemail = this.watchForMailbox(this.deps.voicemail.detector, this.deps.voicemail.timing);
    this.log.info(
      // Masked: a log is no place for whole numbers (the record and the transcript keep them).
      { direction: session.direction, from: maskedOrNone(session.from_phone_number), to: maskedOrNone(session.to_phone_number), requested: !!request },
      'call started',
    );
    this.deps.transcript.append({
      role: 'event',
      text: 'session_start',
      call_id: this.record.callId,
      direction: session.direction,
      from: session.from_phone_number,
      to: session.to_phone_number,
      ...(request ? { variables: request.variables } : {}),
    });
    const context = this.deps.callerContext;
    const ready = [taken?.recorded, context && this.lookUpCaller(context)].filter((p): p is Promise<void> => p !== undefined);
    if (ready.length === 0) {
      this.speakGreeting(outbound, request);
      return undefined;
    }
    return Promise.all(ready).then(() => this.speakGreeting(outbound, request));
  }

  /** The caller's record fills the greeting and the system prompt — if it comes within its time limit. */
  private async lookUpCaller(context: CallerContextSource): Promise<void> {
    const { fields, durationMs } = await lookUpCaller(context, this.prompts.variables, this.log);
    this.deps.transcript.append({ role: 'event', text: 'caller_context', fields: Object.keys(fields), duration_ms: durationMs });
    this.prompts.addContext(fields);
  }

  private speakGreeting(outbound: boolean, request: PendingCall | undefined): void {
    const [name, text] = this.prompts.greeting(outbound, request);
    this.speakText(text, this.prompts.style(name), {});
  }

  /** What the caller's input needs of the call (see CallerInput). */
  private inputHost(): CallerInputHost {
    const call = this;
    return {
      log: this.log,
      get ending() {
        return call.ending.closing;
      },
      get talking() {
        return call.turn !== undefined || call.voice.holding || call.ending.waiting;
      },
      get interruptible() {
        return call.turn !== undefined || call.voice.playback.pending;
      },
      streaming: this.deps.pacing === 'stream',
      interrupt: (bargedIn) => this.interrupt(bargedIn),
      bargedIn: () => {
        this.deps.metrics.bargedIn();
        this.record.bargedIn();
      },
      stopPlayback: () => this.stopTalking(),
      takeTurn: (text, marks) => this.takeTurn(text, marks),
      resume: () => this.resumeSpeech(),
      settleReply: () => this.replies.settle(),
      onSilence: (step, source) => this.onSilence(step, source),
    };
  }

  /** What was held back goes out after all, and a hangup or transfer waiting for it follows it. */
  private resumeSpeech(): void {
    if (this.speechHeld) return;
    this.voice.deliver(this.awaitsCaller());
    if (!this.turn) this.awaitPlayed();
    if (!this.ending.waiting) return;
    if (!this.voice.playback.pending) return this.ending.fire();
    this.ending.rewait();
  }

  /** Hotline stops talking at once: generation ends, and what plays is stopped where the service allows it. */
  private stopTalking(): void {
    const playing = this.deps.canStopPlayback && this.voice.playback.interruptible;
    this.interrupt(true);
    if (playing) this.send({ type: 'barge_in', session_id: this.id });
  }

  private watchForMailbox(detector: VoicemailDetector, timing: VoicemailTiming): VoicemailWatch {
    return new VoicemailWatch(
      detector,
      {
        log: this.log,
        hush: () => this.stopTalking(),
        leaveMessage: () => {
          if (this.ended || this.ending.closing) return;
          this.speakLine('outboundVoicemail', { final: true });
          this.ending.after({ type: 'hangup', cause: 'voicemail' });
        },
        released: () => {
          if (this.ended) return;
          // Streamed, each sentence would have gone out on its own the moment it was complete: so it does now.
          if (this.deps.pacing === 'stream') this.voice.deliverEachButLast();
          this.resumeSpeech();
        },
        note: (entry) => this.deps.transcript.append(entry),
      },
      timing,
    );
  }

  /** What the caller said (or typed) starts a turn — unless a mailbox said it. */
  private takeTurn(text: string, marks: InputMarks): void {
    const wordsAt = performance.now();
    const line = this.callerWords.said(text);
    this.activity.callerSaid(line.provisional);
    if (this.voicemail?.words(text)) return;
    this.answer(text, line, marks, wordsAt);
  }

  private answer(text: string, line: CallerLine, marks: InputMarks, wordsAt: number): void {
    this.replies.settle();
    this.callerWords.remember(text, line);
    this.startTurn(wordsAt, line.provisional);
    // Words the model is judging (a mailbox?) are written with its verdict, marked if a mailbox said them.
    this.afterRequest(() => this.callerWords.write(line, marks, this.voicemail?.judging ? (entry) => this.voicemail?.keep(entry) : undefined));
  }

  /**
   * Work that only records a turn's start, done once its request is on the wire. The request's bytes
   * leave on the next tick (Node's http hands a kept connection to a request then), and a tick queued
   * after it runs next, still before any of the turn's own promise steps; an event read in the same
   * tick (ws emits a chunk's messages at once) has it done first. So the record is whole before
   * anything else touches the call, and the caller's wait carries none of it.
   */
  private afterRequest(work: () => void): void {
    if (this.recording.push(work) === 1) process.nextTick(() => this.recordNow());
  }

  private recordNow(): void {
    for (const work of this.recording.splice(0)) {
      try {
        work();
      } catch (error) {
        this.log.error({ err: error }, 'recording the turn failed');
      }
    }
  }

  /** The caller is silent after Hotline said its piece: ask again, or after too many times say goodbye. */
  private onSilence(step: SilenceStep, source: 'service' | 'hotline'): void {
    this.log.info({ source, step }, 'the caller is silent');
    this.deps.transcript.append({ role: 'event', text: 'user_input_timeout', source, step });
    if (step === 'reprompt') return this.speakLine('silenceReprompt');
    this.speakLine('silenceGoodbye', { final: true });
    this.ending.after({ type: 'hangup', cause: 'silence' });
  }

  private onAssistantSpeak(event: AssistantSpeakEvent): void {
    this.voice.playback.started(event.text, event.duration_ms);
    this.record.mark('playbackStartedMs');
  }

  private onSpeechEnded(): void {
    const drained = this.voice.playback.ended();
    if (drained) this.record.mark('playbackEndedMs');
    if (this.voice.holding) this.voice.deliver(this.awaitsCaller());
    else if (drained) {
      this.ending.fire();
      this.input.silence.played();
    }
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
    this.ending.cancel('the caller spoke before it happened');
    // Sentences never delivered were never heard: the reply keeps them as undelivered.
    for (const reply of this.voice.interrupt(bargedIn)) reply.interrupted = true;
  }

  /**
   * The caller may soon be answered (the call began, they started speaking, a line has played): the
   * connections the turn will need — the model's, its business systems' — are opened now if none
   * is idle, so no turn waits for a handshake.
   */
  private expectTurn(): void {
    if (this.ended) return;
    this.deps.llm.expect?.(this);
    const systems = this.deps.businessConnections;
    if (!systems) return;
    for (const tool of this.tools.offered()) if (tool.origin) systems.expect(this, tool.origin);
  }

  /** The call's requests are made now, or it makes none any more: it waits for no connection. */
  private expectNothing(): void {
    this.deps.llm.spent?.(this);
    this.deps.businessConnections?.spent(this);
  }

  private startTurn(wordsAt: number, callerText: string): void {
    const id = ++this.turnCount;
    this.expectNothing();
    // The hold line: for a reasoning model over a live connection, or for any slow answer a webhook request waits for.
    this.fillerText ??= this.prompts.render('thinking');
    this.fillerAgainText ??= this.prompts.render('thinkingAgain');
    const turn = new Turn({
      id,
      ...turnRequest(this.deps, this.prompts.settings, this.messages(), this.prompts.system.staticChars),
      businessTools: () => this.tools.offered(),
      runTools: (calls, signal, say, trace) => this.tools.run(calls, signal, say, trace),
      trace: this.trace.turn(id, callerText),
      ...(this.fillerText ? { fillerText: this.fillerText } : {}),
      ...(this.fillerAgainText ? { fillerAgainText: this.fillerAgainText } : {}),
      speak: (t, text, extra) => this.speakFromTurn(t, text, extra),
      onFirstToken: (t) => {
        this.deps.metrics.llmFirstTokenArrived(performance.now() - t.startedAt);
        if (t === this.turn) this.record.mark('llmFirstTokenMs');
      },
      // Each request's tokens, counted with the turn's: they reach the store with the record's next write.
      onUsage: (t, usage) => {
        const model = this.prompts.settings.model ?? this.deps.llm.model;
        const cost = this.deps.prices?.costOf(model, usage);
        this.record.tokensUsed(t.reply, usage, model, cost);
        this.deps.metrics.llmUsed(model, usage, cost);
        return cost;
      },
      onRetry: (t, error, delayMs) => {
        // Nothing was said yet, so a retry costs the caller less than an apology.
        this.log.warn({ err: loggableLlmError(error), turn: t.id, delayMs }, 'LLM request failed; retrying once');
        this.deps.metrics.llmFailed(error);
      },
    });
    this.input.silence.spoke();
    this.turn = turn;
    this.lastTurn = turn;
    this.history.addReply(turn.reply);
    this.replies.track(turn.reply);
    turn
      .run()
      // run() reports failures as outcomes; the catches are only safety nets.
      .catch((error: unknown): TurnOutcome => ({ status: 'failed', error }))
      .then((outcome) => {
        try {
          this.onTurnDone(turn, outcome);
        } finally {
          // After onTurnDone: the turn's last words, sent there, are spoken within its span.
          turn.trace.end(
            outcome.status === 'failed'
              ? { status: 'failed', error: outcome.error }
              : { status: outcome.status, action: outcome.status === 'completed' ? outcome.finalAction?.name : undefined },
          );
        }
      })
      .catch((error: unknown) => this.log.error({ err: error, turn: id }, 'turn completion failed'));
    this.afterRequest(() => {
      this.deps.metrics.turnStarted();
      this.record.turn(turn.reply, wordsAt);
    });
  }

  /** The single gate every streamed chunk passes: a superseded turn can never speak. */
  private speakFromTurn(turn: Turn, text: string, extra: SpeakExtra): void {
    if (this.ended || this.ending.hungUpAlready || turn !== this.turn || turn.aborted) return;
    const chunk = turn.reply.addChunk(text);
    if (extra.ssml !== undefined) chunk.ssml = extra.ssml;
    if (extra.filler) chunk.filler = true;
    this.voice.hold(chunk, extra.filler ? this.prompts.style(extra.filler === 'tool' ? 'toolHold' : 'thinking') : this.prompts.settings.style);
    const firstMs = turn.reply.chunkCount === 1 ? performance.now() - turn.startedAt : undefined;
    this.deliverFromTurn(turn, extra);
    // Counted once the sentence is on its way: the caller waits for the first one most of all.
    if (firstMs !== undefined) {
      this.deps.metrics.firstSpeakSent(firstMs);
      this.record.mark('firstSpeakMs');
      turn.trace.firstSpeak(firstMs);
    }
  }

  private deliverFromTurn(turn: Turn, extra: SpeakExtra): void {
    if (extra.filler) return this.voice.deliver();
    // The turn's last words go out as it ends, asking for the caller's answer — or, before a hangup, whole.
    if (turn.closing) return;
    const { pacing } = this.deps;
    if (pacing === 'stream' || (pacing === 'sentences' && !this.voice.playback.pending)) this.voice.deliver();
  }

  /** A speak is traced under the turn whose words it carries; a line of the call's own (a greeting, an apology) under the call. */
  private speechParentOf(chunks: readonly SpokenChunk[]): SpeechParent {
    const turn = this.lastTurn;
    if (turn) for (const chunk of chunks) if (chunk.reply === turn.reply) return turn.trace;
    return this.trace;
  }

  /** True when what is delivered now ends what Hotline has to say: the caller's turn follows. */
  private awaitsCaller(): boolean {
    return !this.turn && !this.ending.waiting && !this.ending.closing && !this.input.typing;
  }

  private onTurnDone(turn: Turn, outcome: TurnOutcome): void {
    if (turn !== this.turn) return; // superseded: already settled by interrupt()
    if (outcome.status === 'failed') this.record.turnFailed();
    this.settleTurn();
    if (this.ended) return;
    if (outcome.status === 'failed') {
      this.consequences.failed(turn.id, outcome.error);
    } else {
      this.consequences.succeeded();
      if (outcome.status === 'completed' && outcome.capped) {
        this.log.warn({ turn: turn.id, maxChars: this.deps.settings.replyMaxChars }, 'reply cut at REPLY_MAX_CHARS');
      }
      const final = outcome.status === 'completed' ? outcome.finalAction : undefined;
      // Words before a hangup or transfer are its goodbye or announcement: said whole.
      if (final) this.voice.restyle(notInterruptible);
      if (this.deps.pacing !== 'sentences' || !this.voice.playback.pending) this.voice.deliver(!final && this.awaitsCaller());
      if (final) this.consequences.final(final);
      // The last sentence had left before Hotline knew it was the last: Hotline times the silence itself.
      else if (!this.voice.holding && !this.input.silence.awaiting) {
        this.input.startClock(this.voice.playback.remainingMs() + this.deps.settings.playbackGraceMs);
      }
    }
    this.awaitPlayed();
    // Speech held back (the model judging a mailbox, the caller starting to talk) is still to come.
    if (!(this.speechHeld && this.voice.holding)) this.sink.idle?.();
  }

  /** Forgets the finished turn; its reply stays in history and is written once it has played. */
  private settleTurn(): void {
    if (!this.turn) return;
    this.turn = undefined;
    this.settleIfPlayed();
  }

  /** The reply in the transcript as soon as nothing of it can change any more. */
  private settleIfPlayed(): void {
    if (this.turn || this.voice.holding || this.voice.playback.pending) return;
    this.replies.settle();
  }

  /**
   * The turn is over but its speech may still be playing: settle its reply on
   * assistant_speech_ended, or — the service may never report it — once the
   * playback estimate has run out.
   */
  private awaitPlayed(): void {
    // Held speech has not begun to play: its reply is settled once it has gone out (resumeSpeech) or was dropped.
    if (this.speechHeld && this.voice.holding) return;
    if (this.replies.tracking) this.replies.settleAfter(this.voice.playback.remainingMs() + this.deps.settings.playbackGraceMs);
  }

  /** Speaks a prompt file's line as a reply of its own; `final` when the call ends or goes elsewhere after it. */
  private speakLine(name: PromptName, options: { final?: boolean } = {}): void {
    this.speakText(this.prompts.render(name), this.prompts.style(name), options);
  }

  private speakText(line: string, style: SpeakStyle, options: { final?: boolean }): void {
    const reply = new Reply();
    reply.beginContent();
    const ssml = hasSsml(line);
    const chunk = reply.addChunk(ssml ? stripSsml(line) : line);
    if (ssml && this.prompts.settings.ssml) chunk.ssml = line;
    this.voice.hold(chunk, style);
    this.history.addReply(reply);
    this.replies.track(reply);
    this.voice.deliver(!options.final && this.awaitsCaller());
    this.awaitPlayed();
  }

  private send(action: Action): void {
    if (this.ended) return;
    // Something happened in the call: an event that repeats the last one is no longer a redelivery.
    this.redelivery.reset();
    this.currentSink.send(action);
    this.activity.sent(action);
  }
}
