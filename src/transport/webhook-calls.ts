import type { Call } from '../call/call.js';
import type { ActionSink, SpeechPacing } from '../call/call-deps.js';
import type { CallRegistry } from '../call/call-registry.js';
import { stableStringify } from '../call/redelivery.js';
import type { Logger } from '../logger.js';
import type { Action } from '../protocol/actions.js';
import type { VoiceEvent } from '../protocol/events.js';

/**
 * The longest a request waits for the model before it is answered anyway: the
 * service gives up on a webhook answer after about 5 s, and an answer it gave up
 * on helps nobody.
 */
export const ANSWER_LIMIT_MS = 4000;

/** The most hold lines a caller hears over the webhook while one turn is slow; more would be noise. */
export const MAX_HOLD_LINES = 3;

/** Actions that never answer a waiting request alone: the caller is waiting for words, not for these. */
const BESIDE_WORDS: ReadonlySet<Action['type']> = new Set(['configure_transcription', 'send_sms']);

/** One webhook answer: an action, several (production service, opt-in), or none (204). */
type Answer = Action | Action[] | undefined;

/**
 * One call's actions on their way into webhook answers. The core sends
 * actions whenever they are ready; each request takes one — or, with arrays,
 * all that are ready — or waits when the call is still busy. Only one request
 * waits at a time: a newer one releases the older with "no action" (204).
 */
class WebhookOutbox implements ActionSink {
  private readonly queue: Action[] = [];
  /**
   * Without arrays an answer carries one action, and a configure_transcription taking the place of
   * a speak would hold the speak back until the service's next event: it waits here instead, for an
   * answer that would carry nothing. The latest replaces an earlier one (the service replaces its
   * settings whole).
   */
  private spare: Action | undefined;
  private waiter: ((answer: Answer) => void) | undefined;
  private drainWaiters: (() => void)[] = [];
  private batching = false;

  constructor(private readonly arrays: boolean) {}

  send(action: Action): void {
    if (!this.arrays && action.type === 'configure_transcription') {
      this.spare = action;
      return;
    }
    this.queue.push(action);
    // What goes beside words (the recogniser's settings, a text message) answers no waiting request
    // on its own: the caller waits for words, and it goes with them or after.
    if (!this.waiter || BESIDE_WORDS.has(action.type)) return;
    if (!this.arrays) return this.answerWaiter();
    // Actions sent together (a barge_in and the speak after it) go out in one answer.
    if (this.batching) return;
    this.batching = true;
    queueMicrotask(() => {
      this.batching = false;
      this.answerWaiter();
    });
  }

  idle(): void {
    this.release();
  }

  /**
   * What the next answer carries: the oldest action, or with arrays everything ready. Without arrays a
   * text message never takes the place of words: a speak (or clip) ready behind it goes first.
   */
  take(): Answer {
    const words = this.arrays || this.queue[0]?.type !== 'send_sms' ? -1 : this.queue.findIndex((a) => a.type === 'speak' || a.type === 'audio');
    const answer = this.arrays && this.queue.length > 1 ? this.queue.splice(0) : words > 0 ? this.queue.splice(words, 1)[0] : this.queue.shift();
    if (this.queue.length === 0) this.notifyDrained();
    return answer;
  }

  /** An answer that would carry nothing: what waited for one (see `spare`), if anything did. */
  takeSpare(): Answer {
    const spare = this.spare;
    this.spare = undefined;
    return spare;
  }

  /**
   * True when only a barge_in is ready, or what goes beside words (the recogniser's settings, a text
   * message): it waits for the speak it makes room for, or goes with the words the caller waits for
   * (a request answered with it alone would leave the caller in silence, the service sending nothing
   * more until they speak).
   */
  get onlyStopsPlayback(): boolean {
    return this.queue.length > 0 && this.queue.every((a) => a.type === 'barge_in' || BESIDE_WORDS.has(a.type));
  }

  /** Resolves once every queued action was taken by a request, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
      setTimeout(resolve, timeoutMs).unref();
    });
  }

  private notifyDrained(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Gives an answer back whose request went away before it could be written. */
  putBack(answer: Action | Action[]): void {
    this.queue.unshift(...(Array.isArray(answer) ? answer : [answer]));
  }

  wait(): Promise<Answer> {
    this.release();
    return new Promise<Answer>((resolve) => (this.waiter = resolve));
  }

