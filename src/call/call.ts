import type { Action } from '../protocol/actions.js';
import type { AssistantSpeakEvent, Session, SessionStartEvent } from '../protocol/events.js';
import type { PriorCall } from './ports/prior-call.js';
import type { ControlOutcome } from './ports/call-control.js';
import type { ActionSink, CallDeps, LeaveReason } from './call-deps.js';
import { CallParts, type CallEvent } from './call-parts.js';
import { leaving } from './ending/leave.js';
import type { CallerLine } from './ports/redaction.js';
import type { CallSoFar, CallSummary } from './ports/call-summary.js';
import type { InputMarks } from './input/caller-input.js';
import type { SilenceStep } from './input/silence.js';
import { notInterruptible } from './speech/speak-action.js';
import { defaultDestination, namedDestination } from './ending/transfer.js';
import type { SpeakExtra, Turn, TurnOutcome } from './turn/turn.js';

/**
 * One phone call: its conversation, what the caller heard, and the turn in
 * flight. Transport-agnostic: events come in through `handle`, actions leave
 * through the sink. What the call is made of, and how its parts are connected,
 * is CallParts'; this is what happens in it.
 */
export class Call extends CallParts {
  private started = false;

  constructor(
    id: string,
    private currentSink: ActionSink,
    deps: CallDeps,
  ) {
    super(id, deps);
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
    return this.opening.parties.party;
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
  handle(event: CallEvent): void {
    this.recording.flush();
    if (this.ended || this.gate.hold(event)) return;
    if (this.redelivery.isRedelivery(event)) {
      this.log.debug({ type: event.type }, 'redelivered event ignored');
      return;
    }
    this.dispatch(event);
    this.activity.note();
  }

  private dispatch(event: CallEvent): void {
    switch (event.type) {
      case 'session_start':
        return this.onSessionStart(event);
      case 'user_speak':
        this.language.tagged(event.language);
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
      case 'sms_failed': {
        const note = this.texts.failed(event);
        if (note !== undefined) this.tell(note);
        return;
      }
    }
  }

  /** Hotline has something to tell the model (a text message failed): a turn for it now if the call is quiet, else with the next. */
  private tell(note: string): void {
    this.history.addNote(note);
    this.turnForNotes();
  }

  /**
   * Notes waiting get a turn of their own once nothing is generated, said, held back or ending — the
   * caller's next words take them along if they come first. They are not the caller's words: neither
   * the transcript nor the record shows them as said.
   */
  private turnForNotes(): boolean {
    if (!this.history.notesWaiting || this.ended || this.busy || this.speechHeld) return false;
    if (this.voice.holding || this.voice.playback.pending || this.ending.waiting || this.ending.closing) return false;
    this.replies.settle();
    this.history.addNotes();
    this.startTurn(performance.now(), '');
    return true;
  }

  /**
   * A call this process never saw start (a restart, a webhook landing on
   * another instance): no greeting, its past read from the transcript on disk
   * if there is one, and the event that brought it answered as usual.
   */
  adopt(session: Session, prior: Promise<PriorCall | undefined | 'ended'>): void {
    this.started = true;
    this.gate.prepare(this.opening.adopt(session, prior));
  }

  /** Ends the call: generation stops, nothing more is sent, the transcript is closed. */
  end(reason: string, origin: 'service' | 'hotline'): Promise<void> {
    if (!this.tearDown()) return Promise.resolve();
    // Whether the call is over for good, or Hotline let go of a call the service may still have.
    const open = this.record.leftOpen(origin);
    const endReason = this.record.endReasonOf(reason, origin);
    this.deps.transcript.append({ role: 'event', text: 'session_end', reason, origin, end_reason: endReason, ...(open ? { open: true } : {}) });
    this.log.info({ reason, turns: this.turns.count }, 'call ended');
    this.endTraces(reason);
    return this.deps.transcript.close();
  }

  /**
   * Another replica takes the call up from `quietRecord()` (this one is stopping): this one lets go
   * of it without a word to the caller, and its record stays the call's, in progress.
   */
  letGo(): Promise<void> {
    if (!this.tearDown()) return Promise.resolve();
    // Open whatever the record says, and no end reason: the call goes on at the other replica, and
    // should that one stop too, the service's next event adopts it from this transcript again.
    this.deps.transcript.append({ role: 'event', text: 'session_end', reason: 'handed_over', origin: 'hotline', open: true });
    this.log.info({ turns: this.turns.count }, 'call handed over to another replica');
    this.endTraces('handed_over');
    return this.deps.transcript.close();
  }

  /** The call turned out to have ended before (see CallRegistry): nothing of it is said or written. */
  drop(): void {
    if (!this.tearDown()) return;
    this.endTraces('ended_before');
    // Discarded, not closed: the transcript on disk already ends with that call's session_end, and a
    // line of this one's (it never began: its past was still being read) would reopen it. The
    // registry says why in its log.
    this.deps.transcript.discard();
  }

  /**
   * What ending the call, letting go of it and dropping it share: nothing of the call runs, waits or
   * listens any more — its turn, held speech, the caller's timers, a mailbox watch, a waiting hangup,
   * the events held back, the connections kept warm for it — its last reply is written as heard, and
   * the live view forgets it. False when the call was over already. Its transcript is each path's own.
   */
  private tearDown(): boolean {
    // The record is whole before anyone reads it: the registry asks for the summary next.
    this.recording.flush();
    if (this.ended) return false;
    if (this.turn) {
      this.turn.abort('ended');
      this.turn.reply.interrupted = true;
    }
    this.voice.drop();
    this.settleTurn();
    this.warmup.spent();
    this.input.dispose();
    this.voicemail?.dispose();
    this.replies.settle();
    this.ended = true;
    this.gate.clear();
    this.ending.dispose();
    this.activity.ended();
    return true;
  }

  /** The call's spans end with it, and those of speech still playing. */
  private endTraces(reason: string): void {
    this.voice.playback.endTraces();
    this.trace.end({ reason, callId: this.record.callId, turns: this.turns.count });
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
    const { line, ending } = leaving(reason, this.deps.transfer);
    this.speech.line(line, { final: true });
    this.ending.after(ending);
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
    this.speech.line('operatorTransfer', { final: true });
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
  protected get speechHeld(): boolean {
    return this.input.holdingBack || (this.voicemail?.judging ?? false);
  }

  /** The call as the business's record keeps it; asked once it has ended. */
  summary(reason: string, origin: 'service' | 'hotline'): CallSummary {
    return this.record.summary(reason, origin);
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
      this.speech.line('transferFailed');
      return;
    }
    this.started = true;
    this.expectTurn();
    const ready = this.opening.start(session);
    if (ready) this.gate.prepare(ready);
  }

  /** What was held back goes out after all, and a hangup or transfer waiting for it follows it. */
  protected resumeSpeech(): void {
    if (this.speechHeld) return;
    this.voice.deliver(this.awaitsCaller());
    if (!this.turn) this.speech.awaitPlayed();
    if (!this.ending.waiting) return;
    if (!this.voice.playback.pending) return this.ending.fire();
    this.ending.rewait();
  }

  /** Hotline stops talking at once: generation ends, and what plays is stopped where the service allows it. */
  protected stopTalking(): void {
    const playing = this.deps.canStopPlayback && this.voice.playback.interruptible;
    this.interrupt(true);
    if (playing) this.send({ type: 'barge_in', session_id: this.id });
  }

  /** What the caller said (or typed) starts a turn — unless a mailbox said it. */
  protected takeTurn(text: string, marks: InputMarks): void {
    const wordsAt = performance.now();
    const line = this.callerWords.said(text);
    this.activity.callerSaid(line.provisional);
    if (this.voicemail?.words(text)) return;
    this.answer(text, line, marks, wordsAt);
  }

  private answer(text: string, line: CallerLine, marks: InputMarks, wordsAt: number): void {
    this.replies.settle();
    this.callerWords.remember(text, line);
    // Before the turn is made: its request carries the system prompt of the language the caller speaks.
    this.language.heard(text);
    this.startTurn(wordsAt, line.provisional);
    // Words the model is judging (a mailbox?) are written with its verdict, marked if a mailbox said them.
    this.recording.add(() => this.callerWords.write(line, marks, this.voicemail?.judging ? (entry) => this.voicemail?.keep(entry) : undefined));
  }

  /** The caller is silent after Hotline said its piece: ask again, or after too many times say goodbye. */
  protected onSilence(step: SilenceStep, source: 'service' | 'hotline'): void {
    this.log.info({ source, step }, 'the caller is silent');
    this.deps.transcript.append({ role: 'event', text: 'user_input_timeout', source, step });
    if (step === 'reprompt') return this.speech.line('silenceReprompt');
    this.speech.line('silenceGoodbye', { final: true });
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
    this.speech.settleIfPlayed();
    this.turnForNotes();
  }

  /**
   * The caller spoke: stop generating, cancel a pending hangup or transfer,
   * and cut what was playing down to what the caller heard.
   */
  protected interrupt(bargedIn: boolean): void {
    if (this.turn) {
      this.turn.abort('superseded');
      this.turn.reply.interrupted = true;
      this.settleTurn();
    }
    this.ending.cancel('the caller spoke before it happened');
    // Sentences never delivered were never heard: the reply keeps them as undelivered.
    for (const reply of this.voice.interrupt(bargedIn)) reply.interrupted = true;
  }

  /** The caller may soon be answered (the call began, they started speaking, a line has played): see ConnectionWarmup. */
  private expectTurn(): void {
    if (!this.ended) this.warmup.expect();
  }

  private startTurn(wordsAt: number, callerText: string): void {
    this.warmup.spent();
    const turn = this.turns.make(callerText);
    this.input.silence.spoke();
    this.turn = turn;
    this.history.addReply(turn.reply);
    this.replies.track(turn.reply);
    this.turns.run(turn);
    this.recording.add(() => {
      this.deps.metrics.turnStarted();
      this.record.turn(turn.reply, wordsAt);
    });
  }

  /** The single gate every streamed chunk passes: a superseded turn can never speak. */
  protected speakFromTurn(turn: Turn, text: string, extra: SpeakExtra): void {
    if (this.ended || this.ending.hungUpAlready || turn !== this.turn || turn.aborted) return;
    this.speech.fromTurn(turn, text, extra);
  }

  /** True when what is delivered now ends what Hotline has to say: the caller's turn follows. */
  protected awaitsCaller(): boolean {
    return !this.turn && !this.ending.waiting && !this.ending.closing && !this.input.typing;
  }

  protected onTurnDone(turn: Turn, outcome: TurnOutcome): void {
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
    this.speech.awaitPlayed();
    if (this.turnForNotes()) return;
    // Speech held back (the model judging a mailbox, the caller starting to talk) is still to come.
    if (!(this.speechHeld && this.voice.holding)) this.sink.idle?.();
  }

  /** Forgets the finished turn; its reply stays in history and is written once it has played. */
  private settleTurn(): void {
    if (!this.turn) return;
    this.turn = undefined;
    this.speech.settleIfPlayed();
  }

  protected send(action: Action): void {
    if (this.ended) return;
    // Something happened in the call: an event that repeats the last one is no longer a redelivery.
    this.redelivery.reset();
    this.currentSink.send(action);
    this.activity.sent(action);
  }
}
