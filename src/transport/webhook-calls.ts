import type { ActionSink, SpeechPacing } from '../call/call.js';
import type { CallRegistry } from '../call/call-registry.js';
import { stableStringify } from '../call/duplicate-filter.js';
import type { Logger } from '../logger.js';
import type { Action } from '../protocol/actions.js';
import type { VoiceEvent } from '../protocol/events.js';

type Answer = Action | undefined;

/**
 * One call's actions on their way into webhook answers. The core sends
 * actions whenever they are ready; each request takes one, or waits for one
 * when the call is still generating. Only one request waits at a time: a
 * newer one releases the older with "no action" (204).
 */
class WebhookOutbox implements ActionSink {
  private readonly queue: Action[] = [];
  private waiter: ((answer: Answer) => void) | undefined;

  send(action: Action): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter(action);
    } else {
      this.queue.push(action);
    }
  }

  idle(): void {
    this.release();
  }

  take(): Answer {
    return this.queue.shift();
  }

  /** Gives an answer back whose request went away before it could be written. */
  putBack(action: Action): void {
    this.queue.unshift(action);
  }

  wait(): Promise<Answer> {
    this.release();
    return new Promise<Answer>((resolve) => (this.waiter = resolve));
  }

  /** The request waiting (if any) gets "no action". */
  release(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(undefined);
  }
}

/** How long a retried identical event shares the first copy's answer. */
const RETRY_WINDOW_MS = 2000;
/** Ended session ids remembered, so late events of a finished call are answered 204. */
const ENDED_REMEMBERED = 10_000;

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

  constructor(
    readonly answer: Promise<Answer>,
    private readonly keep: (action: Action) => void,
  ) {}

  copy(): PendingAnswer {
    this.copies++;
    let reported = false;
    return {
      answer: this.answer,
      done: (written) => {
        if (reported) return;
        reported = true;
        this.written ||= written;
        if (--this.copies > 0 || this.written) return;
        void this.answer.then((action) => action && this.keep(action));
      },
    };
  }
}

/**
 * Maps webhook requests onto the one call core: each event is dispatched to
 * its call, and the request is answered with the action the spec allows.
 */
export class WebhookCalls {
  private readonly outboxes = new Map<string, WebhookOutbox>();
  private readonly ended = new Set<string>();
  private readonly recent = new Map<string, { at: number; shared: SharedAnswer }>();

  constructor(
    private readonly registry: CallRegistry,
    private readonly pacing: SpeechPacing,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    // Calls also end without a session_end (idle, shutdown): their outboxes go with them.
    registry.onCallEnded((id) => this.forget(id));
  }

  answer(event: VoiceEvent): PendingAnswer {
    if (this.ended.has(event.session.id)) return settled(undefined).copy();
    if (event.type !== 'session_start' && event.type !== 'user_speak') return this.answerFresh(event).copy();
    // A retried identical event shares the first copy's answer instead of starting a second turn.
    const key = stableStringify(event);
    const now = this.now();
    for (const [k, entry] of this.recent) {
      if (now - entry.at <= RETRY_WINDOW_MS) break;
      this.recent.delete(k);
    }
    const earlier = this.recent.get(key);
    if (earlier) return earlier.shared.copy();
    const shared = this.answerFresh(event);
    this.recent.set(key, { at: now, shared });
    return shared.copy();
  }

  private answerFresh(event: VoiceEvent): SharedAnswer {
    const id = event.session.id;
    let outbox = this.outboxes.get(id);
    if (!outbox) {
      if (event.type !== 'session_start') {
        this.logger.warn({ sessionId: id, type: event.type }, 'webhook event for an unknown session');
        return settled(undefined);
      }
      outbox = new WebhookOutbox();
      this.outboxes.set(id, outbox);
    }
    const call = this.registry.dispatch(event, outbox, this.pacing);
    if (!call) return settled(undefined);
    const box = outbox;
    const answer = (value: Answer | Promise<Answer>) => new SharedAnswer(Promise.resolve(value), (a) => box.putBack(a));

    switch (event.type) {
      case 'session_end':
        // The registry has ended the call; its listener forgot the outbox.
        return settled(undefined);
      case 'session_start':
      case 'assistant_speak':
        return answer(box.take());
      case 'user_speech_started':
        // Answers to it are ignored by the service; whatever is ready waits for the next event.
        return answer(undefined);
      case 'user_speak':
      case 'assistant_speech_ended': {
        const ready = box.take();
        if (ready || !call.generating) {
          // Nothing to wait for: an older request still waiting gets its 204 now.
          if (event.type === 'user_speak') box.release();
          return answer(ready);
        }
        return answer(box.wait());
      }
    }
  }

  private forget(id: string): void {
    this.outboxes.get(id)?.release();
    this.outboxes.delete(id);
    this.ended.add(id);
    if (this.ended.size > ENDED_REMEMBERED) {
      const oldest = this.ended.values().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }
}

function settled(answer: Answer): SharedAnswer {
  return new SharedAnswer(Promise.resolve(answer), () => undefined);
}
