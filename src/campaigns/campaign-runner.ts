import { randomUUID } from 'node:crypto';
import type { CallObserver, CallStartedInfo, CallSummary } from '../call/ports/call-summary.js';
import { OutboundNotConfiguredError, ShuttingDownError } from '../outbound/errors.js';
import type { PendingCall } from '../call/ports/outbound-request.js';
import type { StoredContact } from '../store/campaign-repository.js';
import { AttemptOutcomes } from './attempt-outcomes.js';
import { CampaignCalls } from './campaign-calls.js';
import { CampaignScheduler } from './campaign-scheduler.js';
import type { Campaign, CampaignSettings, Contact } from './definition.js';
import { RunnerShared, type CampaignRunnerOptions } from './runner-shared.js';
import { Slices } from './slices.js';
import { normaliseStopList } from './stop-list-keys.js';

export type { CampaignRunnerOptions } from './runner-shared.js';

/** Contacts of an incomplete campaign deleted per statement. */
const DISCARD_BATCH = 2_000;
/**
 * An incomplete campaign begun longer ago than this is abandoned (its writer died): deleted at a start.
 * A younger one may be another Hotline's on the same PostgreSQL, still being written.
 */
const ABANDONED_AFTER_MS = 60 * 60_000;
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
 *
 * The runner is the door the rest of Hotline uses; its parts each have one job: the scheduler decides
 * whom to call and when (campaign-scheduler.ts), the calls place one (campaign-calls.ts), the
 * outcomes settle each attempt (attempt-outcomes.ts), and all share one state (runner-shared.ts).
 */
export class CampaignRunner implements CallObserver {
  private readonly shared: RunnerShared;
  private readonly outcomes: AttemptOutcomes;
  private readonly calls: CampaignCalls;
  private readonly scheduler: CampaignScheduler;
  /** Campaigns this process is writing: never taken for abandoned ones. */
  private readonly creating = new Set<string>();

  constructor(options: CampaignRunnerOptions) {
    this.shared = new RunnerShared(options);
    // The scheduler is made last, and the parts before it reach it only when they ask for a look.
    const again = (): void => void this.scheduler.tick();
    this.outcomes = new AttemptOutcomes(this.shared, again);
    this.calls = new CampaignCalls(this.shared, this.outcomes, again);
    this.scheduler = new CampaignScheduler(this.shared, this.calls);
  }

  /** Settles what a previous process left in flight, then starts placing calls. */
  async start(): Promise<void> {
    await normaliseStopList(this.shared.repository, this.shared.options.defaultCountryCode, this.shared.log);
    // Not one being written now: by this process (a campaign created while it starts), or by another Hotline on the same store.
    const before = new Date(this.shared.options.clock.now() - ABANDONED_AFTER_MS);
    for (const id of await this.shared.repository.incompleteCampaigns(before)) {
      if (!this.creating.has(id)) this.shared.track(this.discard(id), 'an incomplete campaign could not be deleted');
    }
    for (const campaign of await this.shared.repository.campaigns()) {
      if (campaign.state === 'done') continue;
      await this.outcomes.settleLeftBehind(campaign);
    }
    await this.tick();
  }

  /**
   * Settles what a replica dead for `deadAfterMs` left in flight: a person it reached is done (the
   * call was cut off with it), never called again; an attempt still ringing when it died counts as
   * unanswered once the campaign's answer timeout has passed (its call may still come, to any
   * replica, until then). Conditional on the status read, so of several replicas settling, one does.
   */
  settleOrphaned(deadAfterMs: number): Promise<number> {
    return this.outcomes.settleOrphaned(deadAfterMs);
  }

  /** False from the moment shutdown begins. */
  get isDialling(): boolean {
    return this.shared.dialling && !this.shared.closed;
  }

  /** The AIFLOW_* variables a campaign with these settings would lack; empty when its calls can be placed. */
  missing(settings: Pick<CampaignSettings, 'aiFlowId' | 'billingDevice'>): string[] {
    return this.shared.options.dialer.missing(settings);
  }

