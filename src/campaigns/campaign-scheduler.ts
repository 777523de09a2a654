/**
 * When to call whom: one tick at a time looks at every running campaign and claims its due contacts
 * within calling hours, concurrency and pace, and one timer wakes it for the next moment something
 * comes due. Event-driven: a call's start or end asks for a tick, nothing polls.
 */
import type { StoredContact } from '../store/campaign-repository.js';
import { NumberInCallError, NumberStoppedError } from '../outbound/errors.js';
import { phoneKey } from '../phone/phone-number.js';
import { nextCallingTime, withinCallingHours } from './calling-hours.js';
import type { CampaignCalls } from './campaign-calls.js';
import { windowsOf, type Campaign } from './definition.js';
import { dueAgainAt } from './refused-dial.js';
import type { RunnerShared } from './runner-shared.js';

/** A tick the store failed is tried again after this long, if no event comes first. */
const RETRY_AFTER_FAILURE_MS = 5_000;

export class CampaignScheduler {
  /** Per campaign, the time zones its contacts are called in (fixed at creation). */
  private readonly zones = new Map<string, readonly string[]>();
  /** Campaigns already said to wait for the AIFLOW_* settings, so it is logged once, not at every look. */
  private readonly waitingForSettings = new Set<string>();
  /** Whether ticks are running, and until when; `tickAgain`: something changed meanwhile, look once more. */
  private running = false;
  private ticking: Promise<void> | undefined;
  private tickAgain = false;
  private cancelWake: (() => void) | undefined;
  private wakeAt: number | undefined;
  /** A contact waits because its number is in a call elsewhere: any call's end is a reason to look again. */
  private waitingForLine = false;

  constructor(
    private readonly shared: RunnerShared,
    private readonly calls: CampaignCalls,
  ) {}

  /**
   * Places whatever is due now, and sets the one timer for the next moment something comes due. One
   * tick at a time: asked for while one runs, it runs once more after it. Resolves when the ticks are
   * done; never rejects (a failure is logged, and the next event or timer looks again).
   */
  tick(): Promise<void> {
    if (this.shared.closed || !this.shared.dialling) return Promise.resolve();
    this.tickAgain = true;
    // A tick under way looks again before it ends: `ticks` checks `tickAgain` and clears `running` in one step.
    if (this.running && this.ticking) return this.ticking;
    this.running = true;
    const ticking = this.ticks();
    this.ticking = ticking;
    this.shared.track(ticking, 'a campaign tick failed');
    return ticking;
  }

  private async ticks(): Promise<void> {
    try {
      while (this.tickAgain && !this.shared.closed && this.shared.dialling) {
        this.tickAgain = false;
        try {
          await this.tickOnce();
        } catch (error) {
          // The store failed: logged, and looked at again soon (or at the next event) rather than never.
          this.shared.log.error({ err: error }, 'a campaign tick failed');
          const retry = this.shared.options.clock.now() + RETRY_AFTER_FAILURE_MS;
          if (!this.shared.closed && this.shared.dialling && (this.wakeAt === undefined || this.wakeAt > retry)) this.armWake(retry);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async tickOnce(): Promise<void> {
    this.waitingForLine = false;
    const now = this.shared.options.clock.now();
    let nextWake: number | undefined;
    const wakeAt = (at: number | undefined): void => {
      if (at !== undefined && (nextWake === undefined || at < nextWake)) nextWake = at;
    };
    try {
      for (const campaign of await this.shared.repository.campaigns()) {
        if (this.shared.closed || !this.shared.dialling) return;
        if (campaign.state !== 'running') continue;
        wakeAt(await this.tickCampaign(campaign, now));
      }
    } finally {
      // Even after a failure: a timer set keeps the campaigns looked at.
      if (!this.shared.closed && this.shared.dialling) this.armWake(nextWake);
      this.shared.changed();
    }
  }

  /**
   * One campaign's due contacts placed; returns when it next needs a look, if no event will bring one.
   * Asks the database for counts and the next contact only, never for the whole list: a tick runs at
   * every call start and end.
   */
  private async tickCampaign(campaign: Campaign, now: number): Promise<number | undefined> {
    const { settings } = campaign;
    const { repository, options } = this.shared;
    await this.checkStopList(campaign);
    if (!(await repository.hasOpenContacts(campaign.id))) {
      if (await repository.setState(campaign.id, 'done', this.shared.date(), ['running'])) this.shared.log.info({ campaignId: campaign.id }, 'campaign done');
      return undefined;
    }
    // Without the AIFLOW_* settings every call would fail: the contacts wait, none is spent.
    const missing = options.dialer.missing(settings);
    if (missing.length > 0) {
      if (!this.waitingForSettings.has(campaign.id)) this.shared.log.warn({ campaignId: campaign.id, missing }, 'campaign waits: outbound calling is not configured');
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
      if (refused || this.shared.closed || !this.shared.dialling) break;
      const attempt = await repository.startAttempt(campaign.id, contact.index, { at: now, concurrency: settings.concurrency, paceMs: settings.pace_ms }, this.shared.date());
      if (!attempt.started) {
        // Claimed elsewhere (another Hotline on the same store): the next contact.
        if (attempt.reason === 'taken') continue;
        if (attempt.reason === 'pace') wakeAt(attempt.at);
        // Paused meanwhile, or full or paced by another Hotline's start: its events bring the next look.
        break;
      }
      campaign = this.calls.place(campaign, contact, now);
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
    const mark = await this.shared.repository.stopListMark();
    if (campaign.stopMark === mark) return;
    const own = campaign.stopMark < 0 ? campaign.settings.stop_list.map((n) => phoneKey(n, { defaultCountryCode: this.shared.options.defaultCountryCode })) : [];
    if ((await this.shared.repository.refuseStopped(campaign.id, Math.max(0, campaign.stopMark), own, this.shared.date())) > 0) this.shared.changed();
    await this.shared.repository.setStopMark(campaign.id, mark);
  }

  /** Found on the global stop list at the moment of dialling (put there by another campaign's call just now). */
  private async refuseStopped(campaign: Campaign, contact: StoredContact): Promise<void> {
    const lastError = contact.attempts === 0 ? 'on the stop list: never called' : 'on the stop list: not called again';
    if (await this.shared.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome: 'refused', lastError }, this.shared.date(), ['pending'])) {
      this.shared.log.info({ campaignId: campaign.id, contact: contact.index }, 'campaign contact on the stop list: not called');
    }
  }

  /** A call ended or never connected (or its number was freed in the store): a number some contact waited for may be free now. */
  lineFreed(): void {
    if (this.waitingForLine && this.shared.dialling && !this.shared.closed) void this.tick();
  }

  private armWake(at: number | undefined): void {
    if (at === this.wakeAt) return;
    this.cancelWake?.();
    this.cancelWake = undefined;
    this.wakeAt = at;
    if (at === undefined) return;
    this.cancelWake = this.shared.options.clock.at(at, () => {
      this.wakeAt = undefined;
      this.cancelWake = undefined;
      void this.tick();
    });
  }

  /** Shutdown begins: the timer is stopped, and no tick arms another. */
  stopDialling(): void {
    this.cancelWake?.();
    this.cancelWake = undefined;
    this.wakeAt = undefined;
  }

  /** The runner closes: the timer is stopped. */
  close(): void {
    this.cancelWake?.();
  }
}
