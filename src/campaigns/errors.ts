import { HotlineError } from '../errors.js';

/** One thing wrong with a campaign: where, as the definition names it, and what. */
export interface CampaignProblem {
  /** The field: `calling_hours[0].from`, `contacts[2]` (a row of a list), `contacts` (CSV text); '' for the whole definition. */
  readonly field: string;
  /** For contacts given as CSV text: the line of the CSV (the header is line 1). */
  readonly line?: number;
  /** What is wrong, and what is expected. */
  readonly message: string;
}

/** `calling_hours[0].from: …`, `contacts line 3: …`. */
export function describeProblem(problem: CampaignProblem): string {
  const where = [problem.field, problem.line === undefined ? '' : `line ${problem.line}`].filter((part) => part !== '').join(' ');
  return where === '' ? problem.message : `${where}: ${problem.message}`;
}

/** Problems named in a message; the rest are counted. Every one is in `problems`. */
const PROBLEMS_IN_MESSAGE = 20;

/** A campaign definition or contact list that cannot be run; it names every problem. */
export class InvalidCampaignError extends HotlineError {
  readonly code = 'campaign_invalid';
  readonly problems: readonly CampaignProblem[];

  constructor(problems: readonly CampaignProblem[] | string, options?: { cause?: unknown }) {
    const list = typeof problems === 'string' ? [{ field: '', message: problems }] : problems;
    const more = list.length - PROBLEMS_IN_MESSAGE;
    super(`${list.slice(0, PROBLEMS_IN_MESSAGE).map(describeProblem).join('; ')}${more > 0 ? `; and ${more} more` : ''}`, options);
    this.problems = list;
  }
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
