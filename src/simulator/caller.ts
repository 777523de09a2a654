import { setTimeout as sleep } from 'node:timers/promises';
import { ActionSchema, BargeInSchema, type BargeIn } from '../protocol/actions.js';
import { describeIssues } from '../protocol/parse-event.js';
import type { ReceivedAction } from '../testing/voice-service-client.js';
import { clipDurationMs, spokenText } from './action-summary.js';
import type { CallRecord } from './call-record.js';
import { formatAction, formatSentEvent, formatSmsFailed, formatWarning } from './output.js';
import { SpeechPlayback } from './speech-playback.js';
import { ConnectionRefusedError, type ServiceEvent, type Transport } from './transports.js';

export interface CallerOptions {
  sessionId: string;
  wpm: number;
  speed: number;
  output: (line: string) => void;
  record: CallRecord;
  /** Print every event sent, too. */
  verbose: boolean;
  /** Told the words of each of Hotline's speeches as it starts playing: what the person called hears. */
  heard?: ((text: string) => void) | undefined;
  /** Told when the caller cuts a speech off: its words, and how many of them had been heard. */
  cut?: ((text: string, wordsHeard: number) => void) | undefined;
  /** Every send_sms fails: the service answers it with sms_failed (--sms-fails). */
  smsFails?: boolean | undefined;
}

/** How the call ended; `reason` is what session_end said, `lost` when there was nobody left to tell. */
export type CallEnd =
  | { reason: 'hangup' | 'transferred' | 'caller_hangup' }
  | { reason: 'lost'; detail: string };

export type AnswerOutcome = 'answered' | 'over' | 'timeout';

/** What the caller's words did to the playback: cut it off, or not (and why not, when its barge_in forbade it). */
export interface SayOutcome {
  bargedIn: boolean;
  heldBecause?: string;
}

/** Hotline counts as done answering once nothing has happened for this long (scaled by --speed). */
const QUIET_MS = 300;
const MIN_QUIET_MS = 50;
/** Upper bound of the wait for a further sentence after the last action (see waitForAnswer). */
const MAX_SENTENCE_GAP_MS = 5000;
/** From one key to the next: a person typing a number (scaled by --speed, but never below the minimum). */
const KEY_INTERVAL_MS = 150;
const MIN_KEY_INTERVAL_MS = 15;

/**
 * One call, played from the voice service's side: sends the caller's words,
 * plays Hotline's speech and reports it back, prints each action with the
 * time since the caller finished speaking, and ends the call when either side
 * hangs up.
 */
export class Caller {
  readonly ended: Promise<CallEnd>;
  private resolveEnded!: (end: CallEnd) => void;
  private readonly endController = new AbortController();
  private end: CallEnd | undefined;
  private readonly playback: SpeechPlayback;
  /** When the caller last finished speaking (session_start for the greeting). */
  private spokeAt = performance.now();
  private actionCount = 0;
  /** actionCount when the caller last spoke: later actions are the answer. */
  private answerFrom = 0;
  private lastActionAt = 0;
  /** How long the first action of the current answer took to come. */
  private answerLatency = 0;
  private readonly watchers = new Set<() => void>();
  private readonly quietMs: number;
  /** Whether the latest speak carried user_input_timeout_seconds: the service reports silence only then. */
  private silenceAskedFor = false;
  /**
   * Whether Hotline marks the end of its turns in this call: it asks for the caller's silence to be
   * reported (user_input_timeout_seconds) on the speak that ends what it has to say, and only there.
   */
  private marksTurnEnds = false;
  /** Whether the current answer's latest speak was such an end. */
  private turnEnded = false;

  constructor(
    private readonly transport: Transport,
    private readonly options: CallerOptions,
  ) {
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.quietMs = Math.max(MIN_QUIET_MS, QUIET_MS / options.speed);
    this.playback = new SpeechPlayback({
      wpm: options.wpm,
      speed: options.speed,
      // The service reports a clip's playback without text.
      started: (item, durationMs) => {
        this.send({
          type: 'assistant_speak',
          ...(item.kind === 'speech' ? { text: item.text } : {}),
          duration_ms: durationMs,
          speech_started_at: Date.now(),
        });
        if (item.kind === 'speech') options.heard?.(item.text);
      },
      ended: () => {
        this.send({ type: 'assistant_speech_ended' });
        this.changed();
      },
      idle: () => this.changed(),
    });
    transport.listen({
      action: (action) => this.onAction(action),
      lost: (detail) => void this.finish({ reason: 'lost', detail }, false),
      warning: (message) => this.options.output(formatWarning(message)),
    });
  }

  get isOver(): boolean {
    return this.end !== undefined;
  }

  /** Aborts when the call is over, to stop waiting for the caller's next line. */
  get overSignal(): AbortSignal {
    return this.endController.signal;
  }

  /** True while Hotline's speech plays: a line said now is a barge-in. */
  get speaking(): boolean {
    return this.playback.speaking;
  }

