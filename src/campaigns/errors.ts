import { HotlineError } from '../errors.js';

/** Problems listed in a message; the rest are in `problems`. */
const LISTED = 5;

/** A campaign definition or contact list that cannot be run; `problems` names every one, each with where it is. */
export class InvalidCampaignError extends HotlineError {
  readonly code = 'campaign_invalid';
  constructor(readonly problems: readonly string[]) {
    const more = problems.length - LISTED;
    super(`invalid campaign: ${problems.slice(0, LISTED).join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
  }
}

/** No campaign has this id. */
export class CampaignNotFoundError extends HotlineError {
  readonly code = 'campaign_not_found';
  constructor(readonly campaignId: string) {
    super(`no campaign ${campaignId}`);
  }
}
