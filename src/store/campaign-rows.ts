import { z } from 'zod';

/**
 * The campaign tables' vocabulary and the progress counted from campaign_tally: what the repository
 * and the dashboard's reader thread share, without the query builder (a thread starts faster without it).
 */

/** How a contact ended. `refused`: the person asked not to be called again, or the number was on a stop list. */
export const OUTCOMES = ['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'refused'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const CAMPAIGN_STATES = ['running', 'paused', 'done'] as const;
export type CampaignState = (typeof CAMPAIGN_STATES)[number];

export const CONTACT_STATUSES = ['pending', 'calling', 'reached', 'done'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

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

const TallyRow = z.object({ status: z.enum(CONTACT_STATUSES), outcome: z.union([z.enum(OUTCOMES), z.literal('')]), called: z.number(), n: z.number() });

/** A campaign's progress counted from its campaign_tally rows (status, outcome, called, n). */
export function countTally(rows: readonly unknown[], nextRetryAt: number | null): ContactTally {
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const tally: ContactTally = { contacts: 0, called: 0, reached: 0, pending: 0, inCall: 0, nextRetryAt, outcomes };
  for (const counted of rows) {
    const { status, outcome, called, n } = TallyRow.parse(counted);
    tally.contacts += n;
    if (called) tally.called += n;
    if (status === 'reached' || (status === 'done' && called && (outcome === 'completed' || outcome === 'refused'))) tally.reached += n;
    if (status === 'pending') tally.pending += n;
    if (status === 'calling' || status === 'reached') tally.inCall += n;
    if (status === 'done' && outcome !== '') outcomes[outcome] += n;
  }
  return tally;
}