  /** Sends session_start; rejects with ConnectionRefusedError when Hotline refuses the call (webhook). */
  async start(session: Record<string, unknown>): Promise<void> {
    this.spokeAt = performance.now();
    this.answerFrom = this.actionCount;
    await this.deliver({ type: 'session_start', session: { id: this.options.sessionId, ...session } });
  }

  /** The caller says a line: it cuts Hotline's speech off unless that speech's barge_in forbids it. */
  say(text: string): SayOutcome {
    if (this.end) return { bargedIn: false };
    const heldBecause = this.playback.refusesBargeIn(text);
    const playing = this.playback.playedWords();
    const bargedIn = heldBecause === undefined && this.playback.stop();
    if (bargedIn && playing) this.options.cut?.(playing.text, playing.words);
    this.expectAnswer();
    this.send({ type: 'user_speak', text, barged_in: bargedIn });
    return heldBecause === undefined ? { bargedIn } : { bargedIn, heldBecause };
  }

  /**
   * The caller presses keys, at a person's pace: one dtmf_received per key.
   * Not one at once: over the webhook each key is a request of its own, which
   * Hotline may hold open until the entry is complete, and requests sent
   * together could arrive in any order. Resolves once the last key is sent.
   */
  async pressKeys(keys: string): Promise<void> {
    this.expectAnswer();
    const interval = Math.max(MIN_KEY_INTERVAL_MS, KEY_INTERVAL_MS / this.options.speed);
    for (const [index, digit] of [...keys].entries()) {
      if (index > 0) await sleep(interval);
      if (this.end) return;
      // Timings count from the key pressed last.
      this.spokeAt = performance.now();
      this.send({ type: 'dtmf_received', digit });
    }
  }

  /**
   * The caller stays silent: user_input_timeout, once the playback has ended,
   * as the service sends it. Resolves when it is sent; `asked` is whether the
   * latest speak asked for it at all (the service would not send it otherwise).
   */
  async staySilent(): Promise<{ asked: boolean }> {
    await this.playbackOver();
    const asked = this.silenceAskedFor;
    if (this.end) return { asked };
    this.expectAnswer();
    this.send({ type: 'user_input_timeout' });
    return { asked };
  }

  /**
   * The service's older interruption, user_barge_in: the playback stops
   * whatever its barge_in says (the service has decided). With words, Hotline
   * answers them; without, the words follow as a user_speak, if at all.
   * Returns whether anything was playing.
   */
  bargeIn(text?: string): boolean {
    if (this.end) return false;
    const playing = this.playback.playedWords();
    const stopped = this.playback.stop();
    if (playing) this.options.cut?.(playing.text, playing.words);
    if (text !== undefined) this.expectAnswer();
    this.send({ type: 'user_barge_in', ...(text === undefined ? {} : { text }) });
    this.changed();
    return stopped;
  }

  /** The caller hangs up. */
  hangUp(): Promise<CallEnd> {
    return this.finish({ reason: 'caller_hangup' }, true);
  }

  /** True while Hotline, which marks the end of its turns, has answered but not yet ended its turn (a tool still runs). */
  get answerUnfinished(): boolean {
    return this.marksTurnEnds && !this.turnEnded && this.actionCount > this.answerFrom;
  }

