/**
 * Dialling one person: the call requested of the service for a contact already claimed, its answer
 * timer, and what a refused request means (no attempt when refused here, a failure when the service
 * refused it). The scheduler decides whom; this places the call and hands its end to the outcomes.
 */
import type { StoredContact } from '../store/campaign-repository.js';
import { CallNotPlacedError } from '../outbound/errors.js';
import type { AttemptOutcomes } from './attempt-outcomes.js';
import type { Campaign } from './definition.js';
import { dueAgainAt } from './refused-dial.js';
import { keyOf, TAG_CAMPAIGN, TAG_CONTACT, type InFlight, type RunnerShared } from './runner-shared.js';

export class CampaignCalls {
  /** `again`: asks the scheduler for a look, when a refused request leaves its contact waiting again. */
  constructor(
    private readonly shared: RunnerShared,
    private readonly outcomes: AttemptOutcomes,
    private readonly again: () => void,
  ) {}

  /** Requests the call to `contact`, claimed already (`calling`); returns the campaign with this start as its last. */
  place(campaign: Campaign, contact: StoredContact, now: number): Campaign {
    const { settings } = campaign;
    const key = keyOf(campaign.id, String(contact.index))!;
    const flight: InFlight = {
      pending: undefined,
      cancelAnswerTimer: this.shared.options.clock.at(now + settings.answer_timeout_seconds * 1000, () =>
        this.shared.track(this.answerTimedOut(campaign.id, contact.index), 'a campaign answer timeout could not be recorded'),
      ),
    };
    this.shared.inFlight.set(key, flight);
    const dialled = this.shared.options.dialer
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
          this.shared.log.info({ campaignId: campaign.id, contact: contact.index, attempt: contact.attempts + 1 }, 'campaign call placed');
        },
        (error: unknown) => this.notDialled(campaign.id, contact.index, key, error),
      );
    this.shared.track(dialled, 'a campaign call that could not be placed could not be recorded');
    return { ...campaign, lastStartedAt: now };
  }

  /** The request was refused: here, before it reached the service (not an attempt), or by the service (failed). */
  private async notDialled(campaignId: string, index: number, key: string, error: unknown): Promise<void> {
    const current = await this.shared.repository.contact(campaignId, index);
    if (current?.status !== 'calling') return;
    if (error instanceof CallNotPlacedError) {
      // Refused here (shutting down, or the number in a call or stopped since the look): not an attempt; due again in a moment, never in a loop.
      const nextAttemptAt = dueAgainAt(error, this.shared.options.clock.now());
      await this.shared.repository.updateContact(campaignId, index, { status: 'pending', attempts: current.attempts - 1, nextAttemptAt }, this.shared.date(), ['calling']);
      this.shared.log.info({ campaignId, contact: index, reason: error.code, retryAt: new Date(nextAttemptAt).toISOString() }, 'campaign call not placed');
      this.shared.inFlight.get(key)?.cancelAnswerTimer();
      this.shared.inFlight.delete(key);
      if (!this.shared.closed) this.again();
      return;
    }
    if (this.shared.closed) return;
    this.shared.log.warn({ err: error, campaignId, contact: index }, 'campaign call refused');
    await this.outcomes.finish(await this.shared.require(campaignId), current, 'failed', error instanceof Error ? error.message : String(error), ['calling']);
  }

  private async answerTimedOut(campaignId: string, index: number): Promise<void> {
    const key = keyOf(campaignId, String(index))!;
    const flight = this.shared.inFlight.get(key);
    // Its timer has fired: nothing is left to cancel. Forgotten here, as a call answered at another replica
    // (which cancels no timer here) never comes to `finish` in this one and would stay in the map for good.
    this.shared.inFlight.delete(key);
    // Forgotten in the store before the outcome: a retry due at once finds the number free.
    if (flight?.pending) await this.shared.options.dialer.forget(flight.pending);
    const contact = await this.shared.repository.contact(campaignId, index);
    if (!contact || contact.status !== 'calling') return;
    const campaign = await this.shared.require(campaignId);
    await this.outcomes.finish(campaign, contact, 'no_answer', null, ['calling']);
  }
}
