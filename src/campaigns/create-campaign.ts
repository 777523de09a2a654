import { OutboundNotConfiguredError, ShuttingDownError } from '../outbound/errors.js';
import type { OutboundOverrides } from '../outbound/outbound-calls.js';
import { readCampaign } from './campaign-input.js';
import type { CampaignRunner } from './campaign-runner.js';
import type { DuplicateGroup } from './contacts.js';
import { Slices } from './slices.js';

/** What creating a campaign answers. */
export interface CreatedCampaign {
  id: string;
  /** People to call: rows, less the duplicates merged. */
  contacts: number;
  /** Rows merged into an earlier row with the same number. */
  merged: number;
  duplicates: DuplicateGroup[];
}

/**
 * The one way a campaign is created, from the API and the dashboard alike:
 * refused at once while Hotline shuts down (ShuttingDownError) and without the
 * AIFLOW_* settings its calls need (OutboundNotConfiguredError, naming them) —
 * before its list is read — then read and checked (InvalidCampaignError with
 * every problem) and stored, a slice at a time.
 */
export async function createCampaign(runner: CampaignRunner, input: unknown, options: { defaultCountryCode: string | undefined }): Promise<CreatedCampaign> {
  if (!runner.isDialling) throw new ShuttingDownError();
  const missing = runner.missing(overridesOf(input));
  if (missing.length > 0) throw new OutboundNotConfiguredError(missing);
  const slices = new Slices();
  const campaign = await readCampaign(input, { defaultCountryCode: options.defaultCountryCode, slices });
  const id = await runner.create(campaign.settings, campaign.contacts, campaign.merged, slices);
  return { id, contacts: campaign.contacts.length, merged: campaign.merged, duplicates: campaign.duplicates };
}

/** A campaign's own aiFlowId and billingDevice, read before the definition is checked. */
function overridesOf(input: unknown): OutboundOverrides {
  if (input === null || typeof input !== 'object') return {};
  const { aiFlowId, billingDevice } = input as Record<string, unknown>;
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  return { aiFlowId: text(aiFlowId), billingDevice: text(billingDevice) };
}