  get waiting(): boolean {
    return this.waiter !== undefined;
  }

  get empty(): boolean {
    return this.queue.length === 0;
  }

  /** The request waiting (if any) gets what is ready, or "no action". */
  release(): void {
    if (this.batching) return;
    this.answerWaiter();
  }

  private answerWaiter(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(this.take() ?? this.takeSpare());
  }

  /** The call is over: nothing more will be taken. */
  close(): void {
    this.release();
    this.notifyDrained();
  }
}

export interface PendingAnswer {
  answer: Promise<Answer>;
  /**
   * Each request reports once whether it wrote the answer. An answer that no
   * copy of the event could write (the service gave up waiting) is kept for
   * the next request instead of being lost.
   */
  done(written: boolean): void;
}

/** One answer shared by an event and its retried copies. */
class SharedAnswer {
  private copies = 0;
  private written = false;
  /** No copy could write it: the action went back to the outbox, for the next request to take. */
  kept = false;

  constructor(
    readonly answer: Promise<Answer>,
    private readonly keep: (answer: Action | Action[]) => void,
    private readonly onWritten: () => void = () => undefined,
  ) {}

  copy(): PendingAnswer {
    this.copies++;
    let reported = false;
    return {
      answer: this.answer,
      done: (written) => {
        if (reported) return;
        reported = true;
        if (written && !this.written) {
          this.written = true;
          this.onWritten();
        }
        if (--this.copies > 0 || this.written) return;
        void this.answer.then((action) => {
          if (!action) return;
          this.kept = true;
          this.keep(action);
        });
      },
    };
  }
}

export interface WebhookCallsOptions {
  pacing: SpeechPacing;
  /** A request waiting this long for the model gets the hold line; 0 never. */
  holdMs: number;
  /** Answers may carry several actions (the production service runs them in order). */
  arrays: boolean;
}

/**
 * Maps webhook requests onto the one call core: each event is dispatched to
 * its call, and the request is answered with the action (or, opt-in, the
 * actions) it may carry.
 */
export class WebhookCalls {
  private readonly outboxes = new Map<string, WebhookOutbox>();
  /** Per session, the last request that started work, while its answer is unwritten: a retry of it shares it. */
  private readonly latest = new Map<string, { key: string; shared: SharedAnswer }>();

  constructor(
    private readonly registry: CallRegistry,
    private readonly options: WebhookCallsOptions,
    private readonly logger: Logger,
  ) {
    // Calls also end without a session_end (idle, shutdown): their outboxes go with them.
    registry.onCallEnded((id) => this.forget(id));
  }

  answer(event: VoiceEvent): PendingAnswer {
    const id = event.session.id;
    if (this.registry.isLate(event)) return settled(undefined).copy();
    const key = event.type === 'session_start' || event.type === 'user_speak' ? stableStringify(event) : undefined;
    const latest = this.latest.get(id);
    if (key !== undefined && latest?.key === key) {
      // The same request again, nothing else in between and its answer not yet written: a retry, not a
      // new turn. An answer no copy could write went back to the outbox; the retry takes it from there.
      if (!latest.shared.kept) return latest.shared.copy();
      const box = this.outboxes.get(id);
      const again = this.shared(id, key, box ? box.take() : undefined, box);
      this.latest.set(id, { key, shared: again });
      return again.copy();
    }
    const shared = this.answerFresh(event, key);
    if (key !== undefined) this.latest.set(id, { key, shared });
    else this.latest.delete(id);
    return shared.copy();
  }

  /** An answer for an event that starts work; once written, a same-looking request is a new event. */
  private shared(id: string, key: string | undefined, value: Answer | Promise<Answer>, box: WebhookOutbox | undefined): SharedAnswer {
    return new SharedAnswer(
      Promise.resolve(value),
      (action) => box?.putBack(action),
      () => {
        if (key !== undefined && this.latest.get(id)?.key === key) this.latest.delete(id);
      },
    );
  }