  /**
   * Resolves once Hotline has answered the caller's last words: at least one
   * action came, every speech has played, no webhook request is still open,
   * and nothing happened for a short quiet time. Or the call ended, or the
   * time ran out.
   *
   * When Hotline marks the end of its turns (silence handling on, the
   * default), the answer is over only once the speak that ends the turn has
   * played: a hold line while a business tool runs, or while a model thinks,
   * ends nothing, however long the tool takes — and Hotline always gets
   * there, since when its last sentence left unmarked it times the caller's
   * silence itself and re-prompts with a marked speak.
   *
   * Otherwise the end is guessed from the pauses. The LLM is not sped up by
   * --speed: a sped-up playback can run dry while the next sentence is still
   * being written. So after the last action the wait is also at least as long
   * as the first action of this answer took, which is about as long as a
   * sentence takes Hotline to write.
   */
  waitForAnswer(timeoutMs: number): Promise<AnswerOutcome> {
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const done = (outcome: AnswerOutcome) => {
        clearTimeout(quiet);
        clearTimeout(limit);
        this.watchers.delete(check);
        resolve(outcome);
      };
      const check = () => {
        clearTimeout(quiet);
        if (this.end) return done('over');
        const answered = this.actionCount > this.answerFrom && !this.playback.speaking && this.transport.inFlight === 0;
        if (!answered) return;
        if (this.marksTurnEnds) {
          if (this.turnEnded) quiet = setTimeout(() => done('answered'), this.quietMs);
          return;
        }
        const sentenceGap = Math.min(this.answerLatency, MAX_SENTENCE_GAP_MS);
        const wait = Math.max(this.quietMs, this.lastActionAt + sentenceGap - performance.now());
        quiet = setTimeout(() => done('answered'), wait);
      };
      const limit = setTimeout(() => done('timeout'), timeoutMs);
      this.watchers.add(check);
      check();
    });
  }

  /** What comes from now on answers the caller's latest input; its timings count from now. */
  private expectAnswer(): void {
    this.spokeAt = performance.now();
    this.answerFrom = this.actionCount;
    this.turnEnded = false;
  }

  /** Resolves once nothing plays any more (or the call is over). */
  private async playbackOver(): Promise<void> {
    // Looked at again after each change has run its course: between the barge_in and the speak
    // of one array, nothing plays for an instant.
    while (this.playback.speaking && !this.end) await this.nextChange();
  }

  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      const once = () => {
        this.watchers.delete(once);
        resolve();
      };
      this.watchers.add(once);
    });
  }

  private onAction(action: ReceivedAction): void {
    if (this.end) return;
    this.actionCount++;
    const { receivedAt, ...fields } = action;
    const ms = receivedAt - this.spokeAt;
    if (this.actionCount === this.answerFrom + 1) this.answerLatency = ms;
    this.lastActionAt = receivedAt;
    this.options.record.action(fields, receivedAt, ms);
    this.options.output(formatAction(fields, ms));
    const checked = ActionSchema.safeParse(fields);
    if (!checked.success) this.options.output(formatWarning(`this action does not match the spec: ${describeIssues(checked.error)}`));
    if (fields.session_id !== this.options.sessionId) {
      this.options.output(formatWarning(`this action is for session "${fields.session_id}", not this call's "${this.options.sessionId}"`));
    }
    this.play(fields);
    this.changed();
  }

  /** What the service does with an action; actions of an array come here one by one, in order. */
  private play(action: { type: string; [field: string]: unknown }): void {
    switch (action.type) {
      case 'speak': {
        this.silenceAskedFor = typeof action.user_input_timeout_seconds === 'number';
        // Read before the speech is queued: its end is looked at once it has played.
        this.turnEnded = this.silenceAskedFor;
        if (this.silenceAskedFor) this.marksTurnEnds = true;
        const text = spokenText(action);
        if (text !== '') this.playback.enqueue({ kind: 'speech', text, bargeIn: bargeInOf(action) });
        return;
      }
      case 'audio':
        // A clip (the hold music after a hold line) ends no turn.
        this.turnEnded = false;
        if (typeof action.audio === 'string') {
          this.playback.enqueue({ kind: 'clip', ms: clipDurationMs(action.audio), bargeIn: bargeInOf(action) });
        }
        return;
      case 'barge_in':
        // Hotline stops its own playback; like any cut speech, it never reports its end.
        this.playback.stop();
        return;
      case 'hangup':
        void this.finish({ reason: 'hangup' }, true);
        return;
      case 'transfer':
        void this.finish({ reason: 'transferred' }, true);
        return;
      case 'send_sms':
        // Shown as it came; a service told to fail text messages says so, as the production service does.
        if (!this.options.smsFails) return;
        this.options.output(formatSmsFailed());
        this.send({ type: 'sms_failed', phone_number: action.phone_number, error: 'the emulated service fails every text message (--sms-fails)' });
        return;
    }
  }

  /** Ends the call once, whoever ends it; tells Hotline unless the connection is already gone. */
  private async finish(end: CallEnd, tellHotline: boolean): Promise<CallEnd> {
    if (this.end) return this.ended;
    this.end = end;
    this.playback.stop();
    this.endController.abort();
    this.changed();
    if (tellHotline && end.reason !== 'lost') {
      await this.deliver(this.event({ type: 'session_end', reason: end.reason })).catch(() => undefined);
    }
    await this.transport.close().catch(() => undefined);
    this.resolveEnded(end);
    return end;
  }

  private event(fields: { type: string; [field: string]: unknown }): ServiceEvent {
    return { ...fields, session: { id: this.options.sessionId } };
  }

  private send(fields: { type: string; [field: string]: unknown }): void {
    if (this.end) return;
    this.deliver(this.event(fields)).catch((error: unknown) => {
      if (error instanceof ConnectionRefusedError && error.status === undefined) {
        void this.finish({ reason: 'lost', detail: error.message }, false);
      } else {
        this.options.output(formatWarning(error instanceof Error ? error.message : String(error)));
      }
    });
  }

  private async deliver(event: ServiceEvent): Promise<void> {
    this.options.record.event(event);
    if (this.options.verbose) this.options.output(formatSentEvent(event));
    try {
      await this.transport.send(event);
    } finally {
      // A webhook answer has come (or failed): one fewer request that could still carry an action.
      this.changed();
    }
  }

  private changed(): void {
    for (const watch of [...this.watchers]) watch();
  }
}

/** An action's barge_in, if it is one the service would understand; otherwise the service's default applies. */
function bargeInOf(action: { [field: string]: unknown }): BargeIn | undefined {
  const parsed = BargeInSchema.safeParse(action.barge_in);
  return parsed.success ? parsed.data : undefined;
}
