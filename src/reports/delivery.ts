/**
 * The report webhook: a queue in the database and one worker that POSTs what
 * is due. A delivery is at least once — a receiver that answered 2xx just
 * before a crash gets it again — so every request carries its delivery id as
 * an idempotency key (X-Hotline-Delivery), and is signed (webhook-signature.ts).
 *
 * The worker never polls: it wakes when a report is queued, and otherwise
 * sleeps on one unref'd timer until the next attempt is due.
 *
 * Sent once per attempt, although the database is read and written with awaits between: one
 * drain runs at a time (`draining`; a wake meanwhile only asks it to look again); it reads the due
 * rows again only once every attempt of the last batch has written its outcome; and each row is
 * claimed by a conditional UPDATE before it is sent (DeliveryRepository.claim), which a second
 * Hotline on the same store that read the row too cannot then take. A redeliver changes only rows
 * given up (one UPDATE … WHERE status = 'failed'): a row being sent is pending, so it is left alone.
 * A start makes every pending row due but those a live replica has claimed (the claim names it),
 * so a replica starting while another sends a report does not send it again. Pending rows
 * outlive the process; the next start sends them at once, to the URL set
 * then (a fixed typo in REPORT_WEBHOOK_URL applies to what is still queued).
 */
import { randomUUID } from 'node:crypto';
import { AbortScope } from '../abort-scope.js';
import type { Logger } from '../logger.js';
import { describeNetworkError } from '../net-errors.js';
import type { DeliveriesOf, Delivery, DeliveryRepository } from '../store/delivery-repository.js';
import { NO_DELIVERY_TRACING, type DeliveryAttemptEnd, type DeliveryTracing } from './delivery-tracing.js';
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
  /** Where each attempt is traced; nothing without. */
  readonly tracing?: DeliveryTracing | undefined;
  /** Test hooks. */
  readonly now?: () => number;
  readonly random?: () => number;
}

