/**
 * The parts one call is made of — its prompts, record, history, voice, the caller's input, the
 * ending, its tools and turns — built and connected, each given what it needs of the others and
 * of the conversation. Apart from call.ts so that the call reads as its state machine (events in,
 * turns, speech, endings) and not as the wiring of twenty objects; the call extends this, and the
 * abstract members below are what the parts ask of it.
 */
import type { Logger } from '../logger.js';
import type { Action } from '../protocol/actions.js';
import type { SessionEndEvent, VoiceEvent } from '../protocol/events.js';
import { AfterRequest } from './after-request.js';
import type { ActionSink, CallDeps } from './call-deps.js';
import { CallLanguage } from './call-language.js';
import { CallOpening } from './call-opening.js';
import { CallPrompts } from './call-prompts.js';
import { CallRecord } from './call-record.js';
import { CallerWords } from './caller-words.js';
import { CallerTexts } from './caller-texts.js';
import { CallEnding } from './ending/call-ending.js';
import { EventGate } from './event-gate.js';
import { History } from './history.js';
import { CallerInput, type CallerInputHost, type InputMarks } from './input/caller-input.js';
import type { SilenceStep } from './input/silence.js';
import { VoicemailWatch, type VoicemailWatchHost } from './input/voicemail-watch.js';
import { CallActivityTracker } from './ports/call-activity.js';
import { eachOnItsOwn, keepWords } from './ports/redaction.js';
import { NO_CALL_TRACE, type CallTrace } from './ports/tracing.js';
import { RecordProgress } from './record-progress.js';
import { RedeliveryFilter } from './redelivery.js';
import { CallSpeech } from './speech/call-speech.js';
import { ReplyLog } from './speech/reply-log.js';
import { Voice, type TraceSpeak } from './speech/voice.js';
import { CallTools } from './turn/call-tools.js';
import { CallTurns } from './turn/call-turns.js';
import type { SpeakExtra, Turn, TurnOutcome } from './turn/turn.js';
import { TurnConsequences } from './turn/turn-consequences.js';
import { ConnectionWarmup } from './turn/warm-up.js';

/** Every event but session_end, which ends the call instead. */
export type CallEvent = Exclude<VoiceEvent, SessionEndEvent>;

export abstract class CallParts {
  readonly id: string;
  protected readonly log: Logger;
  protected readonly history: History;
  protected readonly voice: Voice;
  protected readonly redelivery = new RedeliveryFilter();
  protected readonly replies: ReplyLog;
  protected readonly record: CallRecord;
  protected readonly callerWords: CallerWords;
  /** What is held until the turn's request is on the wire. */
  protected readonly recording: AfterRequest;
  protected readonly ending: CallEnding;
  /** A failed turn's apology or giving up, and the model's hangup or transfer. */
  protected readonly consequences: TurnConsequences;
  protected readonly prompts: CallPrompts;
  /** Words, keys, voice activity and silence: what each means for the call. */
  protected readonly input: CallerInput;
  /** The business tools the model calls: offered, run, held for, and each change made once. */
  protected readonly tools: CallTools;
  /** The phase and latest words, for whoever shows calls live. */
  protected readonly activity: CallActivityTracker;
  /** Events wait here while the call gets ready (an adopted call's past, the caller's record). */
  protected readonly gate: EventGate<CallEvent>;
  /** The call's spans (the no-op when calls are not traced). */
  protected readonly trace: CallTrace;
  /** Lines and a turn's sentences said, and each reply written once it has played. */
  protected readonly speech: CallSpeech;
  protected readonly turns: CallTurns;
  /** Who is on the line, the greeting, or an adopted call's past. */
  protected readonly opening: CallOpening;
  /** The connections the next turn needs, opened ahead of it. */
  protected readonly warmup: ConnectionWarmup;
  /** Which language the call is in, and the switch when the caller speaks another. */
  protected readonly language: CallLanguage;
  /** Text messages to the person on the line, and the service's word that one failed. */
  protected readonly texts: CallerTexts;

  /** The turn generating now. */
  protected turn: Turn | undefined;
  protected ended = false;
  /** Listens for a mailbox on an outbound call, until a person has spoken. */
  protected voicemail: VoicemailWatch | undefined;

