import type { z } from 'zod';
import type { Store } from './store.js';
import type { CampaignState, ContactStatus, ContactTally } from './campaign-rows.js';
import type { CampaignSettingsShape, ContactChange, NewContact, StoredCampaign, StoredContact } from './campaign-records.js';
import { CampaignClaims, type AttemptStart } from './campaign-claims.js';
import { CampaignDefinitions } from './campaign-definitions.js';
import { CampaignProgressQueries } from './campaign-progress-queries.js';
import { StopListRepository } from './stop-list-repository.js';

export { CAMPAIGN_STATES, CONTACT_STATUSES, countTally, OUTCOMES, type CampaignState, type ContactStatus, type ContactTally, type Outcome } from './campaign-rows.js';
export type { CampaignSettingsShape, ContactChange, NewContact, StoredCampaign, StoredContact } from './campaign-records.js';
export type { AttemptStart } from './campaign-claims.js';

/**
 * The `campaigns`, `campaign_contacts` and `stop_list` tables, on SQLite or PostgreSQL: the one door
 * the campaigns use, each method answered by the part whose job it is — the campaigns' definitions
 * (campaign-definitions.ts), the claims and transitions of attempts (campaign-claims.ts), the
 * progress read back (campaign-progress-queries.ts) and the stop list (stop-list-repository.ts).
 *
 * Every write is committed when its promise resolves: the scheduler awaits a transition before the
 * action it guards. Transitions that others may race (another event of the same call, another
 * Hotline on the same PostgreSQL) are conditional on the status they leave, and say whether they
 * happened.
 */
export class CampaignRepository<Settings extends CampaignSettingsShape> {
  private readonly definitions: CampaignDefinitions<Settings>;
  private readonly claims: CampaignClaims;
  private readonly progress: CampaignProgressQueries;
  private readonly stopList: StopListRepository;

  /** `settingsSchema` reads a campaign's settings back: the store keeps them as JSON and knows only their name. */
  /** `replica`: the replica claiming attempts through this repository (null: one process alone, or a reader). */
  constructor(store: Store, settingsSchema: z.ZodType<Settings>, replica: string | null = null) {
    this.stopList = new StopListRepository(store);
    this.definitions = new CampaignDefinitions(store, settingsSchema, this.stopList);
    this.claims = new CampaignClaims(store, replica);
    this.progress = new CampaignProgressQueries(store.db);
  }

  // The campaigns themselves (campaign-definitions.ts).

  beginCampaign(id: string, settings: Settings, extra: { merged: number; zones: readonly string[] }, now: Date): Promise<void> {
    return this.definitions.beginCampaign(id, settings, extra, now);
  }

  insertContacts(id: string, contacts: readonly NewContact[], from: number, stopped: (number: string) => boolean, now: Date): Promise<void> {
    return this.definitions.insertContacts(id, contacts, from, stopped, now);
  }

  completeCampaign(id: string, now: Date): Promise<void> {
    return this.definitions.completeCampaign(id, now);
  }

  incompleteCampaigns(before: Date): Promise<string[]> {
    return this.definitions.incompleteCampaigns(before);
  }

  discardSome(id: string, limit: number): Promise<boolean> {
    return this.definitions.discardSome(id, limit);
  }

  campaign(id: string): Promise<StoredCampaign<Settings> | undefined> {
    return this.definitions.campaign(id);
  }

  campaigns(): Promise<StoredCampaign<Settings>[]> {
    return this.definitions.campaigns();
  }

  setState(id: string, state: CampaignState, now: Date, from?: readonly CampaignState[]): Promise<boolean> {
    return this.definitions.setState(id, state, now, from);
  }

  zones(campaignId: string, campaignZone: string): Promise<string[]> {
    return this.definitions.zones(campaignId, campaignZone);
  }

  setStopMark(campaignId: string, mark: number): Promise<void> {
    return this.definitions.setStopMark(campaignId, mark);
  }

  // The attempts: who is due, claimed, reached, settled (campaign-claims.ts).

  nextDue(campaignId: string, now: number, campaignZone: string, openZones: readonly string[], passed: readonly number[] = []): Promise<StoredContact | undefined> {
    return this.claims.nextDue(campaignId, now, campaignZone, openZones, passed);
  }

  nextDueAfter(campaignId: string, now: number): Promise<number | undefined> {
    return this.claims.nextDueAfter(campaignId, now);
  }

  startAttempt(campaignId: string, index: number, limits: { at: number; concurrency: number; paceMs: number }, now: Date): Promise<AttemptStart> {
    return this.claims.startAttempt(campaignId, index, limits, now);
  }

  updateContact(campaignId: string, index: number, change: ContactChange, now: Date, from?: readonly ContactStatus[]): Promise<boolean> {
    return this.claims.updateContact(campaignId, index, change, now, from);
  }

  markReached(campaignId: string, index: number, sessionId: string, now: Date): Promise<boolean> {
    return this.claims.markReached(campaignId, index, sessionId, now);
  }

  passAttempt(sessionId: string, to: string): Promise<void> {
    return this.claims.passAttempt(sessionId, to);
  }

  leftBehindIn(campaignId: string, status: ContactStatus): Promise<(StoredContact & { changedAt: number })[]> {
    return this.claims.leftBehindIn(campaignId, status);
  }

  orphanedAttempts(deadAfterMs: number, limit: number): Promise<{ campaignId: string; contact: StoredContact; changedAt: number }[]> {
    return this.claims.orphanedAttempts(deadAfterMs, limit);
  }

  // What the contacts are and how far the campaign has got (campaign-progress-queries.ts).

  contacts(campaignId: string): Promise<StoredContact[]> {
    return this.progress.contacts(campaignId);
  }

  contactsAfter(campaignId: string, afterIndex: number, limit: number): Promise<StoredContact[]> {
    return this.progress.contactsAfter(campaignId, afterIndex, limit);
  }

  contactsIn(campaignId: string, status: ContactStatus): Promise<StoredContact[]> {
    return this.progress.contactsIn(campaignId, status);
  }

  contact(campaignId: string, index: number): Promise<StoredContact | undefined> {
    return this.progress.contact(campaignId, index);
  }

  inCallCount(campaignId: string): Promise<number> {
    return this.progress.inCallCount(campaignId);
  }

  hasOpenContacts(campaignId: string): Promise<boolean> {
    return this.progress.hasOpenContacts(campaignId);
  }

  tally(campaignId: string): Promise<ContactTally> {
    return this.progress.tally(campaignId);
  }

  // The global stop list (stop-list-repository.ts).

  stopListMark(): Promise<number> {
    return this.stopList.stopListMark();
  }

  refuseStopped(campaignId: string, since: number, numbers: readonly string[], now: Date): Promise<number> {
    return this.stopList.refuseStopped(campaignId, since, numbers, now);
  }

  isStopped(number: string): Promise<boolean> {
    return this.stopList.isStopped(number);
  }

  addToStopList(number: string, reason: string, now: Date): Promise<void> {
    return this.stopList.addToStopList(number, reason, now);
  }

  normaliseStopList(normalise: (number: string) => string | undefined): Promise<string[]> {
    return this.stopList.normaliseStopList(normalise);
  }
}
