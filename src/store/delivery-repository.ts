import { z } from 'zod';
import { REPLICA_DEAD_AFTER_MS, replicaDead } from './database-clock.js';
import type { Db, Dialect } from './schema.js';

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
  /**
   * `sender`: the replica sending through this repository, and its store's dialect: its claims
   * name it, so another replica's start leaves a claim in flight alone. Readers need none.
   */
  constructor(
    private readonly db: Db,
    private readonly sender?: { readonly replica: string; readonly dialect: Dialect },
  ) {}

  async add(delivery: NewDelivery): Promise<void> {
    await this.db
      .insertInto('deliveries')
      .values({
        id: delivery.id,
        call_id: delivery.callId,
        session_id: delivery.sessionId,
        url: delivery.url,
        body: delivery.body,
        created_at: delivery.createdAt,
        attempts: 0,
        next_attempt_at: delivery.nextAttemptAt,
        status: 'pending',
      })
      .execute();
  }

  /** Pending deliveries whose next attempt is due at `now` (epoch ms), the longest waiting first. */
  async due(now: number, limit: number): Promise<Delivery[]> {
    const rows = await this.db
      .selectFrom('deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => DeliveryRow.parse(row));
  }

  /**
   * Takes a due delivery for one attempt: moves its next attempt to `until` (epoch ms), only if
   * the row is still as `delivery` read it — pending, due at the same time, after as many attempts.
   * Whether it did. One conditional UPDATE: of two pollers (overlapping, or two processes on one
   * PostgreSQL) that read the same row, one takes it; a poller that dies mid-attempt leaves it due at `until`.
   */
  async claim(delivery: Delivery, until: number): Promise<boolean> {
    const result = await this.db
      .updateTable('deliveries')
      .set({ next_attempt_at: until, claimed_by: this.sender?.replica ?? null })
      .where('id', '=', delivery.id)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '=', delivery.nextAttemptAt)
      .where('attempts', '=', delivery.attempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** When the next pending delivery is due (epoch ms); undefined when none is pending. */
  async nextDueAt(): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return z.object({ at: z.number().nullable() }).parse(row ?? { at: null }).at ?? undefined;
  }

  /**
   * Makes every pending delivery due at `now`: a new start is a new chance, whatever the backoff
   * said. Not one another live replica is sending now (its claim names it): that one would go twice.
   */
  async dueAllAt(now: number): Promise<void> {
    const sender = this.sender;
    await this.db
      .updateTable('deliveries')
      .set({ next_attempt_at: now, claimed_by: null })
      .where('status', '=', 'pending')
      .where('next_attempt_at', '>', now)
      .where((eb) =>
        sender === undefined
          ? eb.lit(true)
          : eb.or([
              eb('claimed_by', 'is', null),
              eb('claimed_by', '=', sender.replica),
              replicaDead(sender, 'deliveries.claimed_by', REPLICA_DEAD_AFTER_MS),
            ]),
      )
      .execute();
  }

  async delivered(id: string, url: string, attempts: number, at: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ status: 'delivered', url, attempts, delivered_at: at, last_error: null, claimed_by: null })
      .where('id', '=', id)
      .execute();
  }

  async retryAt(id: string, url: string, attempts: number, nextAttemptAt: number, error: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ url, attempts, next_attempt_at: nextAttemptAt, last_error: error, claimed_by: null })
      .where('id', '=', id)
      .execute();
  }

  async failed(id: string, url: string, attempts: number, error: string): Promise<void> {
    await this.db.updateTable('deliveries').set({ status: 'failed', url, attempts, last_error: error, claimed_by: null }).where('id', '=', id).execute();
  }

  /**
   * Deliveries given up become pending again, due at `now` (epoch ms), with a new time limit from then:
   * every one, one call's, or those of every call with a session id. Returns how many.
   */
  async requeueFailed(now: number, which?: DeliveriesOf): Promise<number> {
    let query = this.db
      .updateTable('deliveries')
      .set({ status: 'pending', next_attempt_at: now, retry_from: new Date(now).toISOString() })
      .where('status', '=', 'failed');
    if (which !== undefined) {
      query = 'callId' in which ? query.where('call_id', '=', which.callId) : query.where('session_id', '=', which.sessionId);
    }
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** How many deliveries were given up and not sent again. */
  async failedTotal(): Promise<number> {
    const row = await this.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'failed')
      .executeTakeFirstOrThrow();
    return z.coerce.number().parse(row.n);
  }

  async get(id: string): Promise<Delivery | undefined> {
    const row = await this.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : DeliveryRow.parse(row);
  }

  async forSession(sessionId: string): Promise<Delivery[]> {
    const rows = await this.db.selectFrom('deliveries').selectAll().where('session_id', '=', sessionId).orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => DeliveryRow.parse(row));
  }

  /** The deliveries of one call's report, oldest first. */
  async forCall(callId: string): Promise<Delivery[]> {
    const rows = await this.db.selectFrom('deliveries').selectAll().where('call_id', '=', callId).orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => DeliveryRow.parse(row));
  }
}
