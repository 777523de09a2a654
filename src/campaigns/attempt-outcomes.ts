/**
 * What became of each attempt: reached at session_start, then completed, refused, unanswered, busy or
 * failed, and tried again when the campaign's rules say so. Also the attempts a stopped process or a
 * dead replica left in flight. Every write is conditional on the status it leaves: of two events
 * racing to settle one attempt, exactly one does.
 */
import type { CallStartedInfo, CallSummary } from '../call/ports/call-summary.js';
import type { PendingCall } from '../call/ports/outbound-request.js';
import type { ContactStatus, Outcome, StoredContact } from '../store/campaign-repository.js';
import type { Campaign } from './definition.js';
import { DO_NOT_CALL } from './do-not-call-tool.js';
import { keyOf, TAG_CAMPAIGN, TAG_CONTACT, type RunnerShared } from './runner-shared.js';

/** Orphaned attempts settled per look (a look comes with every heartbeat). */
const ORPHANS_PER_LOOK = 100;

export class AttemptOutcomes {
  /** Attempts this replica's earlier start left ringing, until their answer timeout (see settleLeftBehind). */
  private readonly ringingBeforeStart = new Map<string, { campaignId: string; index: number; dueAt: number }>();

  /** `again`: asks the scheduler for a look, once an attempt is settled (a place is free, a retry waits). */
  constructor(
    private readonly shared: RunnerShared,
    private readonly again: () => void,
  ) {}

  /**
   * What this replica's earlier start left of `campaign` in flight: a person reached is done, never
   * called again; a call perhaps still ringing waits for its answer timeout (`settleRingingBeforeStart`).
   */
  async settleLeftBehind(campaign: Campaign): Promise<void> {
    for (const contact of await this.shared.repository.leftBehindIn(campaign.id, 'reached')) {
      // Answered before the process died: done, and never called again.
      await this.shared.repository.updateContact(
        campaign.id,
        contact.index,
        { status: 'done', outcome: 'completed', lastError: 'Hotline stopped during the call' },
        this.shared.date(),
        ['reached'],
      );
    }
    for (const contact of await this.shared.repository.leftBehindIn(campaign.id, 'calling')) {
      // Still ringing, perhaps: its request is kept in the store, and the person picking up now is greeted as
      // asked. Unanswered only once its answer timeout has passed — dialled again sooner, they could be called twice.
      const dueAt = contact.changedAt + campaign.settings.answer_timeout_seconds * 1000;
      if (this.shared.options.clock.now() < dueAt) {
        this.ringingBeforeStart.set(keyOf(campaign.id, String(contact.index))!, { campaignId: campaign.id, index: contact.index, dueAt });
        continue;
      }
      await this.finish(campaign, contact, 'no_answer', 'Hotline stopped before the call was answered', ['calling']);
    }
  }

  /** This replica's attempts from before its start whose answer timeout has passed: unanswered, unless the call came. */
  private async settleRingingBeforeStart(): Promise<number> {
    let settled = 0;
    for (const [key, { campaignId, index, dueAt }] of this.ringingBeforeStart) {
      if (this.shared.options.clock.now() < dueAt) continue;
      this.ringingBeforeStart.delete(key);
      const [campaign, contact] = await Promise.all([this.shared.repository.campaign(campaignId), this.shared.repository.contact(campaignId, index)]);
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
    for (const { campaignId, contact, changedAt } of await this.shared.repository.orphanedAttempts(deadAfterMs, ORPHANS_PER_LOOK)) {
      const campaign = await this.shared.repository.campaign(campaignId);
      if (!campaign) continue;
      if (contact.status === 'reached') {
        const done = await this.shared.repository.updateContact(
          campaignId,
          contact.index,
          { status: 'done', outcome: 'completed', lastError: 'the replica in the call stopped during it' },
          this.shared.date(),
          ['reached'],
        );
        if (done) settled += 1;
        continue;
      }
      if (this.shared.options.clock.now() < changedAt + campaign.settings.answer_timeout_seconds * 1000) continue;
      await this.finish(campaign, contact, 'no_answer', 'the replica that placed the call stopped before it was answered', ['calling']);
      settled += 1;
    }
    if (settled > 0) {
      this.shared.log.warn({ contacts: settled }, 'campaign calls left in flight by a replica that stopped beating are settled');
      this.shared.changed();
    }
    return settled;
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
    this.shared.inFlight.get(keyOf(campaignId, String(index))!)?.cancelAnswerTimer();
    // The replica holding the call takes the attempt over: it may not be the one that placed it (see markReached).
    const written = this.shared.repository
      .markReached(campaignId, index, info.sessionId, this.shared.date())
      .then((changed) => {
        if (changed) this.shared.changed();
      });
    this.shared.track(written, 'a campaign call start could not be recorded');
    return written.catch(() => undefined);
  }

  async ended(summary: CallSummary): Promise<void> {
    const found = await this.contactOf(summary.tags);
    if (!found || (found.contact.status !== 'reached' && found.contact.status !== 'calling')) return;
    const refused = summary.toolRuns.some((run) => run.name === DO_NOT_CALL && run.outcome === 'ok');
    const outcome: Outcome = refused ? 'refused' : summary.endReason === 'voicemail' ? 'voicemail' : 'completed';
    await this.finish(found.campaign, found.contact, outcome, null, ['reached', 'calling']);
  }

  async notConnected(request: PendingCall, reason: string): Promise<void> {
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
  async finish(campaign: Campaign, contact: StoredContact, outcome: Outcome, error: string | null, from: readonly ContactStatus[]): Promise<void> {
    const key = keyOf(campaign.id, String(contact.index))!;
    this.shared.inFlight.get(key)?.cancelAnswerTimer();
    this.shared.inFlight.delete(key);
    const rule = outcome === 'no_answer' || outcome === 'busy' || outcome === 'voicemail' ? campaign.settings.retries[outcome] : undefined;
    const now = this.shared.options.clock.now();
    if (rule && contact.attempts <= rule.times) {
      const nextAttemptAt = now + rule.after_minutes * 60_000;
      if (await this.shared.repository.updateContact(campaign.id, contact.index, { status: 'pending', outcome, nextAttemptAt, lastError: error }, this.shared.date(), from)) {
        this.shared.log.info({ campaignId: campaign.id, contact: contact.index, outcome, retryAt: new Date(nextAttemptAt).toISOString() }, 'campaign call to be retried');
      }
    } else if (await this.shared.repository.updateContact(campaign.id, contact.index, { status: 'done', outcome, lastError: error }, this.shared.date(), from)) {
      this.shared.log.info({ campaignId: campaign.id, contact: contact.index, outcome }, 'campaign contact done');
    }
    if (!this.shared.closed) this.again();
  }

  private async contactOf(tags: Readonly<Record<string, string>> | undefined): Promise<{ campaign: Campaign; contact: StoredContact } | undefined> {
    const campaignId = tags?.[TAG_CAMPAIGN];
    const index = Number(tags?.[TAG_CONTACT]);
    if (campaignId === undefined || !Number.isInteger(index)) return undefined;
    const campaign = await this.shared.repository.campaign(campaignId);
    const contact = campaign && (await this.shared.repository.contact(campaignId, index));
    return campaign && contact ? { campaign, contact } : undefined;
  }
}
