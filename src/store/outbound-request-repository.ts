import { z } from 'zod';
import type { PendingCall } from '../call/ports/outbound-request.js';
import { databaseNowMs, replicaDead } from './database-clock.js';
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

/**
 * The `outbound_requests` table: a requested call's variables and tags, for whichever replica its
 * session_start reaches. One row per number — the primary key, not a check — so two replicas can
 * never both have a call to one number being rung.
 */
export class OutboundRequestRepository {
  constructor(
    private readonly db: Db,
    private readonly replica: string,
    private readonly dialect: Dialect,
    /** Epoch ms this process started: a request of this replica's earlier start gives way to a new one. */
    private readonly startedAt: number = Date.now(),
  ) {}

  /**
   * Records the request before the dial; false when the number is being rung already (by any
   * replica). A request whose time ran out is no request: it gives way.
   */
  async add(request: PendingCall, ttlMs: number, deadAfterMs: number): Promise<boolean> {
    const now = databaseNowMs({ dialect: this.dialect });
    // A request whose replica died gives way too: its call, if it ever comes, is greeted as any call.
    await this.db
      .deleteFrom('outbound_requests')
      .where('to_number', '=', request.toPhoneNumber)
      .where((eb) =>
        eb.or([
          eb('expires_at', '<=', now),
          replicaDead({ dialect: this.dialect }, 'outbound_requests.replica', deadAfterMs),
          // Left by this replica's earlier start: kept for its call, should it still come, until dialled again.
          eb.and([eb('replica', '=', this.replica), eb('requested_at', '<', this.startedAt)]),
        ]),
      )
      .execute();
    const inserted = await this.db
      .insertInto('outbound_requests')
      .values({
        to_number: request.toPhoneNumber,
        variables: JSON.stringify(request.variables),
        tags: request.tags ? JSON.stringify(request.tags) : null,
        requested_at: request.requestedAt,
        expires_at: (eb) => eb(now, '+', ttlMs),
        replica: this.replica,
      })
      .onConflict((oc) => oc.column('to_number').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** Takes the unexpired request for this number (one DELETE … RETURNING: of two replicas asking, one gets it). */
  async take(toPhoneNumber: string): Promise<PendingCall | undefined> {
    const row = await this.db
      .deleteFrom('outbound_requests')
      .where('to_number', '=', toPhoneNumber)
      .where('expires_at', '>', databaseNowMs({ dialect: this.dialect }))
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

  /** This request is over (taken here, refused, or given up): its row goes, and only its own. */
  async remove(request: PendingCall): Promise<void> {
    await this.db
      .deleteFrom('outbound_requests')
      .where('to_number', '=', request.toPhoneNumber)
      .where('requested_at', '=', request.requestedAt)
      .where('replica', '=', this.replica)
      .execute();
  }
}
