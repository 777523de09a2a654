/**
 * Who calls whom, and when: the next contact due, its claim (one transaction, so a contact is never
 * dialled twice by any scheduler on the same store), and every later transition of the attempt,
 * each conditional on the status it leaves. Also which replica holds each attempt, so that a dead
 * replica's attempts are settled by the others and a restarted one's by itself.
 */
import { sql } from 'kysely';
import type { Db } from './schema.js';
import { replicaDead } from './database-clock.js';
import type { Store } from './store.js';
import type { ContactStatus } from './campaign-rows.js';
import { At, CONTACT_COLUMNS, ContactRow, type ContactChange, type StoredContact } from './campaign-records.js';
import { inCallOn } from './campaign-progress-queries.js';

/** What `startAttempt` found: the attempt begun, or why not. */
export type AttemptStart =
  | { readonly started: true }
  /** The campaign is not running (paused or done meanwhile), or the contact is not waiting and due any more (taken by another process). */
  | { readonly started: false; readonly reason: 'not_running' | 'taken' | 'full' }
  | { readonly started: false; readonly reason: 'pace'; readonly at: number };

/** PostgreSQL's deadlock and serialization failures: the statement did nothing, and the same statement again will do its work. */
const RETRYABLE = new Set(['40P01', '40001']);
const RETRIES = 3;

async function retrying<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt >= RETRIES || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
    }
  }
}

export class CampaignClaims {
  private readonly db: Db;

  /** `replica`: the replica claiming attempts through this repository (null: one process alone, or a reader). */
  constructor(
    private readonly store: Store,
    private readonly replica: string | null,
  ) {
    this.db = store.db;
  }

  /**
   * The next contact to call: waiting, due by `now`, in one of `openZones`, not one of `passed` (by index);
   * earliest due first, then list order.
   */
  async nextDue(campaignId: string, now: number, campaignZone: string, openZones: readonly string[], passed: readonly number[] = []): Promise<StoredContact | undefined> {
    if (openZones.length === 0) return undefined;
    // Walks the partial index in call order and stops at the first fit.
    let query = this.db
      .selectFrom('campaign_contacts')
      .select(CONTACT_COLUMNS)
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(sql<string>`COALESCE(time_zone, ${campaignZone})`, 'in', openZones);
    if (passed.length > 0) query = query.where('idx', 'not in', passed);
    const row = await query.orderBy('next_attempt_at').orderBy('idx').limit(1).executeTakeFirst();
    return row === undefined ? undefined : ContactRow.parse(row);
  }

