import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { z } from 'zod';
import type { PendingCall } from '../call/ports/outbound-request.js';
import { beatingSince, databaseNowMs } from './database-clock.js';
import type { Db, Dialect } from './schema.js';

const Strings = z.record(z.string(), z.string());
const RequestRow = z.object({
  to_number: z.string(),
  variables: z.string().transform((json) => Strings.parse(JSON.parse(json))),
  tags: z
    .string()
    .nullable()
    .transform((json) => (json === null ? undefined : Strings.parse(JSON.parse(json)))),
  requested_at: z.coerce.number(),
});

/** A number another call has: rung for `ringingForMs` more, or (undefined) on the line until that call ends. */
export interface NumberBusy {
  readonly ringingForMs: number | undefined;
}

/** Who writes through a repository: the replica, and this start of it (ReplicaRegistry.instance). */
export interface LineHolder {
  readonly replica: string;
  readonly instance: string;
}

/**
 * The `outbound_requests` table: one row per number in a call. A requested call's row holds its
 * variables and tags, for whichever replica its session_start reaches; once the call is on the line
 * (answered, or a person calling in) the row names that call and the replica holding it, until it
 * ends. One row per number — the primary key, not a check — so of two replicas asked at the same
 * moment one dials, and nobody is dialled while rung or on the line anywhere.
 *
 * A row gives way when the start of the replica holding it stopped beating (killed, or running
 * again under its id: a new start), or when it is a ring whose time ran out.
 */
export class OutboundRequestRepository {
  constructor(
    private readonly db: Db,
    private readonly holder: LineHolder,
    readonly dialect: Dialect,
    /** A replica silent this long is dead: what it held gives way. */
    private readonly deadAfterMs: number,
  ) {}

