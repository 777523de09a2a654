import { parse } from 'csv-parse/sync';
import { normalizePhoneNumber } from '../outbound/phone-number.js';
import { isTimeZone, type Contact } from './definition.js';
import { InvalidCampaignError, type CampaignProblem } from './errors.js';

const NUMBER_COLUMNS = ['phone', 'phone_number', 'number', 'tophonenumber'];
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

type Row = Record<string, string | number | boolean>;

/**
 * The contacts of a campaign, from CSV text with a header or from JSON rows:
 * the number column found by name, a `time_zone` column taken as the
 * contact's own, every other column a variable. Every bad row is named in one
 * error, so a list is fixed in one go, not row by row.
 */
export function parseContacts(source: string | readonly Row[], options: { defaultCountryCode?: string | undefined } = {}): Contact[] {
  const rows = typeof source === 'string' ? parseCsv(source) : source;
  const problems: CampaignProblem[] = [];
  const contacts: Contact[] = [];
  rows.forEach((row, index) => {
    // A CSV row by its line (the header is line 1), a row of a list by its place in it.
    const where = typeof source === 'string' ? { field: 'contacts', line: index + 2 } : { field: `contacts[${index}]` };
    const problem = (message: string) => problems.push({ ...where, message });
    const numberKey = Object.keys(row).find((key) => NUMBER_COLUMNS.includes(key.toLowerCase()));
    if (numberKey === undefined) {
      problem('no number: give it a column phone, phone_number, number or toPhoneNumber');
      return;
    }
    let number: string;
    try {
      number = normalizePhoneNumber(String(row[numberKey]), { defaultCountryCode: options.defaultCountryCode });
    } catch (error) {
      problem(error instanceof Error ? error.message : String(error));
      return;
    }
    const variables: Record<string, string> = {};
    let timeZone: string | undefined;
    for (const [key, value] of Object.entries(row)) {
      if (key === numberKey) continue;
      const text = String(value);
      if (key === 'time_zone') {
        if (text.trim() === '') continue;
        if (!isTimeZone(text.trim())) problem(`time_zone "${text}" is not a time zone: use an IANA name such as Europe/Berlin, or leave it empty`);
        else timeZone = text.trim();
        continue;
      }
      if (!VARIABLE_NAME.test(key)) {
        problem(`column "${key}" cannot be a variable name: use letters, digits, _ . - and start with a letter or _`);
        continue;
      }
      variables[key] = text;
    }
    contacts.push({ number, variables, ...(timeZone ? { time_zone: timeZone } : {}) });
  });
  if (contacts.length === 0 && problems.length === 0) problems.push({ field: 'contacts', message: 'no contacts: the CSV has a header but no rows' });
  if (problems.length > 0) throw new InvalidCampaignError(problems);
  return contacts;
}

function parseCsv(text: string): Row[] {
  try {
    return parse(text, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as Row[];
  } catch (error) {
    throw new InvalidCampaignError([{ field: 'contacts', message: `not valid CSV: ${error instanceof Error ? error.message : String(error)}` }], { cause: error });
  }
}