/** Due deliveries sent at once; a slow receiver holds up at most this many. */
const BATCH = 8;
/** A claimed row is due again this long after its attempt's time limit: the process making it has died. */
const CLAIM_MARGIN_MS = 60_000;
/** The database failed the worker: it looks again after this long, rather than waiting for the next report. */
const STORE_RETRY_MS = 5_000;
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
  /** The start's making every pending row due: close() waits for it. */
  private starting: Promise<void> | undefined;
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
   * is written — through `into`, the caller's transaction's repository, if it
   * has one; `wake()` sends it once that has committed.
   */
  async add(
    call: { readonly callId: string; readonly sessionId: string },
    body: string,
    into: DeliveryRepository = this.options.deliveries,
  ): Promise<string> {
    const id = randomUUID();
    const now = this.now();
    const createdAt = new Date(now).toISOString();
    await into.add({ id, callId: call.callId, sessionId: call.sessionId, url: this.options.target.url, body, createdAt, nextAttemptAt: now });
    return id;
  }

  /** Queues and sends. */
  async enqueue(call: { readonly callId: string; readonly sessionId: string }, body: string): Promise<string> {
    const id = await this.add(call, body);
    this.wake();
    return id;
  }

  /**
   * Starts the worker. What a previous run left pending goes out at once, even
   * if it was waiting for a retry: a restart often comes with a fix (a new URL, a receiver back up).
   */
  start(): void {
    if (this.starting || this.stopping.signal.aborted) return;
    this.starting = this.options.deliveries
      .dueAllAt(this.now())
      .catch((error: unknown) => this.log.error({ err: error }, 'pending report deliveries not brought forward; they go out when due'))
      .finally(() => {
        this.started = true;
        this.wake();
      });
  }

  /**
   * Sends again what was given up — every delivery, one call's, or those of a session id's calls —
   * with a new time limit from now: the receiver is back after longer than it. Returns how many.
   */
  async redeliver(which?: DeliveriesOf): Promise<number> {
    const requeued = await this.options.deliveries.requeueFailed(this.now(), which);
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
      .then(
        () => false,
        (error: unknown) => {
          this.log.error({ err: error }, 'report delivery worker failed; it looks again shortly');
          return true;
        },
      )
      .then((storeFailed) => {
        this.draining = undefined;
        if (storeFailed) return this.setTimer(STORE_RETRY_MS);
        this.schedule().catch((error: unknown) => {
          this.log.error({ err: error }, 'next report delivery not looked up; it looks again shortly');
          this.setTimer(STORE_RETRY_MS);
        });
      });
  }

  /** Stops the worker; an attempt in flight is dropped uncounted and its row stays pending for the next start. */
  async close(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.starting;
    await this.draining;
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.stopping.signal.aborted) return;
        const due = await this.options.deliveries.due(this.now(), BATCH);
        if (due.length === 0) break;
        // Every attempt's outcome is written before the next read, so that read never sees a row in flight as due.
        await Promise.all(due.map((delivery) => this.claimAndAttempt(delivery)));
      }
    } while (this.again);
  }

  private async schedule(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    if (this.again) return this.wake();
    const next = await this.options.deliveries.nextDueAt();
    // A wake while it was looked up began a drain, which schedules again when it ends.
    if (next === undefined || this.draining) return;
    this.setTimer(next - this.now());
  }

  private setTimer(inMs: number): void {
    if (this.stopping.signal.aborted) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), Math.min(MAX_TIMER_MS, Math.max(0, inMs)));
    // Waiting for a retry must never keep the process alive.
    this.timer.unref();
  }

  /** Claims the row and sends it; one that fails in the database is logged and left for a later drain. */
  private async claimAndAttempt(delivery: Delivery): Promise<void> {
    try {
      if (!(await this.options.deliveries.claim(delivery, this.now() + this.timeoutMs + CLAIM_MARGIN_MS))) return;
      await this.attempt(delivery);
    } catch (error) {
      this.log.error({ err: error, delivery: delivery.id, sessionId: delivery.sessionId }, 'report delivery not recorded; it goes out again when due');
    }
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const { url, secret } = this.options.target;
    const attempt = delivery.attempts + 1;
    const timestamp = Math.floor(this.now() / 1000);
    const scope = new AbortScope([this.stopping.signal], this.timeoutMs);
    const trace = (this.options.tracing ?? NO_DELIVERY_TRACING).attempt({
      deliveryId: delivery.id,
      callId: delivery.callId,
      sessionId: delivery.sessionId,
      attempt,
      url,
    });
    let error: string | undefined;
    let httpStatus: number | undefined;
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
          // The receiver may carry the call's trace on into its own spans.
          ...trace.propagation,
        },
        body: delivery.body,
        // A redirect is not a delivery: a POST must not be re-sent somewhere else.
        redirect: 'manual',
        signal: scope.signal,
      });
      // Nothing of the answer is needed but its status; let the connection go back to the pool.
      await response.body?.cancel().catch(() => undefined);
      httpStatus = response.status;
      if (response.status < 200 || response.status >= 300) error = `HTTP ${response.status}`;
    } catch (failure) {
      if (this.stopping.signal.aborted) {
        trace.end({ status: 'stopped' });
        return;
      }
      error = scope.timedOut ? `no answer within ${this.timeoutMs} ms` : describeNetworkError(failure);
    } finally {
      scope.dispose();
    }
    // Outside the try: a database failure recording the outcome is not the receiver's failure.
    if (error !== undefined) {
      // A failure the database did not take is sent again when due, as a retry is.
      let status: DeliveryAttemptEnd['status'] = 'retrying';
      try {
        status = await this.failed(delivery, attempt, error);
      } finally {
        trace.end({ status, httpStatus, error });
      }
      return;
    }
    trace.end({ status: 'delivered', httpStatus });
    await this.options.deliveries.delivered(delivery.id, url, attempt, new Date(this.now()).toISOString());
    this.log.info({ delivery: delivery.id, sessionId: delivery.sessionId, attempt, target: originOf(url) }, 'report delivered');
    this.options.onAttempt?.({ id: delivery.id, sessionId: delivery.sessionId, attempt, status: 'delivered', error: undefined });
  }

  /** Records a failed attempt: retried later, or given up. */
  private async failed(delivery: Delivery, attempt: number, error: string): Promise<Extract<DeliveryAttemptEnd['status'], 'retrying' | 'failed'>> {
    const now = this.now();
    const deadline = Date.parse(delivery.attemptsFrom) + this.retry.giveUpAfterMs;
    const fields = { delivery: delivery.id, sessionId: delivery.sessionId, attempt, target: originOf(this.options.target.url), error };
    if (now >= deadline) {
      await this.options.deliveries.failed(delivery.id, this.options.target.url, attempt, error);
      this.log.error(fields, 'report delivery given up');
      this.options.onAttempt?.({ id: delivery.id, sessionId: delivery.sessionId, attempt, status: 'failed', error });
      return 'failed';
    }
    // The last attempt is made at the deadline itself, not a backoff after it.
    const next = Math.min(deadline, now + this.backoff(attempt));
    await this.options.deliveries.retryAt(delivery.id, this.options.target.url, attempt, next, error);
    this.log.warn({ ...fields, retryInMs: next - now }, 'report delivery failed; will retry');
    this.options.onAttempt?.({ id: delivery.id, sessionId: delivery.sessionId, attempt, status: 'retrying', error });
    return 'retrying';
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
