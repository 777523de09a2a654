import type { ActionSink, SpeechPacing } from '../call/call.js';
import type { CallRegistry } from '../call/call-registry.js';
import { stableStringify } from '../call/redelivery.js';
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
  private drainWaiters: (() => void)[] = [];

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
    const action = this.queue.shift();
    if (this.queue.length === 0) this.notifyDrained();
    return action;
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

  /** The call is over: nothing more will be taken. */
  close(): void {
    this.release();
    this.notifyDrained();
  }
}

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
  /** No copy could write it: the action went back to the outbox, for the next request to take. */
  kept = false;

  constructor(
    readonly answer: Promise<Answer>,
    private readonly keep: (action: Action) => void,
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

/**
 * Maps webhook requests onto the one call core: each event is dispatched to
 * its call, and the request is answered with the action the spec allows.
 */
export class WebhookCalls {
  private readonly outboxes = new Map<string, WebhookOutbox>();
  private readonly ended = new Set<string>();
  /** Per session, the last request that started work, while its answer is unwritten: a retry of it shares it. */
  private readonly latest = new Map<string, { key: string; shared: SharedAnswer }>();

  constructor(
    private readonly registry: CallRegistry,
    private readonly pacing: SpeechPacing,
    private readonly logger: Logger,
  ) {
    // Calls also end without a session_end (idle, shutdown): their outboxes go with them.
    registry.onCallEnded((id) => this.forget(id));
  }

  answer(event: VoiceEvent): PendingAnswer {
    const id = event.session.id;
    if (this.ended.has(id)) return settled(undefined).copy();
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
    const answer = (value: Answer | Promise<Answer>): SharedAnswer => this.shared(id, key, value, box);

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
    this.outboxes.get(id)?.close();
    this.outboxes.delete(id);
    this.latest.delete(id);
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
