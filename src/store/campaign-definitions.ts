/**
 * The campaigns themselves (`campaigns`): written with their contacts, read back with their settings,
 * paused, resumed and done. Apart from the contacts' claims and progress because a campaign's row
 * changes rarely, and its settings are parsed once and kept.
 */
import { z } from 'zod';
import { sql } from 'kysely';
import type { Db } from './schema.js';
import type { Store } from './store.js';
import { CAMPAIGN_STATES, type CampaignState } from './campaign-rows.js';
import { NEVER_CALLED, type CampaignSettingsShape, type NewContact, type StoredCampaign } from './campaign-records.js';
import { stopListMarkOn, type StopListRepository } from './stop-list-repository.js';

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

const CAMPAIGN_COLUMNS = ['id', 'name', 'settings', 'state', 'last_started_at', 'merged', 'stop_mark', 'created_at', 'updated_at'] as const;

/** Contacts per INSERT: about ten parameters each, well inside either database's limit on one statement's parameters. */
const INSERT_BATCH = 500;

export class CampaignDefinitions<Settings extends CampaignSettingsShape> {
  private readonly db: Db;
  private readonly campaignRow;
  /** A campaign's settings never change once written: each is parsed once, not at every look of the scheduler. */
  private readonly settingsOf = new Map<string, Settings>();

  /** `settingsSchema` reads a campaign's settings back: the store keeps them as JSON and knows only their name. */
  constructor(
    store: Store,
    settingsSchema: z.ZodType<Settings>,
    private readonly stopList: StopListRepository,
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
      const mark = await stopListMarkOn(trx);
      await sql`UPDATE campaign_contacts ${this.stopList.byNumber()}
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

  /** The campaign's waiting contacts have been checked against the stop list up to `mark`. */
  async setStopMark(campaignId: string, mark: number): Promise<void> {
    await this.db.updateTable('campaigns').set({ stop_mark: mark }).where('id', '=', campaignId).execute();
  }
}
