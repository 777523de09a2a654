import type { StoredCampaign, StoredContact } from '../store/campaign-repository.js';
import { OUTCOMES, type Outcome } from './definition.js';

/** Where a campaign stands, as the API answers and the CLI shows it. */
export interface CampaignProgress {
  id: string;
  name: string;
  state: StoredCampaign['state'];
  contacts: number;
  /** Contacts called at least once. */
  called: number;
  /** Contacts a person (not a mailbox) answered: completed, or refused on the call. */
  reached: number;
  voicemail: number;
  /** Waiting for their first call or a retry. */
  pending: number;
  /** In a call, or waiting for it to be answered. */
  inCall: number;
  /** ISO time of the earliest retry waiting, if any. */
  nextRetry: string | null;
  /** Final outcomes so far. */
  outcomes: Record<Outcome, number>;
  createdAt: string;
  updatedAt: string;
}

export function progressOf(campaign: StoredCampaign, contacts: readonly StoredContact[]): CampaignProgress {
  const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  let nextRetry: number | undefined;
  for (const c of contacts) {
    if (c.status === 'done' && c.outcome) outcomes[c.outcome] += 1;
    if (c.status === 'pending' && c.attempts > 0 && (nextRetry === undefined || c.nextAttemptAt < nextRetry)) nextRetry = c.nextAttemptAt;
  }
  return {
    id: campaign.id,
    name: campaign.name,
    state: campaign.state,
    contacts: contacts.length,
    called: contacts.filter((c) => c.attempts > 0).length,
    reached: contacts.filter((c) => c.status === 'reached' || (c.status === 'done' && c.attempts > 0 && (c.outcome === 'completed' || c.outcome === 'refused'))).length,
    voicemail: outcomes.voicemail,
    pending: contacts.filter((c) => c.status === 'pending').length,
    inCall: contacts.filter((c) => c.status === 'calling' || c.status === 'reached').length,
    nextRetry: nextRetry === undefined ? null : new Date(nextRetry).toISOString(),
    outcomes,
    createdAt: campaign.createdAt,
    updatedAt: campaign.updatedAt,
  };
}

/** The one line of the CLI's live progress. */
export function progressLine(p: CampaignProgress): string {
  const retry = p.nextRetry === null ? '' : `, next retry ${p.nextRetry.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`;
  return `${p.name} [${p.state}]: called ${p.called}/${p.contacts}, reached ${p.reached}, voicemail ${p.voicemail}, pending ${p.pending}, in call ${p.inCall}${retry}`;
}
