import { InvalidPhoneNumberError } from '../phone/errors.js';
import { normalizePhoneNumber } from '../phone/phone-number.js';
import { MAX_PROBLEMS, readContacts, type DuplicateGroup } from './contacts.js';
import { CampaignSettingsSchema, type CampaignSettings, type Contact } from './definition.js';
import { InvalidCampaignError, type CampaignProblem } from './errors.js';
import { readableIssues } from '../readable-issues.js';
import { formatPath } from '../yaml-file.js';
import { Slices } from './slices.js';

/** A campaign read and checked, ready to be created. */
export interface CampaignRequest {
  /** Its stop list normalised. */
  settings: CampaignSettings;
  /** One per person. */
  contacts: Contact[];
  /** Rows merged into an earlier one with the same number. */
  merged: number;
  duplicates: DuplicateGroup[];
}

/**
 * A campaign as the API, the CLI and the dashboard send it — its settings and
 * `contacts` (JSON rows, or CSV text with a header) — read and checked. Every
 * problem is named in one InvalidCampaignError, each with where it is
 * (`concurrency`, `stop_list[1]`, `contacts` line 7), so a definition
 * is fixed in one go. Long contact lists are read in slices (see Slices).
 */
export async function readCampaign(input: unknown, options: { defaultCountryCode: string | undefined; slices?: Slices }): Promise<CampaignRequest> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidCampaignError('a campaign is an object with name, contacts and its rules (see docs/outbound-and-campaigns.md)');
  }
  const { contacts: source, ...rest } = input as Record<string, unknown>;
  const problems: CampaignProblem[] = [];
  const parsed = CampaignSettingsSchema.safeParse(rest);
  if (!parsed.success) {
    problems.push(...readableIssues(parsed.error.issues, rest, CampaignSettingsSchema).map(({ path, message }) => ({ field: formatPath(path), message })));
  }
  const slices = options.slices ?? new Slices();
  // Read even when other settings are wrong: every problem is named at once.
  const entries: readonly unknown[] = parsed.success ? parsed.data.stop_list : Array.isArray(rest.stop_list) ? rest.stop_list : [];
  const stopList = await normaliseStopList(entries, options.defaultCountryCode, problems, slices);

  let contacts: Contact[] = [];
  let merged = 0;
  let duplicates: DuplicateGroup[] = [];
  if (source === undefined || source === null || source === '') {
    problems.push({ field: 'contacts', message: 'missing: give a list of rows, or CSV text with a header' });
  } else if (typeof source === 'string' || Array.isArray(source)) {
    const read = await readContacts(source, { defaultCountryCode: options.defaultCountryCode, slices });
    problems.push(...read.problems);
    ({ contacts, merged, duplicates } = read);
  } else {
    problems.push({ field: 'contacts', message: 'must be the contacts: CSV text (in a file, the path of a CSV file beside it) or a list of rows' });
  }
  if (problems.length > 0 || !parsed.success) throw new InvalidCampaignError(problems);
  return { settings: { ...parsed.data, stop_list: stopList }, contacts, merged, duplicates };
}

/**
 * Each entry normalised as a contact's number is, so `0049 151 …` or a national `0151 …` stops
 * `+49 151 …`. An entry that is not a number is a problem naming its place: never kept as typed.
 */
async function normaliseStopList(
  entries: readonly unknown[],
  defaultCountryCode: string | undefined,
  problems: CampaignProblem[],
  slices: Slices,
): Promise<string[]> {
  const numbers = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    // Neither text nor a number: the schema has said so.
    if (!isEntry(entry)) continue;
    try {
      numbers.add(normalizePhoneNumber(String(entry), { defaultCountryCode }));
    } catch (error) {
      if (!(error instanceof InvalidPhoneNumberError)) throw error;
      if (problems.length < MAX_PROBLEMS) problems.push({ field: `stop_list[${i}]`, message: error.message });
    }
    if (slices.enough()) await slices.next();
  }
  return [...numbers];
}

function isEntry(value: unknown): value is string | number {
  return typeof value === 'string' || typeof value === 'number';
}
