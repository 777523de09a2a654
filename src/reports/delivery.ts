/**
 * The report webhook: a queue in the database and one worker that POSTs what
 * is due. A delivery is at least once — a receiver that answered 2xx just
 * before a crash gets it again — so every request carries its delivery id as
 * an idempotency key (X-Hotline-Delivery), and is signed (webhook-signature.ts).
 *
 * The worker never polls: it wakes when a report is queued, and otherwise
 * sleeps on one unref'd timer until the next attempt is due. Pending rows
 * outlive the process; the next start sends them at once, to the URL set
 * then (a fixed typo in REPORT_WEBHOOK_URL applies to what is still queued).
 */
import { randomUUID } from 'node:crypto';
import { AbortScope } from '../abort-scope.js';
import type { Logger } from '../logger.js';
import { describeNetworkError } from '../net-errors.js';
import type { DeliveriesOf, Delivery, DeliveryRepository } from '../store/delivery-repository.js';
import { signBody } from './webhook-signature.js';

export { verifySignature } from './webhook-signature.js';

export interface WebhookTarget {
  readonly url: string;
  /** Signs every request; never logged. */
  readonly secret: string;
  /** The longest one POST may take; default 10 s. */
  readonly timeoutMs?: number;
}

export interface RetryPolicy {
  /** The wait after the first failed attempt; it doubles with each further one. */
  readonly initialMs: number;
  readonly maxMs: number;
  /** From the time it was queued: a delivery still failing then is given up. */
  readonly giveUpAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialMs: 5_000, maxMs: 10 * 60_000, giveUpAfterMs: 24 * 60 * 60_000 };
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/** What became of one attempt, for metrics and tests. */
export interface DeliveryAttempt {
  readonly id: string;
  readonly sessionId: string;
  /** 1 for the first. */
  readonly attempt: number;
  readonly status: 'delivered' | 'retrying' | 'failed';
  readonly error: string | undefined;
}

export interface DeliveryQueueOptions {
  readonly deliveries: DeliveryRepository;
  readonly target: WebhookTarget;
  readonly retry?: Partial<RetryPolicy> | undefined;
  readonly logger: Logger;
  readonly onAttempt?: ((attempt: DeliveryAttempt) => void) | undefined;
  /** Test hooks. */
  readonly now?: () => number;
  readonly random?: () => number;
}

