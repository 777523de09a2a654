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

const TallyRow = z.object({ status: z.enum(CONTACT_STATUSES), outcome: z.union([z.enum(OUTCOMES), z.literal('')]), called: z.number(), n: z.number() });

/**
 * The `campaigns`, `campaign_contacts` and `stop_list` tables. Every write is
 * on disk when the method returns (better-sqlite3 is synchronous): the
 * scheduler writes a transition before the action it guards.
 */
export class CampaignRepository<Settings extends CampaignSettingsShape> {
  private readonly statements;
  private readonly campaignRow;
  /** A campaign's settings never change once written: each is parsed once, not at every look of the scheduler. */
  private readonly settingsOf = new Map<string, Settings>();

  /** `settingsSchema` reads a campaign's settings back: the store keeps them as JSON and knows only their name. */
  constructor(
    private readonly db: Database,
    settingsSchema: z.ZodType<Settings>,
  ) {
    this.campaignRow = campaignRow((id, json) => {
      let settings = this.settingsOf.get(id);
      if (!settings) this.settingsOf.set(id, (settings = settingsSchema.parse(JSON.parse(json))));
      return settings;
    });
    const { sql } = db;
    this.statements = {
      // Not complete until its last contact is written: until then no one sees it, the scheduler included.
      insertCampaign: sql.prepare(
        `INSERT INTO campaigns (id, name, settings, state, created_at, updated_at, complete, merged, zones, stop_mark)
         VALUES (@id, @name, @settings, 'running', @now, @now, 0, @merged, @zones, @stopMark)`,
      ),
      insertContact: sql.prepare(
        `INSERT INTO campaign_contacts (campaign_id, idx, number, variables, time_zone, status, next_attempt_at, updated_at)
         VALUES (@campaign_id, @idx, @number, @variables, @time_zone, 'pending', 0, @now)`,
      ),
      insertStoppedContact: sql.prepare(
        `INSERT INTO campaign_contacts (campaign_id, idx, number, variables, time_zone, status, outcome, next_attempt_at, last_error, updated_at)
         VALUES (@campaign_id, @idx, @number, @variables, @time_zone, 'done', 'refused', 0, '${NEVER_CALLED}', @now)`,
      ),
      complete: sql.prepare<[string, string]>('UPDATE campaigns SET complete = 1, updated_at = ? WHERE id = ?'),
      incomplete: sql.prepare('SELECT id FROM campaigns WHERE complete = 0'),
      deleteSomeContacts: sql.prepare<[string, number]>(
        'DELETE FROM campaign_contacts WHERE rowid IN (SELECT rowid FROM campaign_contacts WHERE campaign_id = ? LIMIT ?)',
      ),
      deleteCampaign: sql.prepare<[string]>('DELETE FROM campaigns WHERE id = ?'),
      campaign: sql.prepare<[string]>('SELECT * FROM campaigns WHERE id = ? AND complete = 1'),
      campaigns: sql.prepare('SELECT * FROM campaigns WHERE complete = 1 ORDER BY created_at, id'),
      setState: sql.prepare<[string, string, string]>('UPDATE campaigns SET state = ?, updated_at = ? WHERE id = ?'),
      contacts: sql.prepare<[string]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? ORDER BY idx'),
      contactsAfter: sql.prepare<[string, number, number]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND idx > ? ORDER BY idx LIMIT ?'),
      contact: sql.prepare<[string, number]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND idx = ?'),
      inStatus: sql.prepare<[string, string]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND status = ? ORDER BY idx'),
      // Counts from campaign_tally (kept by triggers): a few rows, however many contacts.
      inCall: sql.prepare<[string]>(`SELECT COALESCE(SUM(n), 0) AS n FROM campaign_tally WHERE campaign_id = ? AND status IN ('calling', 'reached')`),
      open: sql.prepare<[string]>(`SELECT 1 FROM campaign_tally WHERE campaign_id = ? AND status != 'done' AND n > 0 LIMIT 1`),
      storedZones: sql.prepare<[string]>('SELECT zones FROM campaigns WHERE id = ?'),
      // Campaigns made before the zones were written at creation.
      zones: sql.prepare<[string, string]>(`SELECT DISTINCT COALESCE(time_zone, ?) AS zone FROM campaign_contacts WHERE campaign_id = ?`),
      // Rows are only ever added: the highest rowid changes exactly when the list grows.
      stopListMark: sql.prepare('SELECT COALESCE(MAX(rowid), 0) AS mark FROM stop_list'),
      // Walks the partial index in call order and stops at the first fit.
      nextDue: sql.prepare(
        `SELECT * FROM campaign_contacts
         WHERE campaign_id = @campaignId AND status = 'pending' AND next_attempt_at <= @now
           AND COALESCE(time_zone, @zone) IN (SELECT value FROM json_each(@openZones))
           AND idx NOT IN (SELECT value FROM json_each(@passed))
         ORDER BY next_attempt_at, idx LIMIT 1`,
      ),
      nextLater: sql.prepare<[string, number]>(
        `SELECT MIN(next_attempt_at) AS at FROM campaign_contacts WHERE campaign_id = ? AND status = 'pending' AND next_attempt_at > ?`,
      ),
      // From the stop list's side, through the index on numbers: a look costs the rows added since the last, not the contacts.
      refuseStoppedSince: sql.prepare(
        `UPDATE campaign_contacts INDEXED BY campaign_contacts_number
         SET status = 'done', outcome = 'refused', last_error = '${NEVER_CALLED}', updated_at = @now
         WHERE campaign_id = @campaignId AND number IN (SELECT number FROM stop_list WHERE rowid > @since) AND status = 'pending'`,
      ),
      refuseListed: sql.prepare(
        `UPDATE campaign_contacts INDEXED BY campaign_contacts_number
         SET status = 'done', outcome = 'refused', last_error = '${NEVER_CALLED}', updated_at = @now
         WHERE campaign_id = @campaignId AND number IN (SELECT value FROM json_each(@numbers)) AND status = 'pending'`,
      ),
      setStopMark: sql.prepare<[number, string]>('UPDATE campaigns SET stop_mark = ? WHERE id = ?'),
      tally: sql.prepare<[string]>('SELECT status, outcome, called, n FROM campaign_tally WHERE campaign_id = ? AND n > 0'),
      // A waiting contact has been called before exactly when it waits for a time (a first call waits for 0): the index's first.
      nextRetry: sql.prepare<[string]>(
        `SELECT MIN(next_attempt_at) AS at FROM campaign_contacts WHERE campaign_id = ? AND status = 'pending' AND next_attempt_at > 0`,
      ),
      startAttempt: sql.prepare(
        `UPDATE campaign_contacts SET status = 'calling', attempts = attempts + 1, last_error = NULL, last_session_id = NULL, updated_at = @now
         WHERE campaign_id = @campaignId AND idx = @index`,
      ),
      setLastStart: sql.prepare<[number, string]>('UPDATE campaigns SET last_started_at = ? WHERE id = ?'),
      stopped: sql.prepare<[string]>('SELECT 1 FROM stop_list WHERE number = ?'),
      addStop: sql.prepare<[string, string, string]>('INSERT OR IGNORE INTO stop_list (number, reason, added_at) VALUES (?, ?, ?)'),
      // Anything but E.164 digits: rows written before numbers were normalised.
      unnormalisedStops: sql.prepare(`SELECT number, reason, added_at FROM stop_list WHERE number NOT GLOB '[1-9]*' OR number GLOB '*[^0-9]*'`),
      deleteStop: sql.prepare<[string]>('DELETE FROM stop_list WHERE number = ?'),
    };
  }

