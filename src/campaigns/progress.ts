import type { ContactTally, Outcome, StoredCampaign } from '../store/campaign-repository.js';

/** Where a campaign stands, as the API answers and the CLI shows it. */
export interface CampaignProgress {
  id: string;
  name: string;
  state: StoredCampaign['state'];
  contacts: number;
  /** Rows of its list merged at creation into an earlier row with the same number: one person, called once. */
  merged: number;
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

export function progressOf(campaign: StoredCampaign, tally: ContactTally): CampaignProgress {
  return {
    id: campaign.id,
    name: campaign.name,
    state: campaign.state,
    contacts: tally.contacts,
    merged: campaign.merged,
    called: tally.called,
    reached: tally.reached,
    voicemail: tally.outcomes.voicemail,
    pending: tally.pending,
    inCall: tally.inCall,
    nextRetry: tally.nextRetryAt === null ? null : new Date(tally.nextRetryAt).toISOString(),
    outcomes: { ...tally.outcomes },
    createdAt: campaign.createdAt,
    updatedAt: campaign.updatedAt,
  };
}

/** The one line of the CLI's live progress. */
export function progressLine(p: CampaignProgress): string {
  const retry = p.nextRetry === null ? '' : `, next retry ${p.nextRetry.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`;
  const merged = p.merged > 0 ? `, ${p.merged} duplicate ${p.merged === 1 ? 'row' : 'rows'} merged` : '';
  return `${p.name} [${p.state}]: called ${p.called}/${p.contacts}, reached ${p.reached}, voicemail ${p.voicemail}, pending ${p.pending}, in call ${p.inCall}${retry}${merged}`;
}
