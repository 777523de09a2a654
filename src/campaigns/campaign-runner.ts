import { randomUUID } from 'node:crypto';
import type { CallObserver, CallStartedInfo, CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import type { PendingCall } from '../outbound/pending-calls.js';
import type { Outcome, StoredContact } from '../store/campaign-repository.js';
import { nextCallingTime, withinCallingHours } from './calling-hours.js';
import type { Clock } from './clock.js';
import { windowsOf, type Campaign, type CampaignSettings, type CampaignStore, type Contact } from './definition.js';
import type { Dialer } from './dialer.js';
import { DO_NOT_CALL } from './do-not-call-tool.js';
import { CampaignNotFoundError } from './errors.js';

/** The tags a campaign's call carries, to find its contact again at session_start and at the end. */
const TAG_CAMPAIGN = 'campaign';
const TAG_CONTACT = 'contact';

/** A call under way: its answer timer, and the request to forget if it never rings. */
interface InFlight {
  cancelAnswerTimer: () => void;
  pending: PendingCall | undefined;
}

export interface CampaignRunnerOptions {
  repository: CampaignStore;
  dialer: Dialer;
  clock: Clock;
  logger: Logger;
}

/**
 * Runs every campaign: places the due contacts within calling hours,
 * concurrency and pace, and turns what the call core tells (started, ended,
 * never connected) and answer timeouts into outcomes and retries.
 *
 * Every transition is written before the action it guards — `calling` before
 * the call is requested, `reached` at session_start — so a process killed at
 * any moment resumes without calling anyone reached a second time.
 * Event-driven: one timer for the next moment something comes due, no polling.
 */
export class CampaignRunner implements CallObserver {
  private readonly repository: CampaignStore;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly changeListeners = new Set<() => void>();
  /** Per campaign, the stop list's mark when its waiting contacts were last checked against it. */
  private readonly checkedStops = new Map<string, number>();
  /** Per campaign, the time zones its contacts are called in (fixed at creation). */
  private readonly zones = new Map<string, readonly string[]>();
  private cancelWake: (() => void) | undefined;
  private wakeAt: number | undefined;
  private closed = false;
  private readonly log: Logger;

  constructor(private readonly options: CampaignRunnerOptions) {
    this.repository = options.repository;
    this.log = options.logger.child({ component: 'campaigns' });
  }

  /** Settles what a previous process left in flight, then starts placing calls. */
  start(): void {
    for (const campaign of this.repository.campaigns()) {
      if (campaign.state === 'done') continue;
      for (const contact of this.repository.contactsIn(campaign.id, 'reached')) {
        // Answered before the process died: done, and never called again.
        this.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome: 'completed', lastError: 'Hotline stopped during the call' }, this.date());
      }
      for (const contact of this.repository.contactsIn(campaign.id, 'calling')) {
        this.finish(campaign, contact, 'no_answer', 'Hotline stopped before the call was answered');
      }
    }
    this.tick();
  }

  create(settings: CampaignSettings, contacts: readonly Contact[]): string {
    const id = randomUUID();
    this.repository.createCampaign(id, settings, contacts, this.date());
    this.log.info({ campaignId: id, name: settings.name, contacts: contacts.length }, 'campaign created');
    this.tick();
    return id;
  }

  pause(id: string): Campaign {
    const campaign = this.require(id);
    if (campaign.state === 'running') this.repository.setState(id, 'paused', this.date());
    this.changed();
    return this.require(id);
  }

  resume(id: string): Campaign {
    const campaign = this.require(id);
    if (campaign.state === 'paused') this.repository.setState(id, 'running', this.date());
    this.tick();
    return this.require(id);
  }

  require(id: string): Campaign {
    const campaign = this.repository.campaign(id);
    if (!campaign) throw new CampaignNotFoundError(id);
    return campaign;
  }

  contacts(id: string): StoredContact[] {
    return this.repository.contacts(this.require(id).id);
  }

  /** Called after every change of a contact or campaign (the CLI's live progress, tests). Returns its removal. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Places no more calls; calls in progress go on, and are settled at the next start if the process ends. */
  close(): void {
    this.closed = true;
    this.cancelWake?.();
    for (const flight of this.inFlight.values()) flight.cancelAnswerTimer();
    this.inFlight.clear();
  }

  callStarted(info: CallStartedInfo): void {
    const found = this.contactOf(info.tags);
    if (!found || found.contact.status !== 'calling') return;
    const { campaign, contact } = found;
    this.repository.updateContact(campaign.id, contact.index, { status: 'reached', lastSessionId: info.sessionId }, this.date());
    this.inFlight.get(keyOf(campaign.id, contact.index))?.cancelAnswerTimer();
    this.changed();
  }

  callEnded(summary: CallSummary): void {
    const found = this.contactOf(summary.tags);
    if (!found || (found.contact.status !== 'reached' && found.contact.status !== 'calling')) return;
    const refused = summary.toolRuns.some((run) => run.name === DO_NOT_CALL && run.outcome === 'ok');
    const outcome: Outcome = refused ? 'refused' : summary.endReason === 'voicemail' ? 'voicemail' : 'completed';
    this.finish(found.campaign, found.contact, outcome, null);
  }

  callNotConnected(request: PendingCall, reason: string): void {
    const found = this.contactOf(request.tags);
    if (!found || found.contact.status !== 'calling') return;
    const outcome: Outcome = reason === 'busy' ? 'busy' : reason === 'no_answer' ? 'no_answer' : 'failed';
    this.finish(found.campaign, found.contact, outcome, outcome === 'failed' ? `the call did not connect: ${reason}` : null);
  }

  /** Places whatever is due now, and sets the one timer for the next moment something comes due. */
  tick(): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    let nextWake: number | undefined;
    const wakeAt = (at: number | undefined): void => {
      if (at !== undefined && (nextWake === undefined || at < nextWake)) nextWake = at;
    };
    for (const campaign of this.repository.campaigns()) {
      if (campaign.state !== 'running') continue;
      wakeAt(this.tickCampaign(campaign, now));
    }
    this.armWake(nextWake);
    this.changed();
  }

  /**
   * One campaign's due contacts placed; returns when it next needs a look, if no event will bring one.
   * Asks the database for counts and the next contact only, never for the whole list: a tick runs on
   * the event loop every call shares, at every call start and end.
   */
  private tickCampaign(campaign: Campaign, now: number): number | undefined {
    const { settings } = campaign;
    const { repository } = this;
    const stops = repository.stopListMark();
    if (this.checkedStops.get(campaign.id) !== stops) {
      if (repository.refuseStopped(campaign.id, settings.stop_list.map((n) => n.replace(/\D/g, '')), this.date()) > 0) this.changed();
      this.checkedStops.set(campaign.id, stops);
    }
    if (!repository.hasOpenContacts(campaign.id)) {
      repository.setState(campaign.id, 'done', this.date());
      this.log.info({ campaignId: campaign.id }, 'campaign done');
      return undefined;
    }
    let wake = repository.nextDueAfter(campaign.id, now);
    const wakeAt = (at: number | undefined): void => {
      if (at !== undefined && (wake === undefined || at < wake)) wake = at;
    };
    const windows = windowsOf(settings);
    const openZones: string[] = [];
    let zones = this.zones.get(campaign.id);
    if (!zones) this.zones.set(campaign.id, (zones = repository.zones(campaign.id, settings.time_zone)));
    for (const zone of zones) {
      if (withinCallingHours(now, zone, windows)) openZones.push(zone);
      else wakeAt(nextCallingTime(now, zone, windows));
    }
    if (openZones.length === 0) return wake;
    // A free place comes with an event (a call ending); no timer needed.
    for (let active = repository.inCallCount(campaign.id); active < settings.concurrency; active++) {
      const paceAt = (campaign.lastStartedAt ?? -Infinity) + settings.pace_ms;
      if (paceAt > now) {
        wakeAt(paceAt);
        break;
      }
      const contact = repository.nextDue(campaign.id, now, settings.time_zone, openZones);
      if (!contact) break;
      campaign = this.place(campaign, contact, now);
    }
    return wake;
  }

  /** Requests the call to `contact`; returns the campaign with this start as its last. */
  private place(campaign: Campaign, contact: StoredContact, now: number): Campaign {
    const { settings } = campaign;
    const key = keyOf(campaign.id, contact.index);
    // On disk before the request: a process killed now counts this as an unanswered attempt, never forgets it.
    this.repository.startAttempt(campaign.id, contact.index, now, this.date());
    const flight: InFlight = {
      pending: undefined,
      cancelAnswerTimer: this.options.clock.at(now + settings.answer_timeout_seconds * 1000, () => this.answerTimedOut(campaign.id, contact.index)),
    };
    this.inFlight.set(key, flight);
    this.log.info({ campaignId: campaign.id, contact: contact.index, attempt: contact.attempts + 1 }, 'campaign call placed');
    this.options.dialer
      .dial({
        to: contact.number,
        variables: { ...contact.variables },
        tags: { [TAG_CAMPAIGN]: campaign.id, [TAG_CONTACT]: String(contact.index) },
        aiFlowId: settings.aiFlowId,
        billingDevice: settings.billingDevice,
      })
      .then(
        (pending) => {
          flight.pending = pending;
        },
        (error: unknown) => {
          const current = this.repository.contact(campaign.id, contact.index);
          if (this.closed || current?.status !== 'calling') return;
          this.log.warn({ err: error, campaignId: campaign.id, contact: contact.index }, 'campaign call refused');
          this.finish(this.require(campaign.id), current, 'failed', error instanceof Error ? error.message : String(error));
        },
      );
    return { ...campaign, lastStartedAt: now };
  }

  private answerTimedOut(campaignId: string, index: number): void {
    const flight = this.inFlight.get(keyOf(campaignId, index));
    if (flight?.pending) this.options.dialer.forget(flight.pending);
    const contact = this.repository.contact(campaignId, index);
    if (!contact || contact.status !== 'calling') return;
    const campaign = this.require(campaignId);
    this.finish(campaign, contact, 'no_answer', null);
  }

  /** An attempt ended this way: try again later if the rules allow, else the contact is done. */
  private finish(campaign: Campaign, contact: StoredContact, outcome: Outcome, error: string | null): void {
    const key = keyOf(campaign.id, contact.index);
    this.inFlight.get(key)?.cancelAnswerTimer();
    this.inFlight.delete(key);
    const rule = outcome === 'no_answer' || outcome === 'busy' || outcome === 'voicemail' ? campaign.settings.retries[outcome] : undefined;
    const now = this.options.clock.now();
    if (rule && contact.attempts <= rule.times) {
      const nextAttemptAt = now + rule.after_minutes * 60_000;
      this.repository.updateContact(campaign.id, contact.index, { status: 'pending', outcome, nextAttemptAt, lastError: error }, this.date());
      this.log.info({ campaignId: campaign.id, contact: contact.index, outcome, retryAt: new Date(nextAttemptAt).toISOString() }, 'campaign call to be retried');
    } else {
      this.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome, lastError: error }, this.date());
      this.log.info({ campaignId: campaign.id, contact: contact.index, outcome }, 'campaign contact done');
    }
    if (!this.closed) queueMicrotask(() => this.tick());
  }

  private contactOf(tags: Readonly<Record<string, string>> | undefined): { campaign: Campaign; contact: StoredContact } | undefined {
    const campaignId = tags?.[TAG_CAMPAIGN];
    const index = Number(tags?.[TAG_CONTACT]);
    if (campaignId === undefined || !Number.isInteger(index)) return undefined;
    const campaign = this.repository.campaign(campaignId);
    const contact = campaign && this.repository.contact(campaignId, index);
    return campaign && contact ? { campaign, contact } : undefined;
  }

  private armWake(at: number | undefined): void {
    if (at === this.wakeAt) return;
    this.cancelWake?.();
    this.cancelWake = undefined;
    this.wakeAt = at;
    if (at === undefined) return;
    this.cancelWake = this.options.clock.at(at, () => {
      this.wakeAt = undefined;
      this.cancelWake = undefined;
      this.tick();
    });
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  private date(): Date {
    return new Date(this.options.clock.now());
  }
}

function keyOf(campaignId: string, index: number): string {
  return `${campaignId}:${index}`;
}
