import { randomUUID } from 'node:crypto';
import type { CallObserver, CallStartedInfo, CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { CallNotPlacedError, NumberInCallError, NumberStoppedError, OutboundNotConfiguredError, ShuttingDownError } from '../outbound/errors.js';
import type { PendingCall } from '../call/ports/outbound-request.js';
import { phoneKey } from '../phone/phone-number.js';
import type { ContactStatus, Outcome, StoredContact } from '../store/campaign-repository.js';
import { nextCallingTime, withinCallingHours } from './calling-hours.js';
import type { Clock } from './clock.js';
import { windowsOf, type Campaign, type CampaignSettings, type CampaignStore, type Contact } from './definition.js';
import type { Dialer } from './dialer.js';
import { DO_NOT_CALL } from './do-not-call-tool.js';
import { CampaignNotFoundError } from './errors.js';
import { dueAgainAt } from './refused-dial.js';
import { Slices } from './slices.js';
import { normaliseStopList } from './stop-list-keys.js';

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

/** Contacts of an incomplete campaign deleted per statement. */
const DISCARD_BATCH = 2_000;
/**
 * An incomplete campaign begun longer ago than this is abandoned (its writer died): deleted at a start.
 * A younger one may be another Hotline's on the same PostgreSQL, still being written.
 */
const ABANDONED_AFTER_MS = 60 * 60_000;
/** Orphaned attempts settled per look (a look comes with every heartbeat). */
const ORPHANS_PER_LOOK = 100;
/** A tick the store failed is tried again after this long, if no event comes first. */
const RETRY_AFTER_FAILURE_MS = 5_000;
/** Contacts written per turn: each batch is a few statements on the store, and the calls' events run between batches. */
const WRITE_BATCH = 2_000;

/**
 * Runs every campaign: places the due contacts within calling hours,
 * concurrency and pace, and turns what the call core tells (started, ended,
 * never connected) and answer timeouts into outcomes and retries.
 *
 * Every transition is committed before the action it guards — `calling` before
 * the call is requested, `reached` at session_start — so a process killed at
 * any moment resumes without calling anyone reached a second time.
 * Event-driven: one timer for the next moment something comes due, no polling.
 *
 * The store answers asynchronously, so what was one synchronous step is now several awaits, and
 * other events run in between. What keeps it right:
 * - one tick at a time in this process (`tick` while one runs asks for one more after it), so a
 *   tick's local view (the pace, the contacts passed) is never shared with another;
 * - the claim of a contact is one transaction (`startAttempt`): campaign still running, room within
 *   concurrency and pace, contact still waiting — checked and written together, so a contact is
 *   never dialled twice and a pause committed during a tick stops its next call, here and in any
 *   other Hotline on the same PostgreSQL;
 * - every later transition is a conditional UPDATE on the status it leaves (`reached` only from
 *   `calling`, an outcome only from `calling`/`reached`): of two events racing to settle one
 *   attempt (session_start against the answer timeout), exactly one does.
 */
export class CampaignRunner implements CallObserver {
  private readonly repository: CampaignStore;
  private readonly inFlight = new Map<string, InFlight>();
  /** Attempts this replica's earlier start left ringing, until their answer timeout (see start). */
  private readonly ringingBeforeStart = new Map<string, { campaignId: string; index: number; dueAt: number }>();
  private readonly changeListeners = new Set<() => void>();
  /** Per campaign, the time zones its contacts are called in (fixed at creation). */
  private readonly zones = new Map<string, readonly string[]>();
  /** Campaigns already said to wait for the AIFLOW_* settings, so it is logged once, not at every look. */
  private readonly waitingForSettings = new Set<string>();
  /** Campaigns this process is writing: never taken for abandoned ones. */
  private readonly creating = new Set<string>();
  /** The work under way (ticks, events being written): `settled` waits for it. */
  private readonly work = new Set<Promise<void>>();
  /** Whether ticks are running, and until when; `tickAgain`: something changed meanwhile, look once more. */
  private running = false;
  private ticking: Promise<void> | undefined;
  private tickAgain = false;
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
  async start(): Promise<void> {
    await normaliseStopList(this.repository, this.options.defaultCountryCode, this.log);
    // Not one being written now: by this process (a campaign created while it starts), or by another Hotline on the same store.
    const before = new Date(this.options.clock.now() - ABANDONED_AFTER_MS);
    for (const id of await this.repository.incompleteCampaigns(before)) {
      if (!this.creating.has(id)) this.track(this.discard(id), 'an incomplete campaign could not be deleted');
    }
    for (const campaign of await this.repository.campaigns()) {
      if (campaign.state === 'done') continue;
      for (const contact of await this.repository.leftBehindIn(campaign.id, 'reached')) {
        // Answered before the process died: done, and never called again.
        await this.repository.updateContact(
          campaign.id,
          contact.index,
          { status: 'done', outcome: 'completed', lastError: 'Hotline stopped during the call' },
          this.date(),
          ['reached'],
        );
      }
      for (const contact of await this.repository.leftBehindIn(campaign.id, 'calling')) {
        // Still ringing, perhaps: its request is kept in the store, and the person picking up now is greeted as
        // asked. Unanswered only once its answer timeout has passed — dialled again sooner, they could be called twice.
        const dueAt = contact.changedAt + campaign.settings.answer_timeout_seconds * 1000;
        if (this.options.clock.now() < dueAt) {
          this.ringingBeforeStart.set(keyOf(campaign.id, String(contact.index))!, { campaignId: campaign.id, index: contact.index, dueAt });
          continue;
        }
        await this.finish(campaign, contact, 'no_answer', 'Hotline stopped before the call was answered', ['calling']);
      }
    }
    await this.tick();
  }

  /** This replica's attempts from before its start whose answer timeout has passed: unanswered, unless the call came. */
  private async settleRingingBeforeStart(): Promise<number> {
    let settled = 0;
    for (const [key, { campaignId, index, dueAt }] of this.ringingBeforeStart) {
      if (this.options.clock.now() < dueAt) continue;
      this.ringingBeforeStart.delete(key);
      const [campaign, contact] = await Promise.all([this.repository.campaign(campaignId), this.repository.contact(campaignId, index)]);
      if (!campaign || contact?.status !== 'calling') continue;
      await this.finish(campaign, contact, 'no_answer', 'Hotline stopped before the call was answered', ['calling']);
      settled += 1;
    }
    return settled;
  }

  /**
   * Settles what a replica dead for `deadAfterMs` left in flight: a person it reached is done (the
   * call was cut off with it), never called again; an attempt still ringing when it died counts as
   * unanswered once the campaign's answer timeout has passed (its call may still come, to any
   * replica, until then). Conditional on the status read, so of several replicas settling, one does.
   */
  async settleOrphaned(deadAfterMs: number): Promise<number> {
    let settled = await this.settleRingingBeforeStart();
    for (const { campaignId, contact, changedAt } of await this.repository.orphanedAttempts(deadAfterMs, ORPHANS_PER_LOOK)) {
      const campaign = await this.repository.campaign(campaignId);
      if (!campaign) continue;
      if (contact.status === 'reached') {
        const done = await this.repository.updateContact(
          campaignId,
          contact.index,
          { status: 'done', outcome: 'completed', lastError: 'the replica in the call stopped during it' },
          this.date(),
          ['reached'],
        );
        if (done) settled += 1;
        continue;
      }
      if (this.options.clock.now() < changedAt + campaign.settings.answer_timeout_seconds * 1000) continue;
      await this.finish(campaign, contact, 'no_answer', 'the replica that placed the call stopped before it was answered', ['calling']);
      settled += 1;
    }
    if (settled > 0) {
      this.log.warn({ contacts: settled }, 'campaign calls left in flight by a replica that stopped beating are settled');
      this.changed();
    }
    return settled;
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
   * gives them; they are written a batch at a time, and the campaign exists once the last is in.
   */
  async create(settings: CampaignSettings, contacts: readonly Contact[], merged = 0, slices = new Slices()): Promise<string> {
    if (!this.dialling) throw new ShuttingDownError();
    const missing = this.missing(settings);
    if (missing.length > 0) throw new OutboundNotConfiguredError(missing);
    const { repository } = this;
    const id = randomUUID();
    this.creating.add(id);
    const zones = [...new Set(contacts.map((c) => c.time_zone ?? settings.time_zone))];
    const ownStops = new Set(settings.stop_list);
    await repository.beginCampaign(id, settings, { merged, zones }, this.date());
    try {
      const stopped = (number: string): boolean => ownStops.has(number);
      for (let from = 0; from < contacts.length; from += WRITE_BATCH) {
        await repository.insertContacts(id, contacts.slice(from, from + WRITE_BATCH), from, stopped, this.date());
        await slices.breathe();
      }
      // The global stop list is applied here, in the database, with the mark a later change is found by.
      await repository.completeCampaign(id, this.date());
    } catch (error) {
      this.track(this.discard(id), 'an incomplete campaign could not be deleted');
      throw error;
    } finally {
      this.creating.delete(id);
    }
    this.log.info({ campaignId: id, name: settings.name, contacts: contacts.length, merged, longestSliceMs: Math.round(slices.longestMs) }, 'campaign created');
    void this.tick();
    return id;
  }

  /** No new calls from the moment this resolves: a tick under way finds the campaign paused when it claims its next contact. */
  async pause(id: string): Promise<Campaign> {
    await this.require(id);
    await this.repository.setState(id, 'paused', this.date(), ['running']);
    this.changed();
    return this.require(id);
  }

  /** Refused (and left paused) without the AIFLOW_* settings its calls need: resumed, it would only burn its contacts. */
  async resume(id: string): Promise<Campaign> {
    const campaign = await this.require(id);
    const missing = this.missing(campaign.settings);
    if (campaign.state === 'paused' && missing.length > 0) throw new OutboundNotConfiguredError(missing);
    await this.repository.setState(id, 'running', this.date(), ['paused']);
    // A tick under way may have passed this campaign over as paused: `tick` asks for another after it.
    void this.tick();
    return this.require(id);
  }

  async require(id: string): Promise<Campaign> {
    const campaign = await this.repository.campaign(id);
    if (!campaign) throw new CampaignNotFoundError(id);
    return campaign;
  }

  async contacts(id: string): Promise<StoredContact[]> {
    return this.repository.contacts((await this.require(id)).id);
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

  /** Resolves once every tick and every event's write begun so far has finished (before the store closes; tests). */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work]);
  }

  /**
   * Told before the call's first word. `reached` is written at once, in one conditional UPDATE and no
   * read before it: a process killed during the greeting must find the contact reached, or it would
   * call the person again. Resolves once written (the call core may wait for it before greeting).
   */
  callStarted(info: CallStartedInfo): Promise<void> | undefined {
    const campaignId = info.tags?.[TAG_CAMPAIGN];
    const index = Number(info.tags?.[TAG_CONTACT]);
    // Not a campaign's call: nothing for the greeting to wait for.
    if (campaignId === undefined || !Number.isInteger(index)) return undefined;
    // The call came: its answer timeout must not fire while the transition is written.
    this.inFlight.get(keyOf(campaignId, String(index))!)?.cancelAnswerTimer();
    // The replica holding the call takes the attempt over: it may not be the one that placed it (see markReached).
    const written = this.repository
      .markReached(campaignId, index, info.sessionId, this.date())
      .then((changed) => {
        if (changed) this.changed();
      });
    this.track(written, 'a campaign call start could not be recorded');
    return written.catch(() => undefined);
  }

  callEnded(summary: CallSummary): void {
    this.lineFreed();
    this.track(this.ended(summary), 'a campaign call end could not be recorded');
  }

  callNotConnected(request: PendingCall, reason: string): void {
    this.lineFreed();
    this.track(this.notConnected(request, reason), 'a campaign call that did not connect could not be recorded');
  }

  /**
   * Places whatever is due now, and sets the one timer for the next moment something comes due. One
   * tick at a time: asked for while one runs, it runs once more after it. Resolves when the ticks are
   * done; never rejects (a failure is logged, and the next event or timer looks again).
   */
  tick(): Promise<void> {
    if (this.closed || !this.dialling) return Promise.resolve();
    this.tickAgain = true;
    // A tick under way looks again before it ends: `ticks` checks `tickAgain` and clears `running` in one step.
    if (this.running && this.ticking) return this.ticking;
    this.running = true;
    const ticking = this.ticks();
    this.ticking = ticking;
    this.track(ticking, 'a campaign tick failed');
    return ticking;
  }

  private async ticks(): Promise<void> {
    try {
      while (this.tickAgain && !this.closed && this.dialling) {
        this.tickAgain = false;
        try {
          await this.tickOnce();
        } catch (error) {
          // The store failed: logged, and looked at again soon (or at the next event) rather than never.
          this.log.error({ err: error }, 'a campaign tick failed');
          const retry = this.options.clock.now() + RETRY_AFTER_FAILURE_MS;
          if (!this.closed && this.dialling && (this.wakeAt === undefined || this.wakeAt > retry)) this.armWake(retry);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async tickOnce(): Promise<void> {
    this.waitingForLine = false;
    const now = this.options.clock.now();
    let nextWake: number | undefined;
    const wakeAt = (at: number | undefined): void => {
      if (at !== undefined && (nextWake === undefined || at < nextWake)) nextWake = at;
    };
    try {
      for (const campaign of await this.repository.campaigns()) {
        if (this.closed || !this.dialling) return;
        if (campaign.state !== 'running') continue;
        wakeAt(await this.tickCampaign(campaign, now));
      }
    } finally {
      // Even after a failure: a timer set keeps the campaigns looked at.
      if (!this.closed && this.dialling) this.armWake(nextWake);
      this.changed();
    }
  }

  /**
   * One campaign's due contacts placed; returns when it next needs a look, if no event will bring one.
   * Asks the database for counts and the next contact only, never for the whole list: a tick runs at
   * every call start and end.
   */
  private async tickCampaign(campaign: Campaign, now: number): Promise<number | undefined> {
    const { settings } = campaign;
    const { repository, options } = this;
    await this.checkStopList(campaign);
    if (!(await repository.hasOpenContacts(campaign.id))) {
      if (await repository.setState(campaign.id, 'done', this.date(), ['running'])) this.log.info({ campaignId: campaign.id }, 'campaign done');
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
    let wake = await repository.nextDueAfter(campaign.id, now);
    const wakeAt = (at: number | undefined): void => {
      if (at !== undefined && (wake === undefined || at < wake)) wake = at;
    };
    const windows = windowsOf(settings);
    const openZones: string[] = [];
    let zones = this.zones.get(campaign.id);
    if (!zones) this.zones.set(campaign.id, (zones = await repository.zones(campaign.id, settings.time_zone)));
    for (const zone of zones) {
      if (withinCallingHours(now, zone, windows)) openZones.push(zone);
      else wakeAt(nextCallingTime(now, zone, windows));
    }
    if (openZones.length === 0) return wake;
    /** Contacts whose number is in a call elsewhere: they wait, not failed, no attempt counted. */
    const passed: number[] = [];
    // A free place comes with an event (a call ending); no timer needed. The count here only saves a
    // look for the next contact when the campaign is full: `startAttempt` checks it again, in its transaction.
    for (let active = await repository.inCallCount(campaign.id); active < settings.concurrency; ) {
      const paceAt = (campaign.lastStartedAt ?? -Infinity) + settings.pace_ms;
      if (paceAt > now) {
        wakeAt(paceAt);
        break;
      }
      const contact = await repository.nextDue(campaign.id, now, settings.time_zone, openZones, passed);
      if (!contact) break;
      const refused = await options.dialer.refusal(contact.number, settings);
      if (refused instanceof NumberInCallError) {
        passed.push(contact.index);
        // A call's end here comes as an event; one at another replica does not: looked at again soon.
        this.waitingForLine = true;
        wakeAt(dueAgainAt(refused, now));
        continue;
      }
      if (refused instanceof NumberStoppedError) {
        await this.refuseStopped(campaign, contact);
        continue;
      }
      // Shutting down (now, or during an await above): nothing more.
      if (refused || this.closed || !this.dialling) break;
      const attempt = await repository.startAttempt(campaign.id, contact.index, { at: now, concurrency: settings.concurrency, paceMs: settings.pace_ms }, this.date());
      if (!attempt.started) {
        // Claimed elsewhere (another Hotline on the same store): the next contact.
        if (attempt.reason === 'taken') continue;
        if (attempt.reason === 'pace') wakeAt(attempt.at);
        // Paused meanwhile, or full or paced by another Hotline's start: its events bring the next look.
        break;
      }
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
  private async checkStopList(campaign: Campaign): Promise<void> {
    const mark = await this.repository.stopListMark();
    if (campaign.stopMark === mark) return;
    const own = campaign.stopMark < 0 ? campaign.settings.stop_list.map((n) => phoneKey(n, { defaultCountryCode: this.options.defaultCountryCode })) : [];
    if ((await this.repository.refuseStopped(campaign.id, Math.max(0, campaign.stopMark), own, this.date())) > 0) this.changed();
    await this.repository.setStopMark(campaign.id, mark);
  }

  /** Found on the global stop list at the moment of dialling (put there by another campaign's call just now). */
  private async refuseStopped(campaign: Campaign, contact: StoredContact): Promise<void> {
    const lastError = contact.attempts === 0 ? 'on the stop list: never called' : 'on the stop list: not called again';
    if (await this.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome: 'refused', lastError }, this.date(), ['pending'])) {
      this.log.info({ campaignId: campaign.id, contact: contact.index }, 'campaign contact on the stop list: not called');
    }
  }

  /** A call ended or never connected (or its number was freed in the store): a number some contact waited for may be free now. */
  lineFreed(): void {
    if (this.waitingForLine && this.dialling && !this.closed) void this.tick();
  }

  /** Deletes a campaign whose writing never finished, a batch at a time (each its own statement: the store's other work goes between). */
  private async discard(id: string): Promise<void> {
    while (!this.closed && !(await this.repository.discardSome(id, DISCARD_BATCH))) {
      // Only the deletes; the loop's turns are the awaits.
    }
  }

  /** Requests the call to `contact`, claimed already (`calling`); returns the campaign with this start as its last. */
  private place(campaign: Campaign, contact: StoredContact, now: number): Campaign {
    const { settings } = campaign;
    const key = keyOf(campaign.id, String(contact.index))!;
    const flight: InFlight = {
      pending: undefined,
      cancelAnswerTimer: this.options.clock.at(now + settings.answer_timeout_seconds * 1000, () =>
        this.track(this.answerTimedOut(campaign.id, contact.index), 'a campaign answer timeout could not be recorded'),
      ),
    };
    this.inFlight.set(key, flight);
    const dialled = this.options.dialer
      .dial({
        to: contact.number,
        variables: { ...contact.variables },
        tags: { [TAG_CAMPAIGN]: campaign.id, [TAG_CONTACT]: String(contact.index) },
        aiFlowId: settings.aiFlowId,
        billingDevice: settings.billingDevice,
        ringForMs: settings.answer_timeout_seconds * 1000,
      })
      .then(
        (pending) => {
          flight.pending = pending;
          // Only now: the service has the call. A dial refused on the way is not a call placed.
          this.log.info({ campaignId: campaign.id, contact: contact.index, attempt: contact.attempts + 1 }, 'campaign call placed');
        },
        (error: unknown) => this.notDialled(campaign.id, contact.index, key, error),
      );
    this.track(dialled, 'a campaign call that could not be placed could not be recorded');
    return { ...campaign, lastStartedAt: now };
  }

  /** The request was refused: here, before it reached the service (not an attempt), or by the service (failed). */
  private async notDialled(campaignId: string, index: number, key: string, error: unknown): Promise<void> {
    const current = await this.repository.contact(campaignId, index);
    if (current?.status !== 'calling') return;
    if (error instanceof CallNotPlacedError) {
      // Refused here (shutting down, or the number in a call or stopped since the look): not an attempt; due again in a moment, never in a loop.
      const nextAttemptAt = dueAgainAt(error, this.options.clock.now());
      await this.repository.updateContact(campaignId, index, { status: 'pending', attempts: current.attempts - 1, nextAttemptAt }, this.date(), ['calling']);
      this.log.info({ campaignId, contact: index, reason: error.code, retryAt: new Date(nextAttemptAt).toISOString() }, 'campaign call not placed');
      this.inFlight.get(key)?.cancelAnswerTimer();
      this.inFlight.delete(key);
      if (!this.closed) void this.tick();
      return;
    }
    if (this.closed) return;
    this.log.warn({ err: error, campaignId, contact: index }, 'campaign call refused');
    await this.finish(await this.require(campaignId), current, 'failed', error instanceof Error ? error.message : String(error), ['calling']);
  }

  private async answerTimedOut(campaignId: string, index: number): Promise<void> {
    const key = keyOf(campaignId, String(index))!;
    const flight = this.inFlight.get(key);
    // Its timer has fired: nothing is left to cancel. Forgotten here, as a call answered at another replica
    // (which cancels no timer here) never comes to `finish` in this one and would stay in the map for good.
    this.inFlight.delete(key);
    // Forgotten in the store before the outcome: a retry due at once finds the number free.
    if (flight?.pending) await this.options.dialer.forget(flight.pending);
    const contact = await this.repository.contact(campaignId, index);
    if (!contact || contact.status !== 'calling') return;
    const campaign = await this.require(campaignId);
    await this.finish(campaign, contact, 'no_answer', null, ['calling']);
  }

  private async ended(summary: CallSummary): Promise<void> {
    const found = await this.contactOf(summary.tags);
    if (!found || (found.contact.status !== 'reached' && found.contact.status !== 'calling')) return;
    const refused = summary.toolRuns.some((run) => run.name === DO_NOT_CALL && run.outcome === 'ok');
    const outcome: Outcome = refused ? 'refused' : summary.endReason === 'voicemail' ? 'voicemail' : 'completed';
    await this.finish(found.campaign, found.contact, outcome, null, ['reached', 'calling']);
  }

  private async notConnected(request: PendingCall, reason: string): Promise<void> {
    const found = await this.contactOf(request.tags);
    if (!found || found.contact.status !== 'calling') return;
    const outcome: Outcome = reason === 'busy' ? 'busy' : reason === 'no_answer' ? 'no_answer' : 'failed';
    await this.finish(found.campaign, found.contact, outcome, outcome === 'failed' ? `the call did not connect: ${reason}` : null, ['calling']);
  }

  /**
   * An attempt ended this way: try again later if the rules allow, else the contact is done. Written only
   * while the contact is still in one of `from` (the status it was read in): another event that settled
   * the attempt meanwhile wins, and this one changes nothing.
   */
  private async finish(campaign: Campaign, contact: StoredContact, outcome: Outcome, error: string | null, from: readonly ContactStatus[]): Promise<void> {
    const key = keyOf(campaign.id, String(contact.index))!;
    this.inFlight.get(key)?.cancelAnswerTimer();
    this.inFlight.delete(key);
    const rule = outcome === 'no_answer' || outcome === 'busy' || outcome === 'voicemail' ? campaign.settings.retries[outcome] : undefined;
    const now = this.options.clock.now();
    if (rule && contact.attempts <= rule.times) {
      const nextAttemptAt = now + rule.after_minutes * 60_000;
      if (await this.repository.updateContact(campaign.id, contact.index, { status: 'pending', outcome, nextAttemptAt, lastError: error }, this.date(), from)) {
        this.log.info({ campaignId: campaign.id, contact: contact.index, outcome, retryAt: new Date(nextAttemptAt).toISOString() }, 'campaign call to be retried');
      }
    } else if (await this.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome, lastError: error }, this.date(), from)) {
      this.log.info({ campaignId: campaign.id, contact: contact.index, outcome }, 'campaign contact done');
    }
    if (!this.closed) void this.tick();
  }

  private async contactOf(tags: Readonly<Record<string, string>> | undefined): Promise<{ campaign: Campaign; contact: StoredContact } | undefined> {
    const campaignId = tags?.[TAG_CAMPAIGN];
    const index = Number(tags?.[TAG_CONTACT]);
    if (campaignId === undefined || !Number.isInteger(index)) return undefined;
    const campaign = await this.repository.campaign(campaignId);
    const contact = campaign && (await this.repository.contact(campaignId, index));
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
      void this.tick();
    });
  }

  /** Keeps `work` until it settles, for `settled`; a failure is logged, never an unhandled rejection. */
  private track(work: Promise<void>, failure: string): void {
    const tracked = work.catch((error: unknown) => this.log.error({ err: error }, failure));
    this.work.add(tracked);
    void tracked.finally(() => this.work.delete(tracked));
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  private date(): Date {
    return new Date(this.options.clock.now());
  }
}

function keyOf(campaignId: string | undefined, index: string | undefined): string | undefined {
  return campaignId === undefined || index === undefined ? undefined : `${campaignId}:${index}`;
}