  /**
   * Stores the campaign and starts it. Refused while shutting down and without the AIFLOW_* settings its
   * calls need (nothing stored then). `contacts` have distinct, normalised numbers, as `readCampaign`
   * gives them; they are written a batch at a time, and the campaign exists once the last is in.
   */
  async create(settings: CampaignSettings, contacts: readonly Contact[], merged = 0, slices = new Slices()): Promise<string> {
    if (!this.shared.dialling) throw new ShuttingDownError();
    const missing = this.missing(settings);
    if (missing.length > 0) throw new OutboundNotConfiguredError(missing);
    const { repository } = this.shared;
    const id = randomUUID();
    this.creating.add(id);
    const zones = [...new Set(contacts.map((c) => c.time_zone ?? settings.time_zone))];
    const ownStops = new Set(settings.stop_list);
    await repository.beginCampaign(id, settings, { merged, zones }, this.shared.date());
    try {
      const stopped = (number: string): boolean => ownStops.has(number);
      for (let from = 0; from < contacts.length; from += WRITE_BATCH) {
        await repository.insertContacts(id, contacts.slice(from, from + WRITE_BATCH), from, stopped, this.shared.date());
        await slices.breathe();
      }
      // The global stop list is applied here, in the database, with the mark a later change is found by.
      await repository.completeCampaign(id, this.shared.date());
    } catch (error) {
      this.shared.track(this.discard(id), 'an incomplete campaign could not be deleted');
      throw error;
    } finally {
      this.creating.delete(id);
    }
    this.shared.log.info({ campaignId: id, name: settings.name, contacts: contacts.length, merged, longestSliceMs: Math.round(slices.longestMs) }, 'campaign created');
    void this.tick();
    return id;
  }

  /** No new calls from the moment this resolves: a tick under way finds the campaign paused when it claims its next contact. */
  async pause(id: string): Promise<Campaign> {
    await this.require(id);
    await this.shared.repository.setState(id, 'paused', this.shared.date(), ['running']);
    this.shared.changed();
    return this.require(id);
  }

  /** Refused (and left paused) without the AIFLOW_* settings its calls need: resumed, it would only burn its contacts. */
  async resume(id: string): Promise<Campaign> {
    const campaign = await this.require(id);
    const missing = this.missing(campaign.settings);
    if (campaign.state === 'paused' && missing.length > 0) throw new OutboundNotConfiguredError(missing);
    await this.shared.repository.setState(id, 'running', this.shared.date(), ['paused']);
    // A tick under way may have passed this campaign over as paused: `tick` asks for another after it.
    void this.tick();
    return this.require(id);
  }

  require(id: string): Promise<Campaign> {
    return this.shared.require(id);
  }

  async contacts(id: string): Promise<StoredContact[]> {
    return this.shared.repository.contacts((await this.require(id)).id);
  }

  /** Called after every change of a contact or campaign (the CLI's live progress, tests). Returns its removal. */
  onChange(listener: () => void): () => void {
    return this.shared.onChange(listener);
  }

  /**
   * Shutdown begins: nothing new is dialled from now on, while calls in progress (and those already
   * requested) are still followed to their outcome. The campaigns stay `running` in the store, so they
   * go on after the restart.
   */
  stopDialling(): void {
    this.shared.dialling = false;
    this.scheduler.stopDialling();
  }

  /** Places no more calls; calls in progress go on, and are settled at the next start if the process ends. */
  close(): void {
    this.shared.dialling = false;
    this.shared.closed = true;
    this.scheduler.close();
    for (const flight of this.shared.inFlight.values()) flight.cancelAnswerTimer();
    this.shared.inFlight.clear();
  }

  /** Resolves once every tick and every event's write begun so far has finished (before the store closes; tests). */
  settled(): Promise<void> {
    return this.shared.settled();
  }

  /**
   * Told before the call's first word. `reached` is written at once, in one conditional UPDATE and no
   * read before it: a process killed during the greeting must find the contact reached, or it would
   * call the person again. Resolves once written (the call core may wait for it before greeting).
   */
  callStarted(info: CallStartedInfo): Promise<void> | undefined {
    return this.outcomes.callStarted(info);
  }

  callEnded(summary: CallSummary): void {
    this.lineFreed();
    this.shared.track(this.outcomes.ended(summary), 'a campaign call end could not be recorded');
  }

  callNotConnected(request: PendingCall, reason: string): void {
    this.lineFreed();
    this.shared.track(this.outcomes.notConnected(request, reason), 'a campaign call that did not connect could not be recorded');
  }

  /**
   * Places whatever is due now, and sets the one timer for the next moment something comes due. One
   * tick at a time: asked for while one runs, it runs once more after it. Resolves when the ticks are
   * done; never rejects (a failure is logged, and the next event or timer looks again).
   */
  tick(): Promise<void> {
    return this.scheduler.tick();
  }

  /** A call ended or never connected (or its number was freed in the store): a number some contact waited for may be free now. */
  lineFreed(): void {
    this.scheduler.lineFreed();
  }

  /** Deletes a campaign whose writing never finished, a batch at a time (each its own statement: the store's other work goes between). */
  private async discard(id: string): Promise<void> {
    while (!this.shared.closed && !(await this.shared.repository.discardSome(id, DISCARD_BATCH))) {
      // Only the deletes; the loop's turns are the awaits.
    }
  }
}