  private answerFresh(event: VoiceEvent, key: string | undefined): SharedAnswer {
    const id = event.session.id;
    if (event.type === 'session_end' && !this.outboxes.has(id)) {
      // A call this process never had: the registry ends its record if it is elsewhere (handed over, or its replica killed).
      this.registry.dispatch(event, new WebhookOutbox(this.options.arrays), { pacing: this.options.pacing, canStopPlayback: this.options.arrays });
      return settled(undefined);
    }
    const box = this.outboxes.get(id) ?? new WebhookOutbox(this.options.arrays);
    const known = this.outboxes.has(id);
    this.outboxes.set(id, box);
    const { pacing, arrays } = this.options;
    // A webhook answer can only carry a barge_in together with the speak that follows it.
    const call = this.registry.dispatch(event, box, { pacing, canStopPlayback: arrays });
    if (!call) {
      if (!known) this.outboxes.delete(id);
      this.logger.debug({ sessionId: id, type: event.type }, 'webhook event refused by the registry');
      return settled(undefined);
    }
    const answer = (value: Answer | Promise<Answer>): SharedAnswer => this.shared(id, key, value, box);

    switch (event.type) {
      case 'session_end':
        // The registry has ended the call; its listener forgot the outbox.
        return settled(undefined);
      case 'session_start':
        // The greeting may wait for the caller's record (at most its time limit).
        return answer(call.busy ? this.answerOrWait(event, call, box) : box.take());
      case 'assistant_speak':
        return answer(box.take() ?? box.takeSpare());
      case 'user_speech_started':
      case 'sms_failed':
        // Answers to these are ignored by the service; whatever is ready waits for the next event.
        return answer(undefined);
      case 'user_speak':
      case 'user_barge_in':
      case 'dtmf_received':
      case 'user_input_timeout':
      case 'assistant_speech_ended':
        return answer(this.answerOrWait(event, call, box));
    }
  }

  /** What is ready now; or, while the call is busy, the next action — with the hold line should the model be slow. */
  private answerOrWait(event: VoiceEvent, call: Call, box: WebhookOutbox): Answer | Promise<Answer> {
    const callerTurn = event.type !== 'assistant_speech_ended';
    // A lone barge_in waits for the speak it makes room for, unless nothing more is coming.
    if (!call.busy || !box.onlyStopsPlayback) {
      const ready = box.take();
      if (ready || !call.busy) {
        // An older request still waiting gets its 204 now: this one carries the answer.
        if (callerTurn) box.release();
        return ready ?? box.takeSpare();
      }
    }
    const waited = box.wait();
    if (this.options.holdMs > 0) this.holdWhileWaiting(call, box, waited);
    return waited;
  }

  /**
   * The service gives up on an answer after about 5 s (its documentation asks
   * for about one). A request still waiting for the model after holdMs is
   * answered with the hold line, and the reply follows on the next event
   * (assistant_speech_ended once the line has played) — the hold pattern the
   * provider's own app uses. A request after a hold line waits longer before
   * the next one (another line: "still working on it"), and after
   * MAX_HOLD_LINES in one turn no more are said: the request waits out its
   * time and gets 204, the reply going out with the next event.
   */
  private holdWhileWaiting(call: Call, box: WebhookOutbox, waited: Promise<Answer>): void {
    let answered = false;
    void waited.finally(() => (answered = true));
    const { holdMs } = this.options;
    const limitMs = Math.max(holdMs, ANSWER_LIMIT_MS);
    const since = performance.now();
    const check = (): void => {
      if (answered || !box.waiting) return;
      if (call.holdsInTurn < MAX_HOLD_LINES && call.holdOn()) return;
      const left = limitMs - (performance.now() - since);
      // Keys still being typed, or the hold lines used up: the request waits as long as the service lets it.
      if (call.busy && left > 0) return void setTimeout(check, Math.min(holdMs, left)).unref();
      box.release();
    };
    // The first line of a turn after holdMs; once the caller has heard one, the next only near the time limit.
    setTimeout(check, call.holdsInTurn === 0 ? holdMs : limitMs).unref();
  }

  /** The webhook calls in progress here, by session id. */
  sessions(): string[] {
    return [...this.outboxes.keys()];
  }

  /** True when nothing of the call waits to be answered: no action queued, no request waiting, no answer unwritten. */
  idle(id: string): boolean {
    const box = this.outboxes.get(id);
    return box !== undefined && box.empty && !box.waiting && !this.latest.has(id);
  }

  private forget(id: string): void {
    this.outboxes.get(id)?.close();
    this.outboxes.delete(id);
    this.latest.delete(id);
  }
}

function settled(answer: Answer): SharedAnswer {
  return new SharedAnswer(Promise.resolve(answer), () => undefined);
}
