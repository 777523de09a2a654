import { HotlineError } from '../errors.js';

/** A campaign definition or contact list that cannot be run; the message names every problem. */
export class InvalidCampaignError extends HotlineError {
  readonly code = 'campaign_invalid';
}

/** No campaign has this id. */
export class CampaignNotFoundError extends HotlineError {
  readonly code = 'campaign_not_found';
  constructor(readonly campaignId: string) {
    super(`no campaign ${campaignId}`);
  }
}

/** Campaigns need the outbound settings of the service (AIFLOW_*). */
export class CampaignsUnavailableError extends HotlineError {
  readonly code = 'campaigns_unavailable';
}