  constructor(
    id: string,
    protected readonly deps: CallDeps,
  ) {
    this.id = id;
    this.log = deps.logger;
    const { log } = this;
    const redact = deps.redact ?? keepWords;
    this.trace = deps.trace ?? NO_CALL_TRACE;
    this.recording = new AfterRequest(log);
    const history = (this.history = new History(deps.settings.historyMaxChars, log, redact));
    this.callerWords = new CallerWords(deps.callerLines ?? eachOnItsOwn(redact)(), history, deps.transcript, log, deps.redactFromModel ?? false);
    const replies = (this.replies = new ReplyLog(deps.transcript));
    const progress = new RecordProgress(deps.progress, () => record.soFar(), () => this.ended);
    const record = (this.record = new CallRecord(id, deps.transcript, () => progress.changed(), () => history.heard(), deps.recordEachReply ?? false, redact));
    // Ready, and the events that waited started nothing (an adopted call's assistant_speech_ended):
    // a request waiting for an answer gets "nothing to say" now, not after the hold line's wait.
    this.gate = new EventGate((event) => this.handle(event), log, () => {
      if (!this.ended && !this.busy) this.sink.idle?.();
    });
    const activity = (this.activity = new CallActivityTracker(deps.activity, {
      generating: () => this.turn !== undefined,
      speaking: () => this.voice.playback.pending,
    }));
    const prompts = (this.prompts = new CallPrompts(deps.prompts, deps.settings.timeZone, log));
    this.input = new CallerInput(this.inputHost(), deps.prompts.settings);
    const send = (action: Action): void => this.send(action);
    const language = (this.language = new CallLanguage({
      sessionId: id,
      log,
      prompts,
      record,
      transcript: deps.transcript,
      trace: this.trace,
      detector: deps.languageDetector,
      perCall: deps.settings.perCallLanguages ?? true,
      configure: deps.settings.configureTranscription ?? true,
      send,
    }));
    // Untraced, the voice is given nothing: its speaks then cost no look-up of their turn.
    const traceSpeak: TraceSpeak | undefined = this.trace.recording ? (chunks, start) => this.turns.speechParentOf(chunks).speak(start) : undefined;
    const voice = (this.voice = new Voice(id, this.input.silence, send, () => this.speechHeld, traceSpeak, () => ({
      pronouncer: prompts.current.pronouncer,
      ssml: prompts.settings.ssml,
    })));
    const { metrics, pacing, transcript } = deps;
    const { playbackGraceMs } = deps.settings;
    const speech = (this.speech = new CallSpeech({
      voice,
      prompts,
      history,
      replies,
      record,
      metrics,
      pacing,
      playbackGraceMs,
      awaitsCaller: () => this.awaitsCaller(),
      held: () => this.speechHeld,
      generating: () => this.turn !== undefined,
    }));
    this.opening = new CallOpening({
      id,
      log,
      deps,
      prompts,
      record,
      activity,
      history,
      speech,
      language,
      ended: () => this.ended,
      watchForMailbox: ({ detector, timing }) => (this.voicemail = new VoicemailWatch(detector, this.mailboxHost(), timing)),
    });
    this.ending = new CallEnding({
      log,
      sessionId: id,
      voice,
      ended: () => this.ended,
      heldBack: () => this.speechHeld,
      stopInput: () => this.input.stop(),
      transferClip: () => prompts.audio('transfer'),
      parties: () => this.opening.parties,
      playbackGraceMs,
      send,
      settleReply: () => replies.settle(),
      recordEnding: (ending) => (ending ? record.endingSent(ending.type, ending.cause) : record.endingUndone()),
    });
    this.consequences = new TurnConsequences({
      log,
      metrics,
      transfer: deps.transfer,
      maxFailures: deps.settings.llmMaxFailures,
      speakLine: (name, options) => speech.line(name, options),
      endAfter: (ending, toolCall) => this.ending.after(ending, toolCall),
    });
    const timing = { holdMs: deps.settings.toolHoldMs, repeatMs: deps.settings.toolHoldRepeatMs };
    const max = deps.settings.smsMaxPerCall ?? 0;
    const texts = (this.texts = new CallerTexts({ sessionId: id, max, log, transcript, redact, party: () => this.opening.parties.party, ended: () => this.ended, send }));
    const tools = (this.tools = new CallTools({ log, toolBox: deps.toolBox, prompts, voice, transcript, record, metrics, activity, timing, texts }));
    this.warmup = new ConnectionWarmup(this, deps.llm, deps.businessConnections, () => tools.offered());
    this.turns = new CallTurns({
      log,
      deps,
      prompts,
      tools,
      record,
      trace: this.trace,
      messages: () => history.messages(prompts.system.text),
      current: () => this.turn,
      speak: (turn, text, extra) => this.speakFromTurn(turn, text, extra),
      done: (turn, outcome) => this.onTurnDone(turn, outcome),
    });
  }

  /** Handles every event but session_end, which ends the call through end(). */
  abstract handle(event: CallEvent): void;
  /** True while an answer is on its way: nothing to tell a waiting request yet. */
  abstract get busy(): boolean;
  /** The connection the call's actions go to. */
  abstract get sink(): ActionSink;
  /** Nothing new is said: the caller has started to talk, or the model judges a mailbox. */
  protected abstract get speechHeld(): boolean;
  /** True when what is delivered now ends what Hotline has to say: the caller's turn follows. */
  protected abstract awaitsCaller(): boolean;
  protected abstract send(action: Action): void;
  /** The caller spoke: generation stops, a waiting ending is called off, what played is cut. */
  protected abstract interrupt(bargedIn: boolean): void;
  /** Hotline stops talking at once, playback too where the service allows it. */
  protected abstract stopTalking(): void;
  /** What the caller said (or typed) starts a turn — unless a mailbox said it. */
  protected abstract takeTurn(text: string, marks: InputMarks): void;
  /** What was held back goes out after all. */
  protected abstract resumeSpeech(): void;
  protected abstract onSilence(step: SilenceStep, source: 'service' | 'hotline'): void;
  /** The single gate every streamed chunk passes. */
  protected abstract speakFromTurn(turn: Turn, text: string, extra: SpeakExtra): void;
  protected abstract onTurnDone(turn: Turn, outcome: TurnOutcome): void;

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

  /** What a mailbox watch needs of the call (see VoicemailWatch). */
  private mailboxHost(): VoicemailWatchHost {
    return {
      log: this.log,
      hush: () => this.stopTalking(),
      leaveMessage: () => {
        if (this.ended || this.ending.closing) return;
        this.speech.line('outboundVoicemail', { final: true });
        this.ending.after({ type: 'hangup', cause: 'voicemail' });
      },
      released: () => {
        if (this.ended) return;
        // Streamed, each sentence would have gone out on its own the moment it was complete: so it does now.
        if (this.deps.pacing === 'stream') this.voice.deliverEachButLast();
        this.resumeSpeech();
      },
      note: (entry) => this.deps.transcript.append(entry),
    };
  }
}
