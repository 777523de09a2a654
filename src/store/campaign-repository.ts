import { z } from 'zod';
import type { Database } from './database.js';

/** How a contact ended. `refused`: the person asked not to be called again, or the number was on a stop list. */
export const OUTCOMES = ['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'refused'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const CAMPAIGN_STATES = ['running', 'paused', 'done'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

export const CONTACT_STATUSES = ['pending', 'calling', 'reached', 'done'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

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

/** A campaign's contacts counted, for its progress, without reading them. */
export interface ContactTally {
  contacts: number;
  /** Called at least once. */
  called: number;
  /** A person answered: in the call now, or done as completed or refused after a call. */
  reached: number;
  pending: number;
  inCall: number;
  /** Epoch ms of the earliest retry waiting. */
  nextRetryAt: number | null;
  outcomes: Record<Outcome, number>;
}

/** What a transition changes of a contact. */
export type ContactChange = Partial<Pick<StoredContact, 'status' | 'outcome' | 'attempts' | 'nextAttemptAt' | 'lastSessionId' | 'lastError'>>;

function campaignRow<Settings extends CampaignSettingsShape>(settingsSchema: z.ZodType<Settings>) {
  return z
  .object({
    id: z.string(),
    name: z.string(),
    settings: z.string(),
    state: z.enum(CAMPAIGN_STATES),
    last_started_at: z.number().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (row): StoredCampaign<Settings> => ({
      id: row.id,
      name: row.name,
      settings: settingsSchema.parse(JSON.parse(row.settings)),
      state: row.state,
      lastStartedAt: row.last_started_at,
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

const TallyRow = z.object({
  contacts: z.number(),
  called: z.number(),
  reached: z.number(),
  pending: z.number(),
  in_call: z.number(),
  next_retry_at: z.number().nullable(),
});
const OutcomeCount = z.object({ outcome: z.enum(OUTCOMES), n: z.number() });

/**
 * The `campaigns`, `campaign_contacts` and `stop_list` tables. Every write is
 * on disk when the method returns (better-sqlite3 is synchronous): the
 * scheduler writes a transition before the action it guards.
 */
export class CampaignRepository<Settings extends CampaignSettingsShape> {
  private readonly statements;
  private readonly campaignRow;

  /** `settingsSchema` reads a campaign's settings back: the store keeps them as JSON and knows only their name. */
  constructor(
    private readonly db: Database,
    settingsSchema: z.ZodType<Settings>,
  ) {
    this.campaignRow = campaignRow(settingsSchema);
    const { sql } = db;
    this.statements = {
      insertCampaign: sql.prepare(
        `INSERT INTO campaigns (id, name, settings, state, created_at, updated_at) VALUES (@id, @name, @settings, 'running', @now, @now)`,
      ),
      insertContact: sql.prepare(
        `INSERT INTO campaign_contacts (campaign_id, idx, number, variables, time_zone, status, next_attempt_at, updated_at)
         VALUES (@campaign_id, @idx, @number, @variables, @time_zone, 'pending', 0, @now)`,
      ),
      campaign: sql.prepare<[string]>('SELECT * FROM campaigns WHERE id = ?'),
      campaigns: sql.prepare('SELECT * FROM campaigns ORDER BY created_at, id'),
      setState: sql.prepare<[string, string, string]>('UPDATE campaigns SET state = ?, updated_at = ? WHERE id = ?'),
      contacts: sql.prepare<[string]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? ORDER BY idx'),
      contactsAfter: sql.prepare<[string, number, number]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND idx > ? ORDER BY idx LIMIT ?'),
      contact: sql.prepare<[string, number]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND idx = ?'),
      inStatus: sql.prepare<[string, string]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND status = ? ORDER BY idx'),
      inCall: sql.prepare<[string]>(`SELECT COUNT(*) AS n FROM campaign_contacts WHERE campaign_id = ? AND status IN ('calling', 'reached')`),
      open: sql.prepare<[string]>(`SELECT 1 FROM campaign_contacts WHERE campaign_id = ? AND status != 'done' LIMIT 1`),
      zones: sql.prepare<[string, string]>(`SELECT DISTINCT COALESCE(time_zone, ?) AS zone FROM campaign_contacts WHERE campaign_id = ?`),
      // Rows are only ever added: the highest rowid changes exactly when the list grows.
      stopListMark: sql.prepare('SELECT COALESCE(MAX(rowid), 0) AS mark FROM stop_list'),
      // Walks the partial index in call order and stops at the first fit.
      nextDue: sql.prepare(
        `SELECT * FROM campaign_contacts
         WHERE campaign_id = @campaignId AND status = 'pending' AND next_attempt_at <= @now
           AND COALESCE(time_zone, @zone) IN (SELECT value FROM json_each(@openZones))
         ORDER BY next_attempt_at, idx LIMIT 1`,
      ),
      nextLater: sql.prepare<[string, number]>(
        `SELECT MIN(next_attempt_at) AS at FROM campaign_contacts WHERE campaign_id = ? AND status = 'pending' AND next_attempt_at > ?`,
      ),
      refuseStopped: sql.prepare(
        `UPDATE campaign_contacts
         SET status = 'done', outcome = 'refused', last_error = 'on the stop list: never called', updated_at = @now
         WHERE campaign_id = @campaignId AND status = 'pending'
           AND (number IN (SELECT value FROM json_each(@stopList)) OR number IN (SELECT number FROM stop_list))`,
      ),
      tally: sql.prepare<[string]>(
        `SELECT
           COUNT(*) AS contacts,
           COUNT(*) FILTER (WHERE attempts > 0) AS called,
           COUNT(*) FILTER (WHERE status = 'reached' OR (status = 'done' AND attempts > 0 AND outcome IN ('completed', 'refused'))) AS reached,
           COUNT(*) FILTER (WHERE status = 'pending') AS pending,
           COUNT(*) FILTER (WHERE status IN ('calling', 'reached')) AS in_call,
           MIN(next_attempt_at) FILTER (WHERE status = 'pending' AND attempts > 0) AS next_retry_at
         FROM campaign_contacts WHERE campaign_id = ?`,
      ),
      outcomes: sql.prepare<[string]>(
        `SELECT outcome, COUNT(*) AS n FROM campaign_contacts WHERE campaign_id = ? AND status = 'done' AND outcome IS NOT NULL GROUP BY outcome`,
      ),
      startAttempt: sql.prepare(
        `UPDATE campaign_contacts SET status = 'calling', attempts = attempts + 1, last_error = NULL, last_session_id = NULL, updated_at = @now
         WHERE campaign_id = @campaignId AND idx = @index`,
      ),
      setLastStart: sql.prepare<[number, string]>('UPDATE campaigns SET last_started_at = ? WHERE id = ?'),
      stopped: sql.prepare<[string]>('SELECT 1 FROM stop_list WHERE number = ?'),
      addStop: sql.prepare<[string, string, string]>('INSERT OR IGNORE INTO stop_list (number, reason, added_at) VALUES (?, ?, ?)'),
    };
  }

  createCampaign(id: string, settings: Settings, contacts: readonly NewContact[], now: Date): void {
    const at = now.toISOString();
    this.db.transaction(() => {
      this.statements.insertCampaign.run({ id, name: settings.name, settings: JSON.stringify(settings), now: at });
      contacts.forEach((contact, idx) =>
        this.statements.insertContact.run({
          campaign_id: id,
          idx,
          number: contact.number,
          variables: JSON.stringify(contact.variables),
          time_zone: contact.time_zone ?? null,
          now: at,
        }),
      );
    });
  }

  campaign(id: string): StoredCampaign<Settings> | undefined {
    const row = this.statements.campaign.get(id);
    return row === undefined ? undefined : this.campaignRow.parse(row);
  }

  campaigns(): StoredCampaign<Settings>[] {
    return this.statements.campaigns.all().map((row) => this.campaignRow.parse(row));
  }

  setState(id: string, state: CampaignState, now: Date): void {
    this.statements.setState.run(state, now.toISOString(), id);
  }

  contacts(campaignId: string): StoredContact[] {
    return this.statements.contacts.all(campaignId).map((row) => ContactRow.parse(row));
  }

  /** At most `limit` contacts after the one at `afterIndex` (-1: from the first), in order: a long list a page at a time. */
  contactsAfter(campaignId: string, afterIndex: number, limit: number): StoredContact[] {
    return this.statements.contactsAfter.all(campaignId, afterIndex, limit).map((row) => ContactRow.parse(row));
  }

  /** The contacts in one status, e.g. those a stopped process left in a call. */
  contactsIn(campaignId: string, status: ContactStatus): StoredContact[] {
    return this.statements.inStatus.all(campaignId, status).map((row) => ContactRow.parse(row));
  }

  inCallCount(campaignId: string): number {
    return z.object({ n: z.number() }).parse(this.statements.inCall.get(campaignId)).n;
  }

  /** Whether any contact is not done yet. */
  hasOpenContacts(campaignId: string): boolean {
    return this.statements.open.get(campaignId) !== undefined;
  }

  /** The time zones the contacts are called in: each one's own, else `campaignZone`. They never change. */
  zones(campaignId: string, campaignZone: string): string[] {
    return this.statements.zones.all(campaignZone, campaignId).map((row) => z.object({ zone: z.string() }).parse(row).zone);
  }

  /** Changes whenever a number joins the global stop list. */
  stopListMark(): number {
    return z.object({ mark: z.number() }).parse(this.statements.stopListMark.get()).mark;
  }

  /** The next contact to call: waiting, due by `now`, in one of `openZones`; earliest due first, then list order. */
  nextDue(campaignId: string, now: number, campaignZone: string, openZones: readonly string[]): StoredContact | undefined {
    const row = this.statements.nextDue.get({ campaignId, now, zone: campaignZone, openZones: JSON.stringify(openZones) });
    return row === undefined ? undefined : ContactRow.parse(row);
  }

  /** When the earliest waiting contact not yet due comes due. */
  nextDueAfter(campaignId: string, now: number): number | undefined {
    return z.object({ at: z.number().nullable() }).parse(this.statements.nextLater.get(campaignId, now)).at ?? undefined;
  }

  /**
   * Every waiting contact whose number is on the campaign's or the global stop list ends `refused`,
   * never called. Reads every waiting contact: run it when the global list changed (`stopListMark`).
   */
  refuseStopped(campaignId: string, stopList: readonly string[], now: Date): number {
    return this.statements.refuseStopped.run({ campaignId, stopList: JSON.stringify(stopList), now: now.toISOString() }).changes;
  }

  /** An attempt begins: the contact is `calling`, its attempt counted, and the campaign's pace clock set, in one write. */
  startAttempt(campaignId: string, index: number, at: number, now: Date): void {
    this.db.transaction(() => {
      this.statements.startAttempt.run({ campaignId, index, now: now.toISOString() });
      this.statements.setLastStart.run(at, campaignId);
    });
  }

  tally(campaignId: string): ContactTally {
    const row = TallyRow.parse(this.statements.tally.get(campaignId));
    const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    for (const counted of this.statements.outcomes.all(campaignId)) {
      const { outcome, n } = OutcomeCount.parse(counted);
      outcomes[outcome] = n;
    }
    return {
      contacts: row.contacts,
      called: row.called,
      reached: row.reached,
      pending: row.pending,
      inCall: row.in_call,
      nextRetryAt: row.next_retry_at,
      outcomes,
    };
  }

  contact(campaignId: string, index: number): StoredContact | undefined {
    const row = this.statements.contact.get(campaignId, index);
    return row === undefined ? undefined : ContactRow.parse(row);
  }

  updateContact(campaignId: string, index: number, change: ContactChange, now: Date): void {
    const columns: Record<keyof ContactChange, string> = {
      status: 'status',
      outcome: 'outcome',
      attempts: 'attempts',
      nextAttemptAt: 'next_attempt_at',
      lastSessionId: 'last_session_id',
      lastError: 'last_error',
    };
    const keys = (Object.keys(change) as (keyof ContactChange)[]).filter((key) => change[key] !== undefined);
    const set = keys.map((key) => `${columns[key]} = @${key}`).join(', ');
    const values: Record<string, unknown> = { campaignId, index, now: now.toISOString() };
    for (const key of keys) values[key] = change[key];
    // Few distinct column sets ever occur; better-sqlite3 caches nothing, but a prepare costs microseconds.
    this.db.sql
      .prepare(`UPDATE campaign_contacts SET ${set}${set ? ', ' : ''}updated_at = @now WHERE campaign_id = @campaignId AND idx = @index`)
      .run(values);
  }

  isStopped(number: string): boolean {
    return this.statements.stopped.get(number) !== undefined;
  }

  addToStopList(number: string, reason: string, now: Date): void {
    this.statements.addStop.run(number, reason, now.toISOString());
  }
}