  /** When the earliest waiting contact not yet due comes due. */
  async nextDueAfter(campaignId: string, now: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '>', now)
      .executeTakeFirst();
    return At.parse(row).at ?? undefined;
  }

  /**
   * An attempt begins, if it may: the contact is `calling`, its attempt counted, and the campaign's pace
   * clock set to `at`, in one transaction that first locks the campaign's row. That lock makes the
   * checks and the claim one step for every scheduler of this campaign — another tick, another Hotline
   * on the same PostgreSQL: the campaign still running (a pause committed first stops it), fewer than
   * `concurrency` contacts in a call, `paceMs` since the last start, and the contact still waiting and
   * due (a conditional UPDATE: a contact someone else claimed is not claimed again, so never dialled twice).
   */
  async startAttempt(campaignId: string, index: number, limits: { at: number; concurrency: number; paceMs: number }, now: Date): Promise<AttemptStart> {
    const { at, concurrency, paceMs } = limits;
    return retrying(() =>
      this.db.transaction().execute(async (trx): Promise<AttemptStart> => {
        // The lock: an UPDATE that changes nothing but takes the row (on SQLite the transaction holds the file's write lock already).
        const locked = await trx
          .updateTable('campaigns')
          .set((eb) => ({ last_started_at: eb.ref('last_started_at') }))
          .where('id', '=', campaignId)
          .where('state', '=', 'running')
          .where('complete', '=', 1)
          .executeTakeFirst();
        if (Number(locked.numUpdatedRows) === 0) return { started: false, reason: 'not_running' };
        const last = At.parse(await trx.selectFrom('campaigns').select('last_started_at as at').where('id', '=', campaignId).executeTakeFirstOrThrow()).at;
        if (last !== null && last + paceMs > at) return { started: false, reason: 'pace', at: last + paceMs };
        if ((await inCallOn(trx, campaignId)) >= concurrency) return { started: false, reason: 'full' };
        const claimed = await trx
          .updateTable('campaign_contacts')
          .set((eb) => ({
            status: 'calling',
            attempts: eb('attempts', '+', 1),
            last_error: null,
            last_session_id: null,
            updated_at: now.toISOString(),
            replica: this.replica,
          }))
          .where('campaign_id', '=', campaignId)
          .where('idx', '=', index)
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', at)
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 0) return { started: false, reason: 'taken' };
        await trx.updateTable('campaigns').set({ last_started_at: at }).where('id', '=', campaignId).execute();
        return { started: true };
      }),
    );
  }

  /**
   * Changes a contact; with `from`, only while its status is one of those (a conditional UPDATE: of two
   * events racing to settle the same attempt, one does). True when the row changed.
   */
  async updateContact(campaignId: string, index: number, change: ContactChange, now: Date, from?: readonly ContactStatus[]): Promise<boolean> {
    const set = {
      ...(change.status === undefined ? {} : { status: change.status }),
      ...(change.outcome === undefined ? {} : { outcome: change.outcome }),
      ...(change.attempts === undefined ? {} : { attempts: change.attempts }),
      ...(change.nextAttemptAt === undefined ? {} : { next_attempt_at: change.nextAttemptAt }),
      ...(change.lastSessionId === undefined ? {} : { last_session_id: change.lastSessionId }),
      ...(change.lastError === undefined ? {} : { last_error: change.lastError }),
      updated_at: now.toISOString(),
    };
    return retrying(async () => {
      let query = this.db.updateTable('campaign_contacts').set(set).where('campaign_id', '=', campaignId).where('idx', '=', index);
      if (from) query = query.where('status', 'in', from);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  /**
   * The attempt's call was answered at this replica: `reached`, only from `calling` (of session_start
   * and the answer timeout racing, one wins), and the attempt is this replica's from now on. The
   * service sends an answered call to whichever replica its balancer picks, not necessarily the one
   * that placed it, and the attempt must name the one holding the call: that replica's death is what
   * leaves it to the others (`orphanedAttempts`), its restart is what settles it (`leftBehindIn`).
   * Left naming the placer, a placer's death or restart settled a call still going on elsewhere (its
   * place in the concurrency given away), and a call cut off by its holder's death stayed `reached`
   * for as long as the placer lived (its place never given back). True when the row changed.
   */
  async markReached(campaignId: string, index: number, sessionId: string, now: Date): Promise<boolean> {
    return retrying(async () => {
      const result = await this.db
        .updateTable('campaign_contacts')
        .set({ status: 'reached', last_session_id: sessionId, updated_at: now.toISOString(), replica: this.replica })
        .where('campaign_id', '=', campaignId)
        .where('idx', '=', index)
        .where('status', '=', 'calling')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  /**
   * This replica handed the call of a reached attempt to `to` (a webhook call, as it stops): the
   * attempt is that one's now, so only that one's death or restart settles it.
   */
  async passAttempt(sessionId: string, to: string): Promise<void> {
    await this.db
      .updateTable('campaign_contacts')
      .set({ replica: to })
      .where('last_session_id', '=', sessionId)
      .where('status', '=', 'reached')
      .where('replica', '=', this.replica)
      .execute();
  }

  /**
   * The contacts in one status that this replica's earlier start left in flight (or that no replica
   * claimed: written before replicas had names). Another live replica's attempts are its own.
   */
  async leftBehindIn(campaignId: string, status: ContactStatus): Promise<(StoredContact & { changedAt: number })[]> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select([...CONTACT_COLUMNS, 'updated_at'])
      .where('campaign_id', '=', campaignId)
      .where('status', '=', status)
      .where((eb) => (this.replica === null ? eb.lit(true) : eb.or([eb('replica', '=', this.replica), eb('replica', 'is', null)])))
      .orderBy('idx')
      .execute();
    return rows.map((row) => ({ ...ContactRow.parse(row), changedAt: Date.parse(row.updated_at) }));
  }

  /**
   * Attempts in flight (`calling`, `reached`) of replicas dead for `deadAfterMs`, with when each was
   * last changed (epoch ms): the others settle them.
   */
  async orphanedAttempts(deadAfterMs: number, limit: number): Promise<{ campaignId: string; contact: StoredContact; changedAt: number }[]> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select([...CONTACT_COLUMNS, 'updated_at'])
      .where('status', 'in', ['calling', 'reached'])
      .where('replica', 'is not', null)
      .where((eb) => (this.replica === null ? eb.lit(true) : eb('replica', '!=', this.replica)))
      .where(replicaDead(this.store, 'campaign_contacts.replica', deadAfterMs))
      .orderBy('campaign_id')
      .orderBy('idx')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ campaignId: row.campaign_id, contact: ContactRow.parse(row), changedAt: Date.parse(row.updated_at) }));
  }
}
