import { z } from 'zod';
import type { Database } from './database.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const DeliveryRow = z
  .object({
    id: z.string(),
    session_id: z.string(),
    call_id: z.string().nullable(),
    url: z.string(),
    body: z.string(),
    created_at: z.string(),
    attempts: z.number(),
    next_attempt_at: z.number(),
    status: z.enum(DELIVERY_STATUSES),
    last_error: z.string().nullable(),
    delivered_at: z.string().nullable(),
    retry_from: z.string().nullable(),
  })
  .transform((row) => ({
    id: row.id,
    sessionId: row.session_id,
    /** The call whose report it carries (rows older than call ids: its session id). */
    callId: row.call_id ?? row.session_id,
    /** Where it was (last) sent. */
    url: row.url,
    body: row.body,
    /** ISO time it was queued. */
    createdAt: row.created_at,
    attempts: row.attempts,
    /** Epoch ms. */
    nextAttemptAt: row.next_attempt_at,
    status: row.status,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    /** ISO time the current run of attempts began: when it was queued, or sent again after it was given up. */
    attemptsFrom: row.retry_from ?? row.created_at,
  }));

/** Whose deliveries: one call's, or every call's the service gave a session id. */
export type DeliveriesOf = { readonly callId: string } | { readonly sessionId: string };

/** One webhook POST to make (or made): the `deliveries` table's row. */
export type Delivery = z.output<typeof DeliveryRow>;

export interface NewDelivery {
  readonly id: string;
  readonly callId: string;
  readonly sessionId: string;
  readonly url: string;
  readonly body: string;
  readonly createdAt: string;
  readonly nextAttemptAt: number;
}

/** The `deliveries` table: the webhook queue. Rows are kept after delivery as the record of what was sent. */
export class DeliveryRepository {
  private readonly insert;
  private readonly dueRows;
  private readonly nextDue;
  private readonly markDelivered;
  private readonly markRetry;
  private readonly markFailed;
  private readonly bySession;
  private readonly byCall;
  private readonly one;
  private readonly allDue;
  private readonly requeueAll;
  private readonly requeueSession;
  private readonly requeueCall;
  private readonly failedCount;

  constructor(db: Database) {
    this.insert = db.sql.prepare(
      `INSERT INTO deliveries (id, call_id, session_id, url, body, created_at, attempts, next_attempt_at, status)
       VALUES (@id, @callId, @sessionId, @url, @body, @createdAt, 0, @nextAttemptAt, 'pending')`,
    );
    this.dueRows = db.sql.prepare<[number, number]>(
      `SELECT * FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
    );
    this.nextDue = db.sql.prepare<[], { at: number | null }>(`SELECT min(next_attempt_at) AS at FROM deliveries WHERE status = 'pending'`);
    this.markDelivered = db.sql.prepare<[string, number, string, string]>(
      `UPDATE deliveries SET status = 'delivered', url = ?, attempts = ?, delivered_at = ?, last_error = NULL WHERE id = ?`,
    );
    this.markRetry = db.sql.prepare<[string, number, number, string, string]>(
      `UPDATE deliveries SET url = ?, attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?`,
    );
    this.markFailed = db.sql.prepare<[string, number, string, string]>(
      `UPDATE deliveries SET status = 'failed', url = ?, attempts = ?, last_error = ? WHERE id = ?`,
    );
    this.bySession = db.sql.prepare<[string]>('SELECT * FROM deliveries WHERE session_id = ? ORDER BY created_at, id');
    this.byCall = db.sql.prepare<[string]>('SELECT * FROM deliveries WHERE call_id = ? ORDER BY created_at, id');
    this.one = db.sql.prepare<[string]>('SELECT * FROM deliveries WHERE id = ?');
    this.allDue = db.sql.prepare<[{ now: number }]>(
      `UPDATE deliveries SET next_attempt_at = @now WHERE status = 'pending' AND next_attempt_at > @now`,
    );
    const requeue = `UPDATE deliveries SET status = 'pending', next_attempt_at = @now, retry_from = @from WHERE status = 'failed'`;
    this.requeueAll = db.sql.prepare<[{ now: number; from: string }]>(requeue);
    this.requeueSession = db.sql.prepare<[{ now: number; from: string; sessionId: string }]>(`${requeue} AND session_id = @sessionId`);
    this.requeueCall = db.sql.prepare<[{ now: number; from: string; callId: string }]>(`${requeue} AND call_id = @callId`);
    this.failedCount = db.sql.prepare<[], { n: number }>(`SELECT count(*) AS n FROM deliveries WHERE status = 'failed'`);
  }

  add(delivery: NewDelivery): void {
    this.insert.run(delivery);
  }

  /** Pending deliveries whose next attempt is due at `now` (epoch ms), the longest waiting first. */
  due(now: number, limit: number): Delivery[] {
    return this.dueRows.all(now, limit).map((row) => DeliveryRow.parse(row));
  }

  /** When the next pending delivery is due (epoch ms); undefined when none is pending. */
  nextDueAt(): number | undefined {
    return this.nextDue.get()?.at ?? undefined;
  }

  /** Makes every pending delivery due at `now`: a new start is a new chance, whatever the backoff said. */
  dueAllAt(now: number): void {
    this.allDue.run({ now });
  }

  delivered(id: string, url: string, attempts: number, at: string): void {
    this.markDelivered.run(url, attempts, at, id);
  }

  retryAt(id: string, url: string, attempts: number, nextAttemptAt: number, error: string): void {
    this.markRetry.run(url, attempts, nextAttemptAt, error, id);
  }

  failed(id: string, url: string, attempts: number, error: string): void {
    this.markFailed.run(url, attempts, error, id);
  }

  /**
   * Deliveries given up become pending again, due at `now` (epoch ms), with a new time limit from then:
   * every one, one call's, or those of every call with a session id. Returns how many.
   */
  requeueFailed(now: number, which?: DeliveriesOf): number {
    const from = new Date(now).toISOString();
    const result =
      which === undefined
        ? this.requeueAll.run({ now, from })
        : 'callId' in which
          ? this.requeueCall.run({ now, from, callId: which.callId })
          : this.requeueSession.run({ now, from, sessionId: which.sessionId });
    return result.changes;
  }

  /** How many deliveries were given up and not sent again. */
  failedTotal(): number {
    return this.failedCount.get()?.n ?? 0;
  }

  get(id: string): Delivery | undefined {
    const row = this.one.get(id);
    return row === undefined ? undefined : DeliveryRow.parse(row);
  }

  forSession(sessionId: string): Delivery[] {
    return this.bySession.all(sessionId).map((row) => DeliveryRow.parse(row));
  }

  /** The deliveries of one call's report, oldest first. */
  forCall(callId: string): Delivery[] {
    return this.byCall.all(callId).map((row) => DeliveryRow.parse(row));
  }
}
