import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CallObserver, CallStartedInfo, CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { CallNotPlacedError, NumberInCallError, NumberStoppedError, OutboundNotConfiguredError, ShuttingDownError } from '../outbound/errors.js';
import type { PendingCall } from '../outbound/pending-calls.js';
import { phoneKey } from '../outbound/phone-number.js';
import type { Outcome, StoredContact } from '../store/campaign-repository.js';
import { nextCallingTime, withinCallingHours } from './calling-hours.js';
import type { Clock } from './clock.js';
import { windowsOf, type Campaign, type CampaignSettings, type CampaignStore, type Contact } from './definition.js';
import type { Dialer } from './dialer.js';
import { DO_NOT_CALL } from './do-not-call-tool.js';
import { CampaignNotFoundError } from './errors.js';
import { Slices } from './slices.js';

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
  /** DEFAULT_COUNTRY_CODE: stop lists written before numbers were normalised are read with it. */
  defaultCountryCode?: string | undefined;
}

/** Contacts of an incomplete campaign deleted per slice. */
const DISCARD_BATCH = 2_000;

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
  /** Per campaign, the time zones its contacts are called in (fixed at creation). */
  private readonly zones = new Map<string, readonly string[]>();
  /** Campaigns already said to wait for the AIFLOW_* settings, so it is logged once, not at every look. */
  private readonly waitingForSettings = new Set<string>();
  private cancelWake: (() => void) | undefined;
  private wakeAt: number | undefined;
  private closed = false;
  /** Shutdown has begun: nothing new is dialled, what is under way is still followed. */
  private dialling = true;
  /** A contact waits because its number is in a call elsewhere: any call's end is a reason to look again. */
  private waitingForLine = false;
  private readonly log: Logger;

  constructor(private readonly options: CampaignRunnerOptions) {
    this.repository = options.repository;
    this.log = options.logger.child({ component: 'campaigns' });
  }

  /** Settles what a previous process left in flight, then starts placing calls. */
  start(): void {
    this.normaliseStopList();
    for (const id of this.repository.incompleteCampaigns()) void this.discard(id);
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

  /** False from the moment shutdown begins. */
  get isDialling(): boolean {
    return this.dialling && !this.closed;
  }

  /** The AIFLOW_* variables a campaign with these settings would lack; empty when its calls can be placed. */
  missing(settings: Pick<CampaignSettings, 'aiFlowId' | 'billingDevice'>): string[] {
    return this.options.dialer.missing(settings);
  }

  /**
   * Stores the campaign and starts it. Refused while shutting down and without the AIFLOW_* settings its
   * calls need (nothing stored then). `contacts` have distinct, normalised numbers, as `readCampaign`
   * gives them; they are written a slice at a time, and the campaign exists once the last is in.
   */
  async create(settings: CampaignSettings, contacts: readonly Contact[], merged = 0, slices = new Slices()): Promise<string> {
    if (!this.dialling) throw new ShuttingDownError();
    const missing = this.missing(settings);
    if (missing.length > 0) throw new OutboundNotConfiguredError(missing);
    const { repository } = this;
    const id = randomUUID();
    const zones = [...new Set(contacts.map((c) => c.time_zone ?? settings.time_zone))];
    const ownStops = new Set(settings.stop_list);
    // Checked against the stop list while written; a number stopped meanwhile is found by its mark.
    const stopMark = repository.stopListMark();
    repository.beginCampaign(id, settings, { merged, zones, stopMark }, this.date());
    try {
      const stopped = (number: string): boolean => ownStops.has(number) || repository.isStopped(number);
      for (let from = 0; from < contacts.length; ) {
        from = repository.insertContacts(id, contacts, from, { stopped, enough: () => slices.enough() }, this.date());
        if (from < contacts.length) await slices.next();
      }
      repository.completeCampaign(id, this.date());
    } catch (error) {
      void this.discard(id);
      throw error;
    }
    this.log.info({ campaignId: id, name: settings.name, contacts: contacts.length, merged, longestSliceMs: Math.round(slices.longestMs) }, 'campaign created');
    this.tick();
    return id;
  }

  pause(id: string): Campaign {
    const campaign = this.require(id);
    if (campaign.state === 'running') this.repository.setState(id, 'paused', this.date());
    this.changed();
    return this.require(id);
  }

  /** Refused (and left paused) without the AIFLOW_* settings its calls need: resumed, it would only burn its contacts. */
  resume(id: string): Campaign {
    const campaign = this.require(id);
    const missing = this.missing(campaign.settings);
    if (campaign.state === 'paused' && missing.length > 0) throw new OutboundNotConfiguredError(missing);
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

  /**
   * Shutdown begins: nothing new is dialled from now on, while calls in progress (and those already
   * requested) are still followed to their outcome. The campaigns stay `running` in the store, so they
   * go on after the restart.
   */
  stopDialling(): void {
    this.dialling = false;
    this.cancelWake?.();
    this.cancelWake = undefined;
    this.wakeAt = undefined;
  }

  /** Places no more calls; calls in progress go on, and are settled at the next start if the process ends. */
  close(): void {
    this.dialling = false;
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
    this.lineFreed();
    const found = this.contactOf(summary.tags);
    if (!found || (found.contact.status !== 'reached' && found.contact.status !== 'calling')) return;
    const refused = summary.toolRuns.some((run) => run.name === DO_NOT_CALL && run.outcome === 'ok');
    const outcome: Outcome = refused ? 'refused' : summary.endReason === 'voicemail' ? 'voicemail' : 'completed';
    this.finish(found.campaign, found.contact, outcome, null);
  }

  callNotConnected(request: PendingCall, reason: string): void {
    this.lineFreed();
    const found = this.contactOf(request.tags);
    if (!found || found.contact.status !== 'calling') return;
    const outcome: Outcome = reason === 'busy' ? 'busy' : reason === 'no_answer' ? 'no_answer' : 'failed';
    this.finish(found.campaign, found.contact, outcome, outcome === 'failed' ? `the call did not connect: ${reason}` : null);
  }

  /** Places whatever is due now, and sets the one timer for the next moment something comes due. */
  tick(): void {
    if (this.closed || !this.dialling) return;
    this.waitingForLine = false;
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
    const { repository, options } = this;
    this.checkStopList(campaign);
    if (!repository.hasOpenContacts(campaign.id)) {
      repository.setState(campaign.id, 'done', this.date());
      this.log.info({ campaignId: campaign.id }, 'campaign done');
      return undefined;
    }
    // Without the AIFLOW_* settings every call would fail: the contacts wait, none is spent.
    const missing = this.missing(settings);
    if (missing.length > 0) {
      if (!this.waitingForSettings.has(campaign.id)) this.log.warn({ campaignId: campaign.id, missing }, 'campaign waits: outbound calling is not configured');
      this.waitingForSettings.add(campaign.id);
      return undefined;
    }
    this.waitingForSettings.delete(campaign.id);
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
    /** Contacts whose number is in a call elsewhere: they wait, not failed, no attempt counted. */
    const passed: number[] = [];
    // A free place comes with an event (a call ending); no timer needed.
    for (let active = repository.inCallCount(campaign.id); active < settings.concurrency; ) {
      const paceAt = (campaign.lastStartedAt ?? -Infinity) + settings.pace_ms;
      if (paceAt > now) {
        wakeAt(paceAt);
        break;
      }
      const contact = repository.nextDue(campaign.id, now, settings.time_zone, openZones, passed);
      if (!contact) break;
      const refused = options.dialer.refusal(contact.number, settings);
      if (refused instanceof NumberInCallError) {
        passed.push(contact.index);
        // The call's end comes as an event; a request nobody answers expires.
        this.waitingForLine = true;
        wakeAt(refused.until === undefined ? undefined : refused.until + 1);
        continue;
      }
      if (refused instanceof NumberStoppedError) {
        this.refuseStopped(campaign, contact);
        continue;
      }
      // Shutting down: nothing more now.
      if (refused) break;
      campaign = this.place(campaign, contact, now);
      active += 1;
    }
    return wake;
  }

  /**
   * Waiting contacts on a stop list end `refused`, never called: those whose number joined the global
   * list since this campaign last looked (its mark), and — once, for a campaign made before numbers were
   * normalised — those on its own list read normalised. New campaigns are checked as they are written.
   */
  private checkStopList(campaign: Campaign): void {
    const mark = this.repository.stopListMark();
    if (campaign.stopMark === mark) return;
    const own = campaign.stopMark < 0 ? campaign.settings.stop_list.map((n) => phoneKey(n, { defaultCountryCode: this.options.defaultCountryCode })) : [];
    if (this.repository.refuseStopped(campaign.id, Math.max(0, campaign.stopMark), own, this.date()) > 0) this.changed();
    this.repository.setStopMark(campaign.id, mark);
  }

  /** Found on the global stop list at the moment of dialling (put there by another campaign's call just now). */
  private refuseStopped(campaign: Campaign, contact: StoredContact): void {
    const lastError = contact.attempts === 0 ? 'on the stop list: never called' : 'on the stop list: not called again';
    this.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome: 'refused', lastError }, this.date());
    this.log.info({ campaignId: campaign.id, contact: contact.index }, 'campaign contact on the stop list: not called');
  }

  /** A call ended or never connected: a number some contact waited for may be free now. */
  private lineFreed(): void {
    if (this.waitingForLine && this.dialling && !this.closed) queueMicrotask(() => this.tick());
  }

  /** Every row of the global stop list in the form numbers are compared in (rows from before normalisation). */
  private normaliseStopList(): void {
    const { defaultCountryCode } = this.options;
    const kept = this.repository.normaliseStopList((number) => {
      const key = phoneKey(number, { defaultCountryCode });
      return /^[1-9]\d{7,14}$/.test(key) ? key : undefined;
    });
    if (kept.length > 0) {
      this.log.warn(
        { numbers: kept.length, defaultCountryCode: defaultCountryCode ?? null },
        'stop list rows that are not phone numbers Hotline can read (a national number needs DEFAULT_COUNTRY_CODE): they stop nothing until corrected',
      );
    }
  }

  /** Deletes a campaign whose writing never finished, a slice at a time. */
  private async discard(id: string): Promise<void> {
    try {
      while (!this.closed && !this.repository.discardSome(id, DISCARD_BATCH)) await nextTurn();
    } catch (error) {
      this.log.error({ err: error, campaignId: id }, 'an incomplete campaign could not be deleted');
    }
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
          if (error instanceof CallNotPlacedError) {
            // Refused here, before anything reached the service (checked just before, so hardly ever): not an attempt.
            this.repository.updateContact(campaign.id, contact.index, { status: 'pending', attempts: current.attempts - 1 }, this.date());
            this.inFlight.get(key)?.cancelAnswerTimer();
            this.inFlight.delete(key);
            return;
          }
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
