/**
 * What every part of the campaign runner shares: the store, the dialer, the clock and the log, whether
 * it still dials, the calls under way, and the work it must wait for before the store closes. One
 * object the scheduler, the calls and the outcomes all hold, so that each reads the same state.
 */
import type { PendingCall } from '../call/ports/outbound-request.js';
import type { Logger } from '../logger.js';
import type { Clock } from './clock.js';
import type { Campaign, CampaignStore } from './definition.js';
import type { Dialer } from './dialer.js';
import { CampaignNotFoundError } from './errors.js';

/** The tags a campaign's call carries, to find its contact again at session_start and at the end. */
export const TAG_CAMPAIGN = 'campaign';
export const TAG_CONTACT = 'contact';

/** A call under way: its answer timer, and the request to forget if it never rings. */
export interface InFlight {
  cancelAnswerTimer: () => void;
  pending: PendingCall | undefined;
}

export interface CampaignRunnerOptions {
  repository: CampaignStore;
  dialer: Dialer;
  clock: Clock;
  logger: Logger;
  /** DEFAULT_COUNTRY_CODE: stop lists written before numbers were normalised are read with it. */
  defaultCountryCode?: string | undefined;
}

/** The key of a contact's call in `inFlight`: its campaign and index, as its tags carry them. */
export function keyOf(campaignId: string | undefined, index: string | undefined): string | undefined {
  return campaignId === undefined || index === undefined ? undefined : `${campaignId}:${index}`;
}

export class RunnerShared {
  readonly repository: CampaignStore;
  readonly log: Logger;
  /** Calls requested and not yet settled here, by `keyOf`. */
  readonly inFlight = new Map<string, InFlight>();
  /** Places no more calls, and follows none. */
  closed = false;
  /** Shutdown has begun: nothing new is dialled, what is under way is still followed. */
  dialling = true;
  /** The work under way (ticks, events being written): `settled` waits for it. */
  private readonly work = new Set<Promise<void>>();
  private readonly changeListeners = new Set<() => void>();

  constructor(readonly options: CampaignRunnerOptions) {
    this.repository = options.repository;
    this.log = options.logger.child({ component: 'campaigns' });
  }

  async require(id: string): Promise<Campaign> {
    const campaign = await this.repository.campaign(id);
    if (!campaign) throw new CampaignNotFoundError(id);
    return campaign;
  }

  /** Called after every change of a contact or campaign (the CLI's live progress, tests). Returns its removal. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Resolves once every tick and every event's write begun so far has finished (before the store closes; tests). */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work]);
  }

  /** Keeps `work` until it settles, for `settled`; a failure is logged, never an unhandled rejection. */
  track(work: Promise<void>, failure: string): void {
    const tracked = work.catch((error: unknown) => this.log.error({ err: error }, failure));
    this.work.add(tracked);
    void tracked.finally(() => this.work.delete(tracked));
  }

  changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  date(): Date {
    return new Date(this.options.clock.now());
  }
}
