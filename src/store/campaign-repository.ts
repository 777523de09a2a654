import { z } from 'zod';
import {
  CAMPAIGN_STATES,
  CampaignSettingsSchema,
  CONTACT_STATUSES,
  OUTCOMES,
  type CampaignSettings,
  type CampaignState,
  type Contact,
  type ContactStatus,
  type Outcome,
} from '../campaigns/definition.js';
import type { Database } from './database.js';

export interface StoredCampaign {
  readonly id: string;
  readonly name: string;
  readonly settings: CampaignSettings;
  readonly state: CampaignState;
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

/** What a transition changes of a contact. */
export type ContactChange = Partial<Pick<StoredContact, 'status' | 'outcome' | 'attempts' | 'nextAttemptAt' | 'lastSessionId' | 'lastError'>>;

const CampaignRow = z
  .object({
    id: z.string(),
    name: z.string(),
    settings: z.string(),
    state: z.enum(CAMPAIGN_STATES),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (row): StoredCampaign => ({
      id: row.id,
      name: row.name,
      settings: CampaignSettingsSchema.parse(JSON.parse(row.settings)),
      state: row.state,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  );

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

/**
 * The `campaigns`, `campaign_contacts` and `stop_list` tables. Every write is
 * on disk when the method returns (better-sqlite3 is synchronous): the
 * scheduler writes a transition before the action it guards.
 */
export class CampaignRepository {
  private readonly statements;

  constructor(private readonly db: Database) {
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
      contact: sql.prepare<[string, number]>('SELECT * FROM campaign_contacts WHERE campaign_id = ? AND idx = ?'),
      stopped: sql.prepare<[string]>('SELECT 1 FROM stop_list WHERE number = ?'),
      addStop: sql.prepare<[string, string, string]>('INSERT OR IGNORE INTO stop_list (number, reason, added_at) VALUES (?, ?, ?)'),
    };
  }

  createCampaign(id: string, settings: CampaignSettings, contacts: readonly Contact[], now: Date): void {
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

  campaign(id: string): StoredCampaign | undefined {
    const row = this.statements.campaign.get(id);
    return row === undefined ? undefined : CampaignRow.parse(row);
  }

  campaigns(): StoredCampaign[] {
    return this.statements.campaigns.all().map((row) => CampaignRow.parse(row));
  }

  setState(id: string, state: CampaignState, now: Date): void {
    this.statements.setState.run(state, now.toISOString(), id);
  }

  contacts(campaignId: string): StoredContact[] {
    return this.statements.contacts.all(campaignId).map((row) => ContactRow.parse(row));
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
