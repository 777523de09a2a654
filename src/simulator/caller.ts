import { ActionSchema } from '../protocol/actions.js';
import { describeIssues } from '../protocol/parse-event.js';
import type { ReceivedAction } from '../testing/voice-service-client.js';
import type { CallRecord } from './call-record.js';
import { formatAction, formatSentEvent, formatWarning } from './output.js';
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
}

/** How the call ended; `reason` is what session_end said, `lost` when there was nobody left to tell. */
export type CallEnd =
  | { reason: 'hangup' | 'transferred' | 'caller_hangup' }
  | { reason: 'lost'; detail: string };

export type AnswerOutcome = 'answered' | 'over' | 'timeout';

/** Hotline counts as done answering once nothing has happened for this long (scaled by --speed). */
const QUIET_MS = 300;
const MIN_QUIET_MS = 50;
/** Upper bound of the wait for a further sentence after the last action (see waitForAnswer). */
const MAX_SENTENCE_GAP_MS = 5000;

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

  constructor(
    private readonly transport: Transport,
    private readonly options: CallerOptions,
  ) {
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.quietMs = Math.max(MIN_QUIET_MS, QUIET_MS / options.speed);
    this.playback = new SpeechPlayback({
      wpm: options.wpm,
      speed: options.speed,
      started: (text, durationMs) =>
        this.send({ type: 'assistant_speak', text, duration_ms: durationMs, speech_started_at: Date.now() }),
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

  /** The caller says a line; returns whether it barged in on Hotline's speech. */
  say(text: string): boolean {
    if (this.end) return false;
    const bargedIn = this.playback.stop();
    this.spokeAt = performance.now();
    this.answerFrom = this.actionCount;
    this.send({ type: 'user_speak', text, barged_in: bargedIn });
    return bargedIn;
  }

  /** The caller hangs up. */
  hangUp(): Promise<CallEnd> {
    return this.finish({ reason: 'caller_hangup' }, true);
  }

  /**
   * Resolves once Hotline has answered the caller's last words: at least one
   * action came, every speech has played, no webhook request is still open,
   * and nothing happened for a short quiet time. Or the call ended, or the
   * time ran out.
   *
   * The LLM is not sped up by --speed: a sped-up playback can run dry while
   * the next sentence is still being written. So after the last action the
   * wait is also at least as long as the first action of this answer took,
   * which is about as long as a sentence takes Hotline to write.
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
        const sentenceGap = Math.min(this.answerLatency, MAX_SENTENCE_GAP_MS);
        const wait = Math.max(this.quietMs, this.lastActionAt + sentenceGap - performance.now());
        quiet = setTimeout(() => done('answered'), wait);
      };
      const limit = setTimeout(() => done('timeout'), timeoutMs);
      this.watchers.add(check);
      check();
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
    if (action.type === 'speak' && typeof action.text === 'string') this.playback.enqueue(action.text);
    else if (action.type === 'hangup') void this.finish({ reason: 'hangup' }, true);
    else if (action.type === 'transfer') void this.finish({ reason: 'transferred' }, true);
    this.changed();
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