/** Due deliveries sent at once; a slow receiver holds up at most this many. */
const BATCH = 8;
/** setTimeout's limit; a later wake-up simply looks again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class DeliveryQueue {
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly log: Logger;
  /** Aborted by close(): attempts in flight end without counting; their rows stay pending. */
  private readonly stopping = new AbortController();
  private started = false;
  private draining: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DeliveryQueueOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.target.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.log = options.logger.child({ component: 'report-webhook' });
  }

  /**
   * Queues `body` for the webhook and returns the delivery's id. Only the row
   * is written — inside the caller's transaction, if there is one; `wake()`
   * sends it once that has committed.
   */
  add(call: { readonly callId: string; readonly sessionId: string }, body: string): string {
    const id = randomUUID();
    const now = this.now();
    const createdAt = new Date(now).toISOString();
    this.options.deliveries.add({ id, callId: call.callId, sessionId: call.sessionId, url: this.options.target.url, body, createdAt, nextAttemptAt: now });
    return id;
  }

  /** Queues and sends. */
  enqueue(call: { readonly callId: string; readonly sessionId: string }, body: string): string {
    const id = this.add(call, body);
    this.wake();
    return id;
  }

  /**
   * Starts the worker. What a previous run left pending goes out at once, even
   * if it was waiting for a retry: a restart often comes with a fix (a new URL, a receiver back up).
   */
  start(): void {
    if (this.started || this.stopping.signal.aborted) return;
    this.started = true;
    this.options.deliveries.dueAllAt(this.now());
    this.wake();
  }

  /**
   * Sends again what was given up — every delivery, one call's, or those of a session id's calls —
   * with a new time limit from now: the receiver is back after longer than it. Returns how many.
   */
  redeliver(which?: DeliveriesOf): number {
    const requeued = this.options.deliveries.requeueFailed(this.now(), which);
    if (requeued > 0) {
      this.log.info({ requeued, ...which }, 'given-up report deliveries queued again');
      this.wake();
    }
    return requeued;
  }

  /** Looks for due deliveries now (after an enqueue, or when the timer rings). */
  wake(): void {
    if (!this.started || this.stopping.signal.aborted) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.draining = this.drain()
      .catch((error: unknown) => this.log.error({ err: error }, 'report delivery worker failed'))
      .finally(() => {
        this.draining = undefined;
        this.schedule();
      });
  }

  /** Stops the worker; an attempt in flight is dropped uncounted and its row stays pending for the next start. */
  async close(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.draining;
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.stopping.signal.aborted) return;
        const due = this.options.deliveries.due(this.now(), BATCH);
        if (due.length === 0) break;
        await Promise.all(due.map((delivery) => this.attempt(delivery)));
      }
    } while (this.again);
  }

  private schedule(): void {
    if (this.stopping.signal.aborted) return;
    if (this.again) return this.wake();
    const next = this.options.deliveries.nextDueAt();
    if (next === undefined) return;
    this.timer = setTimeout(() => this.wake(), Math.min(MAX_TIMER_MS, Math.max(0, next - this.now())));
    // Waiting for a retry must never keep the process alive.
    this.timer.unref();
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const { url, secret } = this.options.target;
    const attempt = delivery.attempts + 1;
    const timestamp = Math.floor(this.now() / 1000);
    const scope = new AbortScope([this.stopping.signal], this.timeoutMs);
    let error: string;
    try {
      const { href, authorization } = splitCredentials(url);
      const response = await fetch(href, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'hotline-reports/1',
          'x-hotline-delivery': delivery.id,
          'x-hotline-timestamp': String(timestamp),
          'x-hotline-signature': signBody(secret, timestamp, delivery.body),
          ...(authorization ? { authorization } : {}),
        },
        body: delivery.body,
        // A redirect is not a delivery: a POST must not be re-sent somewhere else.
        redirect: 'manual',
        signal: scope.signal,
      });
      // Nothing of the answer is needed but its status; let the connection go back to the pool.
      await response.body?.cancel().catch(() => undefined);
      if (response.status >= 200 && response.status < 300) {
        this.options.deliveries.delivered(delivery.id, url, attempt, new Date(this.now()).toISOString());
        this.log.info({ delivery: delivery.id, sessionId: delivery.sessionId, attempt, target: originOf(url) }, 'report delivered');
        this.options.onAttempt?.({ id: delivery.id, sessionId: delivery.sessionId, attempt, status: 'delivered', error: undefined });
        return;
      }
      error = `HTTP ${response.status}`;
    } catch (failure) {
      if (this.stopping.signal.aborted) return;
      error = scope.timedOut ? `no answer within ${this.timeoutMs} ms` : describeNetworkError(failure);
    } finally {
      scope.dispose();
    }
    this.failed(delivery, attempt, error);
  }

  private failed(delivery: Delivery, attempt: number, error: string): void {
    const now = this.now();
    const deadline = Date.parse(delivery.attemptsFrom) + this.retry.giveUpAfterMs;
    const fields = { delivery: delivery.id, sessionId: delivery.sessionId, attempt, target: originOf(this.options.target.url), error };
    if (now >= deadline) {
      this.options.deliveries.failed(delivery.id, this.options.target.url, attempt, error);
      this.log.error(fields, 'report delivery given up');
      this.options.onAttempt?.({ id: delivery.id, sessionId: delivery.sessionId, attempt, status: 'failed', error });
      return;
    }
    // The last attempt is made at the deadline itself, not a backoff after it.
    const next = Math.min(deadline, now + this.backoff(attempt));
    this.options.deliveries.retryAt(delivery.id, this.options.target.url, attempt, next, error);
    this.log.warn({ ...fields, retryInMs: next - now }, 'report delivery failed; will retry');
    this.options.onAttempt?.({ id: delivery.id, sessionId: delivery.sessionId, attempt, status: 'retrying', error });
  }

  /** Doubling from initialMs up to maxMs, each wait between half and all of that: receivers that were down are not hit all at once. */
  private backoff(attempt: number): number {
    const full = Math.min(this.retry.maxMs, this.retry.initialMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(full / 2 + (this.random() * full) / 2);
  }
}

/** fetch refuses a URL with credentials in it; they become the Basic authorization a browser would send. */
function splitCredentials(url: string): { href: string; authorization: string | undefined } {
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { href: url, authorization: undefined };
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  return { href: parsed.href, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/** Where reports go, for the log: the path and query may carry a token. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid URL';
  }
}
