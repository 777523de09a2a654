import { z } from 'zod';
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from './schema.js';
import { replicaDead } from './database-clock.js';
import type { Store } from './store.js';
import { CAMPAIGN_STATES, CONTACT_STATUSES, countTally, OUTCOMES, type CampaignState, type ContactStatus, type ContactTally, type Outcome } from './campaign-rows.js';

export { CAMPAIGN_STATES, CONTACT_STATUSES, countTally, OUTCOMES, type CampaignState, type ContactStatus, type ContactTally, type Outcome } from './campaign-rows.js';

/** One person to call as a new row: the number normalised, every other column a variable. */
export interface NewContact {
  readonly number: string;
  readonly variables: Readonly<Record<string, string>>;
  readonly time_zone?: string | undefined;
}

/** What the store needs of a campaign's settings; the rest is the campaigns' own, checked by the schema they give. */
export interface CampaignSettingsShape {
  readonly name: string;
}

export interface StoredCampaign<Settings extends CampaignSettingsShape = CampaignSettingsShape> {
  readonly id: string;
  readonly name: string;
  readonly settings: Settings;
  readonly state: CampaignState;
  /** Epoch ms of its last call start, for the pace; null before the first. */
  readonly lastStartedAt: number | null;
  /** Rows of its list merged into another row with the same number at creation. */
  readonly merged: number;
  /** The stop list's mark (`stopListMark`) its waiting contacts were last checked against; -1: never, with numbers normalised. */
  readonly stopMark: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface StoredContact {
  readonly campaignId: string;
  readonly index: number;
  readonly number: string;
  readonly variables: Readonly<Record<string, string>>;
  readonly timeZone: string | null;
  readonly status: ContactStatus;
  readonly outcome: Outcome | null;
  readonly attempts: number;
  /** Epoch ms: a pending contact is not called before. */
  readonly nextAttemptAt: number;
  readonly lastSessionId: string | null;
  readonly lastError: string | null;
}

/** Why a contact on a stop list was never called. */
const NEVER_CALLED = 'on the stop list: never called';

/** What a transition changes of a contact. */
export type ContactChange = Partial<Pick<StoredContact, 'status' | 'outcome' | 'attempts' | 'nextAttemptAt' | 'lastSessionId' | 'lastError'>>;

function campaignRow<Settings extends CampaignSettingsShape>(settings: (id: string, json: string) => Settings) {
  return z
  .object({
    id: z.string(),
    name: z.string(),
    settings: z.string(),
    state: z.enum(CAMPAIGN_STATES),
    last_started_at: z.number().nullable(),
    merged: z.number(),
    stop_mark: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (row): StoredCampaign<Settings> => ({
      id: row.id,
      name: row.name,
      settings: settings(row.id, row.settings),
      state: row.state,
      lastStartedAt: row.last_started_at,
      merged: row.merged,
      stopMark: row.stop_mark,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  );
}

const ContactRow = z
  .object({
    campaign_id: z.string(),
    idx: z.number(),
    number: z.string(),
    variables: z.string(),
    time_zone: z.string().nullable(),
    status: z.enum(CONTACT_STATUSES),
    outcome: z.enum(OUTCOMES).nullable(),
    attempts: z.number(),
    next_attempt_at: z.number(),
    last_session_id: z.string().nullable(),
    last_error: z.string().nullable(),
  })
  .transform(
    (row): StoredContact => ({
      campaignId: row.campaign_id,
      index: row.idx,
      number: row.number,
      variables: z.record(z.string(), z.string()).parse(JSON.parse(row.variables)),
      timeZone: row.time_zone,
      status: row.status,
      outcome: row.outcome,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at,
      lastSessionId: row.last_session_id,
      lastError: row.last_error,
    }),
  );


/** What `startAttempt` found: the attempt begun, or why not. */
export type AttemptStart =
  | { readonly started: true }
  /** The campaign is not running (paused or done meanwhile), or the contact is not waiting and due any more (taken by another process). */
  | { readonly started: false; readonly reason: 'not_running' | 'taken' | 'full' }
  | { readonly started: false; readonly reason: 'pace'; readonly at: number };

/** The columns a contact is read back with (PostgreSQL's tables also have a `rowid` of their own). */
const CONTACT_COLUMNS = [
  'campaign_id',
  'idx',
  'number',
  'variables',
  'time_zone',
  'status',
  'outcome',
  'attempts',
  'next_attempt_at',
  'last_session_id',
  'last_error',
] as const;

const CAMPAIGN_COLUMNS = ['id', 'name', 'settings', 'state', 'last_started_at', 'merged', 'stop_mark', 'created_at', 'updated_at'] as const;

/** Contacts per INSERT: about ten parameters each, well inside either database's limit on one statement's parameters. */
const INSERT_BATCH = 500;
/** Numbers per `IN (…)` list. */
const IN_BATCH = 500;

const At = z.object({ at: z.number().nullable() });
const Count = z.object({ n: z.number() });

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

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The `campaigns`, `campaign_contacts` and `stop_list` tables, on SQLite or PostgreSQL. Every write
 * is committed when its promise resolves: the scheduler awaits a transition before the action it
 * guards. Transitions that others may race (another event of the same call, another Hotline on the
 * same PostgreSQL) are conditional on the status they leave, and say whether they happened.
 */
export class CampaignRepository<Settings extends CampaignSettingsShape> {
  private readonly db: Db;
  private readonly campaignRow;
  /** A campaign's settings never change once written: each is parsed once, not at every look of the scheduler. */
  private readonly settingsOf = new Map<string, Settings>();

  /** `settingsSchema` reads a campaign's settings back: the store keeps them as JSON and knows only their name. */
  /** `replica`: the replica claiming attempts through this repository (null: one process alone, or a reader). */
  constructor(
    private readonly store: Store,
    settingsSchema: z.ZodType<Settings>,
    private readonly replica: string | null = null,
  ) {
    this.db = store.db;
    this.campaignRow = campaignRow((id, json) => {
      let settings = this.settingsOf.get(id);
      if (!settings) this.settingsOf.set(id, (settings = settingsSchema.parse(JSON.parse(json))));
      return settings;
    });
  }

  /**
   * A new campaign, invisible until `completeCampaign`: its contacts are written in between, a slice
   * at a time (`insertContacts`).
   */
  async beginCampaign(id: string, settings: Settings, extra: { merged: number; zones: readonly string[] }, now: Date): Promise<void> {
    const at = now.toISOString();
    // Not complete until its last contact is written: until then no one sees it, the scheduler included.
    await this.db
      .insertInto('campaigns')
      .values({
        id,
        name: settings.name,
        settings: JSON.stringify(settings),
        state: 'running',
        created_at: at,
        updated_at: at,
        complete: 0,
        merged: extra.merged,
        zones: JSON.stringify(extra.zones),
      })
      .execute();
  }

  /**
   * Writes `contacts` as the campaign's contacts from index `from` on, in statements of a few hundred
   * rows. A contact `stopped` says (the campaign's own stop list) is written refused, never called;
   * the global stop list is applied by `completeCampaign`, in the database.
   */
  async insertContacts(id: string, contacts: readonly NewContact[], from: number, stopped: (number: string) => boolean, now: Date): Promise<void> {
    const at = now.toISOString();
    for (let start = 0; start < contacts.length; start += INSERT_BATCH) {
      const rows = contacts.slice(start, start + INSERT_BATCH).map((contact, i) => {
        const refused = stopped(contact.number);
        return {
          campaign_id: id,
          idx: from + start + i,
          number: contact.number,
          variables: JSON.stringify(contact.variables),
          time_zone: contact.time_zone ?? null,
          status: refused ? ('done' as const) : ('pending' as const),
          outcome: refused ? ('refused' as const) : null,
          last_error: refused ? NEVER_CALLED : null,
          next_attempt_at: 0,
          updated_at: at,
        };
      });
      await this.db.insertInto('campaign_contacts').values(rows).execute();
    }
  }

  /**
   * Every contact is written: those on the global stop list end refused, never called, the campaign
   * remembers the stop list's mark they were checked against, and it is one now — the scheduler sees
   * it. One transaction: a campaign is never seen with a stopped number still waiting.
   */
  async completeCampaign(id: string, now: Date): Promise<void> {
    const at = now.toISOString();
    await this.db.transaction().execute(async (trx) => {
      // The mark before the check: a number stopped meanwhile is either seen by the check or past the mark.
      const mark = await this.stopListMarkOn(trx);
      await sql`UPDATE campaign_contacts ${this.byNumber()}
        SET status = 'done', outcome = 'refused', last_error = ${NEVER_CALLED}, updated_at = ${at}
        WHERE campaign_id = ${id} AND status = 'pending' AND number IN (SELECT number FROM stop_list)`.execute(trx);
      await trx.updateTable('campaigns').set({ complete: 1, stop_mark: mark, updated_at: at }).where('id', '=', id).execute();
    });
  }

  /** Campaigns whose writing never finished (the process died, or a write failed), begun before `before`. */
  async incompleteCampaigns(before: Date): Promise<string[]> {
    const rows = await this.db.selectFrom('campaigns').select('id').where('complete', '=', 0).where('created_at', '<', before.toISOString()).execute();
    return rows.map((row) => z.object({ id: z.string() }).parse(row).id);
  }

  /** Deletes up to `limit` of an incomplete campaign's contacts, then the campaign; true once it is gone. */
  async discardSome(id: string, limit: number): Promise<boolean> {
    // By primary key on both databases (PostgreSQL's rowid column has no index).
    const deleted = await sql`DELETE FROM campaign_contacts
      WHERE campaign_id = ${id} AND idx IN (SELECT idx FROM campaign_contacts WHERE campaign_id = ${id} LIMIT ${limit})`.execute(this.db);
    if (Number(deleted.numAffectedRows ?? 0n) > 0) return false;
    await this.db.deleteFrom('campaigns').where('id', '=', id).execute();
    this.settingsOf.delete(id);
    return true;
  }

  async campaign(id: string): Promise<StoredCampaign<Settings> | undefined> {
    const row = await this.db.selectFrom('campaigns').select(CAMPAIGN_COLUMNS).where('id', '=', id).where('complete', '=', 1).executeTakeFirst();
    return row === undefined ? undefined : this.campaignRow.parse(row);
  }

  async campaigns(): Promise<StoredCampaign<Settings>[]> {
    const rows = await this.db.selectFrom('campaigns').select(CAMPAIGN_COLUMNS).where('complete', '=', 1).orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => this.campaignRow.parse(row));
  }

  /** Sets the state, only from one of `from` when given; true when the row changed. */
  async setState(id: string, state: CampaignState, now: Date, from?: readonly CampaignState[]): Promise<boolean> {
    let query = this.db.updateTable('campaigns').set({ state, updated_at: now.toISOString() }).where('id', '=', id);
    if (from) query = query.where('state', 'in', from);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async contacts(campaignId: string): Promise<StoredContact[]> {
    const rows = await this.db.selectFrom('campaign_contacts').select(CONTACT_COLUMNS).where('campaign_id', '=', campaignId).orderBy('idx').execute();
    return rows.map((row) => ContactRow.parse(row));
  }

  /** At most `limit` contacts after the one at `afterIndex` (-1: from the first), in order: a long list a page at a time. */
  async contactsAfter(campaignId: string, afterIndex: number, limit: number): Promise<StoredContact[]> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select(CONTACT_COLUMNS)
      .where('campaign_id', '=', campaignId)
      .where('idx', '>', afterIndex)
      .orderBy('idx')
      .limit(limit)
      .execute();
    return rows.map((row) => ContactRow.parse(row));
  }

  /** The contacts in one status, e.g. those a stopped process left in a call. */
  async contactsIn(campaignId: string, status: ContactStatus): Promise<StoredContact[]> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select(CONTACT_COLUMNS)
      .where('campaign_id', '=', campaignId)
      .where('status', '=', status)
      .orderBy('idx')
      .execute();
    return rows.map((row) => ContactRow.parse(row));
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

  async inCallCount(campaignId: string): Promise<number> {
    return this.inCallOn(this.db, campaignId);
  }

  /** Whether any contact is not done yet. */
  async hasOpenContacts(campaignId: string): Promise<boolean> {
    // From campaign_tally (kept by triggers): a few rows, however many contacts.
    const row = await this.db
      .selectFrom('campaign_tally')
      .select(sql<number>`1`.as('open'))
      .where('campaign_id', '=', campaignId)
      .where('status', '!=', 'done')
      .where('n', '>', 0)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The time zones the contacts are called in: each one's own, else `campaignZone`. They never change. */
  async zones(campaignId: string, campaignZone: string): Promise<string[]> {
    const stored = await this.db.selectFrom('campaigns').select('zones').where('id', '=', campaignId).executeTakeFirst();
    const zones = z.object({ zones: z.string().nullable() }).optional().parse(stored)?.zones;
    if (zones) return z.array(z.string()).parse(JSON.parse(zones));
    // Campaigns made before the zones were written at creation.
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select(sql<string>`COALESCE(time_zone, ${campaignZone})`.as('zone'))
      .distinct()
      .where('campaign_id', '=', campaignId)
      .execute();
    return rows.map((row) => z.object({ zone: z.string() }).parse(row).zone);
  }

  /** Changes whenever a number joins the global stop list. */
  async stopListMark(): Promise<number> {
    return this.stopListMarkOn(this.db);
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
   * Every waiting contact whose number joined the global stop list after row `since` (a `stopListMark`),
   * or is one of `numbers` (normalised), ends `refused`, never called. Returns how many did.
   */
  async refuseStopped(campaignId: string, since: number, numbers: readonly string[], now: Date): Promise<number> {
    const at = now.toISOString();
    return this.db.transaction().execute(async (trx) => {
      // From the stop list's side, through the index on numbers: a look costs the rows added since the last, not the contacts.
      const stoppedSince = await sql`UPDATE campaign_contacts ${this.byNumber()}
        SET status = 'done', outcome = 'refused', last_error = ${NEVER_CALLED}, updated_at = ${at}
        WHERE campaign_id = ${campaignId} AND number IN (SELECT number FROM stop_list WHERE rowid > ${since}) AND status = 'pending'`.execute(trx);
      let changes = Number(stoppedSince.numAffectedRows ?? 0n);
      for (const some of chunks(numbers, IN_BATCH)) {
        const listed = await sql`UPDATE campaign_contacts ${this.byNumber()}
          SET status = 'done', outcome = 'refused', last_error = ${NEVER_CALLED}, updated_at = ${at}
          WHERE campaign_id = ${campaignId} AND number IN (${sql.join(some)}) AND status = 'pending'`.execute(trx);
        changes += Number(listed.numAffectedRows ?? 0n);
      }
      return changes;
    });
  }

  /** The campaign's waiting contacts have been checked against the stop list up to `mark`. */
  async setStopMark(campaignId: string, mark: number): Promise<void> {
    await this.db.updateTable('campaigns').set({ stop_mark: mark }).where('id', '=', campaignId).execute();
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
        if ((await this.inCallOn(trx, campaignId)) >= concurrency) return { started: false, reason: 'full' };
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

  async tally(campaignId: string): Promise<ContactTally> {
    // Counts from campaign_tally (kept by triggers): a few rows, however many contacts.
    const rows = await this.db.selectFrom('campaign_tally').select(['status', 'outcome', 'called', 'n']).where('campaign_id', '=', campaignId).where('n', '>', 0).execute();
    // A waiting contact has been called before exactly when it waits for a time (a first call waits for 0): the index's first.
    const retry = await this.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '>', 0)
      .executeTakeFirst();
    return countTally(rows, At.parse(retry).at);
  }

  async contact(campaignId: string, index: number): Promise<StoredContact | undefined> {
    const row = await this.db.selectFrom('campaign_contacts').select(CONTACT_COLUMNS).where('campaign_id', '=', campaignId).where('idx', '=', index).executeTakeFirst();
    return row === undefined ? undefined : ContactRow.parse(row);
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

  async isStopped(number: string): Promise<boolean> {
    const row = await this.db.selectFrom('stop_list').select('number').where('number', '=', number).executeTakeFirst();
    return row !== undefined;
  }

  /** `number` normalised, as every number compared with the list is. */
  async addToStopList(number: string, reason: string, now: Date): Promise<void> {
    await this.db
      .insertInto('stop_list')
      .values({ number, reason, added_at: now.toISOString() })
      .onConflict((oc) => oc.column('number').doNothing())
      .execute();
  }

  /**
   * Rewrites the stop list's rows written before numbers were normalised (`0049…`, a national `0151…`)
   * as `normalise` says; a row it cannot read (undefined) is kept as it is. Returns those kept.
   */
  async normaliseStopList(normalise: (number: string) => string | undefined): Promise<string[]> {
    const kept: string[] = [];
    const Row = z.object({ number: z.string(), reason: z.string(), added_at: z.string() });
    await this.db.transaction().execute(async (trx) => {
      // Anything but E.164 digits: rows written before numbers were normalised. GLOB is SQLite's; PostgreSQL has regular expressions.
      const notDigits: Expression<SqlBool> =
        this.store.dialect === 'sqlite' ? sql<SqlBool>`(number NOT GLOB '[1-9]*' OR number GLOB '*[^0-9]*')` : sql<SqlBool>`number !~ '^[1-9][0-9]*$'`;
      const rows = await trx.selectFrom('stop_list').select(['number', 'reason', 'added_at']).where(notDigits).execute();
      for (const row of rows.map((r) => Row.parse(r))) {
        const number = normalise(row.number);
        if (number === undefined || number === row.number) {
          kept.push(row.number);
          continue;
        }
        await trx
          .insertInto('stop_list')
          .values({ number, reason: row.reason, added_at: row.added_at })
          .onConflict((oc) => oc.column('number').doNothing())
          .execute();
        await trx.deleteFrom('stop_list').where('number', '=', row.number).execute();
      }
    });
    return kept;
  }

  private async inCallOn(db: Db, campaignId: string): Promise<number> {
    const row = await db
      .selectFrom('campaign_tally')
      .select(sql<number>`COALESCE(SUM(n), 0)`.as('n'))
      .where('campaign_id', '=', campaignId)
      .where('status', 'in', ['calling', 'reached'])
      .executeTakeFirst();
    return Count.parse(row).n;
  }

  /** Rows are only ever added: the highest rowid changes exactly when the list grows (PostgreSQL's table has a rowid column for this). */
  private async stopListMarkOn(db: Db): Promise<number> {
    const { rows } = await sql<{ mark: number }>`SELECT COALESCE(MAX(rowid), 0) AS mark FROM stop_list`.execute(db);
    return z.object({ mark: z.number() }).parse(rows[0]).mark;
  }

  /** SQLite is told to find a campaign's contacts by number (its planner would take the index on status); PostgreSQL's planner chooses well. */
  private byNumber() {
    return this.store.dialect === 'sqlite' ? sql.raw('INDEXED BY campaign_contacts_number') : sql.raw('');
  }
}