  /**
   * A new campaign, invisible until `completeCampaign`: its contacts are written in between, a slice
   * at a time (`insertContacts`). `stopMark` is the stop list's mark before its contacts were checked.
   */
  beginCampaign(id: string, settings: Settings, extra: { merged: number; zones: readonly string[]; stopMark: number }, now: Date): void {
    this.statements.insertCampaign.run({
      id,
      name: settings.name,
      settings: JSON.stringify(settings),
      now: now.toISOString(),
      merged: extra.merged,
      zones: JSON.stringify(extra.zones),
      stopMark: extra.stopMark,
    });
  }

  /**
   * Writes contacts from `from` on, in one transaction, until `enough()` says the slice has had its
   * time; returns where the next slice starts. A contact `stopped` says is written refused, never called.
   */
  insertContacts(
    id: string,
    contacts: readonly NewContact[],
    from: number,
    options: { stopped: (number: string) => boolean; enough: () => boolean },
    now: Date,
  ): number {
    const at = now.toISOString();
    return this.db.transaction(() => {
      let idx = from;
      while (idx < contacts.length) {
        const contact = contacts[idx]!;
        const row = {
          campaign_id: id,
          idx,
          number: contact.number,
          variables: JSON.stringify(contact.variables),
          time_zone: contact.time_zone ?? null,
          now: at,
        };
        (options.stopped(contact.number) ? this.statements.insertStoppedContact : this.statements.insertContact).run(row);
        idx += 1;
        if (idx % 64 === 0 && options.enough()) break;
      }
      return idx;
    });
  }

  /** Every contact is written: the campaign is one now, and the scheduler sees it. */
  completeCampaign(id: string, now: Date): void {
    this.statements.complete.run(now.toISOString(), id);
  }

  /** Campaigns whose writing never finished (the process died, or a write failed). */
  incompleteCampaigns(): string[] {
    return this.statements.incomplete.all().map((row) => z.object({ id: z.string() }).parse(row).id);
  }

