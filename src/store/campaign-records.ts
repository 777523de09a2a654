/**
 * The campaign tables' rows as the repositories read and write them: the shapes of a campaign and a
 * contact, and their parsers. Shared by the parts of the campaign repository (definitions, claims,
 * progress, stop list), each of which reads contacts back the same way.
 */
import { z } from 'zod';
import { CONTACT_STATUSES, OUTCOMES, type CampaignState, type ContactStatus, type Outcome } from './campaign-rows.js';

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
export const NEVER_CALLED = 'on the stop list: never called';

/** What a transition changes of a contact. */
export type ContactChange = Partial<Pick<StoredContact, 'status' | 'outcome' | 'attempts' | 'nextAttemptAt' | 'lastSessionId' | 'lastError'>>;

export const ContactRow = z
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


/** The columns a contact is read back with (PostgreSQL's tables also have a `rowid` of their own). */
export const CONTACT_COLUMNS = [
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

/** A MIN() or MAX() of epoch ms: null when no row counted. */
export const At = z.object({ at: z.number().nullable() });