  /**
   * Records the request before the dial; what holds the number instead, when another call has it.
   * `ringForMs`: how long the call may ring before it is not coming.
   */
  async add(request: PendingCall, ringForMs: number): Promise<{ added: true } | { added: false; busy: NumberBusy }> {
    await this.db
      .deleteFrom('outbound_requests')
      .where('to_number', '=', request.toPhoneNumber)
      .where(sql<SqlBool>`NOT ${this.blocking()}`)
      .execute();
    const inserted = await this.db
      .insertInto('outbound_requests')
      .values({
        to_number: request.toPhoneNumber,
        variables: JSON.stringify(request.variables),
        tags: request.tags ? JSON.stringify(request.tags) : null,
        requested_at: request.requestedAt,
        expires_at: (eb) => eb(databaseNowMs(this), '+', ringForMs),
        replica: this.holder.replica,
        instance: this.holder.instance,
      })
      .onConflict((oc) => oc.column('to_number').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return { added: true };
    // Gone again since the insert (its call ended): refused all the same, as free in a moment.
    return { added: false, busy: (await this.busy(request.toPhoneNumber)) ?? { ringingForMs: 0 } };
  }

  /** Whether another call has the number now, rung or on the line, at any live replica. */
  async busy(toPhoneNumber: string): Promise<NumberBusy | undefined> {
    const row = await this.db
      .selectFrom('outbound_requests')
      .select(['session_id', sql<number>`expires_at - ${databaseNowMs(this)}`.as('left_ms')])
      .where('to_number', '=', toPhoneNumber)
      .where(this.blocking())
      .executeTakeFirst();
    if (!row) return undefined;
    return { ringingForMs: row.session_id === null ? Math.max(0, Number(row.left_ms)) : undefined };
  }

  /**
   * Takes the unexpired request for this number. With the session of the call that answers it, the
   * row stays — the number on the line from now on, held by this replica — in the same statement, so
   * there is no moment in which the number is free; without one (the call never connected) it goes.
   * Of two replicas asking, one gets it.
   */
  async take(toPhoneNumber: string, sessionId?: string): Promise<PendingCall | undefined> {
    const now = databaseNowMs(this);
    const row = sessionId
      ? await this.db
          .updateTable('outbound_requests')
          .set({ session_id: sessionId, replica: this.holder.replica, instance: this.holder.instance })
          .where('to_number', '=', toPhoneNumber)
          .where('session_id', 'is', null)
          .where('expires_at', '>', now)
          .returning(['to_number', 'variables', 'tags', 'requested_at'])
          .executeTakeFirst()
      : await this.db
          .deleteFrom('outbound_requests')
          .where('to_number', '=', toPhoneNumber)
          .where('session_id', 'is', null)
          .where('expires_at', '>', now)
          .returning(['to_number', 'variables', 'tags', 'requested_at'])
          .executeTakeFirst();
    if (!row) return undefined;
    const parsed = RequestRow.parse(row);
    return {
      toPhoneNumber: parsed.to_number,
      variables: parsed.variables,
      ...(parsed.tags ? { tags: parsed.tags } : {}),
      requestedAt: parsed.requested_at,
    };
  }

  /** This replica's own request was answered here (matched from memory): its row is that call's now. */
  async answered(request: PendingCall, sessionId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('outbound_requests')
      .set({ session_id: sessionId })
      .where('to_number', '=', request.toPhoneNumber)
      .where('requested_at', '=', request.requestedAt)
      .where('replica', '=', this.holder.replica)
      .where('session_id', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * The number is on the line in this call, here (a person calling in, a call taken up from another
   * replica, one whose request was gone): its row names the call, unless another live call has the
   * number. True when the row is this call's.
   */
  async hold(toPhoneNumber: string, sessionId: string): Promise<boolean> {
    const row = {
      to_number: toPhoneNumber,
      variables: '{}',
      tags: null,
      requested_at: Date.now(),
      expires_at: databaseNowMs(this),
      replica: this.holder.replica,
      instance: this.holder.instance,
      session_id: sessionId,
    };
    const result = await this.db
      .insertInto('outbound_requests')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('to_number')
          .doUpdateSet({
            variables: (eb) => eb.ref('excluded.variables'),
            tags: (eb) => eb.ref('excluded.tags'),
            requested_at: (eb) => eb.ref('excluded.requested_at'),
            expires_at: (eb) => eb.ref('excluded.expires_at'),
            replica: (eb) => eb.ref('excluded.replica'),
            instance: (eb) => eb.ref('excluded.instance'),
            session_id: (eb) => eb.ref('excluded.session_id'),
          })
          // The same call (taken over from a replica that let go of it), or a row that gives way.
          .where((eb) => eb.or([eb('outbound_requests.session_id', '=', sessionId), eb.not(this.blocking())])),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** The call ended here: its number is free. Only its own row, and only while this replica holds it. */
  async release(sessionId: string): Promise<void> {
    await this.db
      .deleteFrom('outbound_requests')
      .where('session_id', '=', sessionId)
      .where('replica', '=', this.holder.replica)
      .where('instance', '=', this.holder.instance)
      .execute();
  }

  /** This request is over (refused, or given up) before any call came: its row goes, and only its own. */
  async remove(request: PendingCall): Promise<void> {
    await this.db
      .deleteFrom('outbound_requests')
      .where('to_number', '=', request.toPhoneNumber)
      .where('requested_at', '=', request.requestedAt)
      .where('replica', '=', this.holder.replica)
      .where('session_id', 'is', null)
      .execute();
  }

  /**
   * Rows nobody holds any more go (a person's number is kept no longer than their call): a call on
   * the line at a start that stopped — a replica taking it up holds it again — and a ring whose time
   * ran out. A stopped start's ring stays until then: its call may still come, to any replica.
   */
  async sweep(): Promise<void> {
    await this.db
      .deleteFrom('outbound_requests')
      .where(sql<SqlBool>`NOT ${this.blocking()}`)
      .where((eb) => eb.or([eb('session_id', 'is not', null), eb('expires_at', '<=', databaseNowMs(this))]))
      .execute();
  }

  /**
   * True for a row that holds its number: its holder's start still beats (a row from before starts
   * were named: its replica does), and it is on the line, or a ring whose time has not run out.
   */
  private blocking(): RawBuilder<SqlBool> {
    return sql<SqlBool>`(EXISTS (SELECT 1 FROM replicas WHERE replicas.id = outbound_requests.replica
        AND (outbound_requests.instance IS NULL OR replicas.instance = outbound_requests.instance)
        AND replicas.heartbeat_at > ${beatingSince(this, this.deadAfterMs)})
      AND (outbound_requests.session_id IS NOT NULL OR outbound_requests.expires_at > ${databaseNowMs(this)}))`;
  }
}