  /** Deletes up to `limit` of an incomplete campaign's contacts, then the campaign; true once it is gone. */
  discardSome(id: string, limit: number): boolean {
    if (this.statements.deleteSomeContacts.run(id, limit).changes > 0) return false;
    this.statements.deleteCampaign.run(id);
    this.settingsOf.delete(id);
    return true;
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
    const stored = z.object({ zones: z.string().nullable() }).optional().parse(this.statements.storedZones.get(campaignId))?.zones;
    if (stored) return z.array(z.string()).parse(JSON.parse(stored));
    return this.statements.zones.all(campaignZone, campaignId).map((row) => z.object({ zone: z.string() }).parse(row).zone);
  }

  /** Changes whenever a number joins the global stop list. */
  stopListMark(): number {
    return z.object({ mark: z.number() }).parse(this.statements.stopListMark.get()).mark;
  }

  /**
   * The next contact to call: waiting, due by `now`, in one of `openZones`, not one of `passed` (by index);
   * earliest due first, then list order.
   */
  nextDue(campaignId: string, now: number, campaignZone: string, openZones: readonly string[], passed: readonly number[] = []): StoredContact | undefined {
    const row = this.statements.nextDue.get({
      campaignId,
      now,
      zone: campaignZone,
      openZones: JSON.stringify(openZones),
      passed: JSON.stringify(passed),
    });
    return row === undefined ? undefined : ContactRow.parse(row);
  }

  /** When the earliest waiting contact not yet due comes due. */
  nextDueAfter(campaignId: string, now: number): number | undefined {
    return z.object({ at: z.number().nullable() }).parse(this.statements.nextLater.get(campaignId, now)).at ?? undefined;
  }

  /**
   * Every waiting contact whose number joined the global stop list after row `since` (a `stopListMark`),
   * or is one of `numbers` (normalised), ends `refused`, never called. Returns how many did.
   */
  refuseStopped(campaignId: string, since: number, numbers: readonly string[], now: Date): number {
    const at = now.toISOString();
    return this.db.transaction(() => {
      let changes = this.statements.refuseStoppedSince.run({ campaignId, since, now: at }).changes;
      if (numbers.length > 0) changes += this.statements.refuseListed.run({ campaignId, numbers: JSON.stringify(numbers), now: at }).changes;
      return changes;
    });
  }

  /** The campaign's waiting contacts have been checked against the stop list up to `mark`. */
  setStopMark(campaignId: string, mark: number): void {
    this.statements.setStopMark.run(mark, campaignId);
  }

  /** An attempt begins: the contact is `calling`, its attempt counted, and the campaign's pace clock set, in one write. */
  startAttempt(campaignId: string, index: number, at: number, now: Date): void {
    this.db.transaction(() => {
      this.statements.startAttempt.run({ campaignId, index, now: now.toISOString() });
      this.statements.setLastStart.run(at, campaignId);
    });
  }

  tally(campaignId: string): ContactTally {
    const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    const tally: ContactTally = { contacts: 0, called: 0, reached: 0, pending: 0, inCall: 0, nextRetryAt: null, outcomes };
    for (const counted of this.statements.tally.all(campaignId)) {
      const { status, outcome, called, n } = TallyRow.parse(counted);
      tally.contacts += n;
      if (called) tally.called += n;
      if (status === 'reached' || (status === 'done' && called && (outcome === 'completed' || outcome === 'refused'))) tally.reached += n;
      if (status === 'pending') tally.pending += n;
      if (status === 'calling' || status === 'reached') tally.inCall += n;
      if (status === 'done' && outcome !== '') outcomes[outcome] += n;
    }
    tally.nextRetryAt = z.object({ at: z.number().nullable() }).parse(this.statements.nextRetry.get(campaignId)).at;
    return tally;
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

  /** `number` normalised, as every number compared with the list is. */
  addToStopList(number: string, reason: string, now: Date): void {
    this.statements.addStop.run(number, reason, now.toISOString());
  }

  /**
   * Rewrites the stop list's rows written before numbers were normalised (`0049…`, a national `0151…`)
   * as `normalise` says; a row it cannot read (undefined) is kept as it is. Returns those kept.
   */
  normaliseStopList(normalise: (number: string) => string | undefined): string[] {
    const kept: string[] = [];
    const Row = z.object({ number: z.string(), reason: z.string(), added_at: z.string() });
    this.db.transaction(() => {
      for (const row of this.statements.unnormalisedStops.all().map((r) => Row.parse(r))) {
        const number = normalise(row.number);
        if (number === undefined || number === row.number) {
          kept.push(row.number);
          continue;
        }
        this.statements.addStop.run(number, row.reason, row.added_at);
        this.statements.deleteStop.run(row.number);
      }
    });
    return kept;
  }
}
