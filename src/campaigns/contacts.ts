import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { normalizePhoneNumber } from '../phone/phone-number.js';
import { isTimeZone, type Contact } from './definition.js';
import type { CampaignProblem } from './errors.js';
import { Slices } from './slices.js';

const NUMBER_COLUMNS = ['phone', 'phone_number', 'number', 'tophonenumber'];
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** Problems named one by one; past this many, only counted: a list of 150,000 bad rows is not read row by row. */
export const MAX_PROBLEMS = 200;
/** Where the rows merged into one are, named up to this many per number (`merged` counts them all). */
const MAX_LINES_PER_DUPLICATE = 20;
/** The CSV text is handed to the parser in pieces about this long, each parsed in a slice of its own. */
const CSV_PIECE_CHARS = 32 * 1024;

/** Rows of one person written more than once: the first is kept, the others merged into it. */
export interface DuplicateGroup {
  /** Normalised. */
  number: string;
  /** Where the row kept is: "line 2" (CSV), "contacts[0]" (JSON rows). */
  kept: string;
  /** Where the rows merged into it are (the first MAX_LINES_PER_DUPLICATE). */
  merged: string[];
}

export interface ReadContacts {
  /** One per person, in list order. */
  contacts: Contact[];
  /** Rows merged into an earlier one with the same number. */
  merged: number;
  /** Each number written more than once (at most MAX_PROBLEMS of them; `merged` counts all). */
  duplicates: DuplicateGroup[];
  /** Every bad row, with where it is; empty when the list can be run. */
  problems: CampaignProblem[];
}

type Cell = string | number | boolean;

/** Where a row is: a line of the CSV (the header is line 1), or a place in a list of rows. */
type Where = { readonly field: 'contacts'; readonly line: number } | { readonly field: string; readonly line?: undefined };

/** `line 3` for a CSV row, `contacts[2]` for a row of a list: how the duplicates are named. */
function labelOf(where: Where): string {
  return where.line === undefined ? where.field : `line ${where.line}`;
}

/**
 * The contacts of a campaign, from CSV text with a header or from JSON rows:
 * the number column found by name and normalised, a `time_zone` column taken
 * as the contact's own, every other column a variable. Rows with the same
 * number after normalisation are one person: merged into the first. Every
 * bad row is named, so a list is fixed in one go, not row by row.
 *
 * A list may be long (150,000 rows): it is read in slices with a turn for the
 * calls in between, never holding the event loop more than a slice.
 */
export async function readContacts(
  source: string | readonly unknown[],
  options: { defaultCountryCode?: string | undefined; slices?: Slices } = {},
): Promise<ReadContacts> {
  const slices = options.slices ?? new Slices();
  const reader = new ContactReader(options.defaultCountryCode);
  if (typeof source === 'string') await readCsv(source, reader, slices);
  else {
    for (let i = 0; i < source.length; i++) {
      reader.row({ field: `contacts[${i}]` }, source[i]);
      if (slices.enough()) await slices.next();
    }
  }
  return reader.result();
}

class ContactReader {
  private readonly contacts: Contact[] = [];
  /** Number → where its first row is, and the group once a second one comes. */
  private readonly seen = new Map<string, { where: Where; group?: DuplicateGroup }>();
  private readonly duplicates: DuplicateGroup[] = [];
  private merged = 0;
  private readonly problems: CampaignProblem[] = [];
  private unlisted = 0;

  constructor(private readonly defaultCountryCode: string | undefined) {}

  problem(where: Where, message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ ...where, message });
    else this.unlisted += 1;
  }

  /** A JSON row: an object of columns. */
  row(where: Where, row: unknown): void {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      return this.problem(where, `not a row of columns (an object such as {"phone": "+49 151 1234567", "name": "Anna"})`);
    }
    const cells = Object.entries(row as Record<string, unknown>);
    const numberCell = cells.find(([key]) => NUMBER_COLUMNS.includes(key.toLowerCase()));
    if (numberCell === undefined) return this.problem(where, "no number: give it a column phone, phone_number, number or toPhoneNumber");
    let bad = false;
    if (!isCell(numberCell[1])) {
      this.problem(where, `"${numberCell[0]}" is not text or a number`);
      bad = true;
    }
    const variables: Record<string, string> = {};
    let timeZone: string | undefined;
    for (const [key, value] of cells) {
      if (key === numberCell[0]) continue;
      if (!isCell(value)) {
        this.problem(where, `"${key}" is not text, a number or true/false`);
        bad = true;
      } else if (key === 'time_zone') timeZone = String(value);
      else if (!VARIABLE_NAME.test(key)) {
        this.problem(where, `"${key}" is not a variable name (letters, digits, _ . -)`);
        bad = true;
      } else variables[key] = String(value);
    }
    if (!bad) this.contact(where, String(numberCell[1]), variables, timeZone);
  }

  /** One person: the number normalised, the time zone checked; merged into an earlier row with the same number. */
  contact(where: Where, written: string, variables: Record<string, string>, timeZone: string | undefined): void {
    let number: string;
    try {
      number = normalizePhoneNumber(written, { defaultCountryCode: this.defaultCountryCode });
    } catch (error) {
      return this.problem(where, error instanceof Error ? error.message : String(error));
    }
    const zone = timeZone?.trim() || undefined;
    if (zone !== undefined && !isTimeZone(zone)) return this.problem(where, `time_zone "${timeZone}" is not an IANA time zone such as Europe/Berlin`);
    const first = this.seen.get(number);
    if (first) {
      this.merged += 1;
      if (!first.group && this.duplicates.length < MAX_PROBLEMS) {
        first.group = { number, kept: labelOf(first.where), merged: [] };
        this.duplicates.push(first.group);
      }
      if (first.group && first.group.merged.length < MAX_LINES_PER_DUPLICATE) first.group.merged.push(labelOf(where));
      return;
    }
    this.seen.set(number, { where });
    this.contacts.push(zone === undefined ? { number, variables } : { number, variables, time_zone: zone });
  }

  result(): ReadContacts {
    const problems = [...this.problems];
    if (this.unlisted > 0) problems.push({ field: 'contacts', message: `and ${this.unlisted} more rows with problems like these` });
    if (this.contacts.length === 0 && problems.length === 0) problems.push({ field: 'contacts', message: 'no contacts: the list has no rows' });
    return { contacts: this.contacts, merged: this.merged, duplicates: this.duplicates, problems };
  }
}

/**
 * CSV with a header, parsed a piece at a time: each piece (cut after a newline, so no character is
 * split) is parsed in a turn of its own, and its rows are read in slices.
 */
async function readCsv(text: string, reader: ContactReader, slices: Slices): Promise<void> {
  // Empty lines come through as records, so lines are counted here: csv-parse's own count (`info`) costs a third of the parse.
  const parser = Readable.from(pieces(text, slices)).pipe(parse({ bom: true, trim: true, relax_column_count: true }));
  let columns: Columns | undefined;
  let line = 1;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      const where: Where = { field: 'contacts', line };
      line += 1 + newlinesIn(record);
      if (record.every((field) => field === '')) continue;
      if (!columns) {
        columns = headerOf(record, reader);
        if (!columns) return;
        continue;
      }
      if (record.length !== columns.count) {
        reader.problem(where, `${record.length} fields where the header has ${columns.count}`);
      } else {
        const variables: Record<string, string> = {};
        for (const [name, i] of columns.variables) variables[name] = record[i]!;
        reader.contact(where, record[columns.number]!, variables, columns.timeZone === undefined ? undefined : record[columns.timeZone]);
      }
      if (slices.enough()) await slices.next();
    }
  } catch (error) {
    // Malformed CSV (a quote never closed): csv-parse's message says where.
    reader.problem({ field: 'contacts', line }, `the CSV cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Where each column of a CSV is: the number, the time zone, the variables (by name). */
interface Columns {
  count: number;
  number: number;
  timeZone: number | undefined;
  variables: [string, number][];
}

const HEADER: Where = { field: 'contacts', line: 1 };

/** The header read once: a problem with a column is said once, on line 1, not on every row. Undefined when rows cannot be read. */
function headerOf(header: readonly string[], reader: ContactReader): Columns | undefined {
  const number = header.findIndex((name) => NUMBER_COLUMNS.includes(name.toLowerCase()));
  if (number === -1) {
    reader.problem(HEADER, 'no number column in the header (phone, phone_number, number or toPhoneNumber)');
    return undefined;
  }
  const seen = new Set<string>();
  const variables: [string, number][] = [];
  let timeZone: number | undefined;
  let bad = false;
  header.forEach((name, i) => {
    if (seen.has(name)) {
      reader.problem(HEADER, `the column "${name}" appears twice`);
      bad = true;
    }
    seen.add(name);
    if (i === number) return;
    if (name === 'time_zone') timeZone = i;
    else if (!VARIABLE_NAME.test(name)) {
      reader.problem(HEADER, `${name === '' ? `column ${i + 1} has no name` : `"${name}" is not a variable name (letters, digits, _ . -)`}`);
      bad = true;
    } else variables.push([name, i]);
  });
  return bad ? undefined : { count: header.length, number, timeZone, variables };
}

/** Line breaks inside quoted fields: the next record starts that many lines further down. */
function newlinesIn(record: readonly string[]): number {
  let n = 0;
  for (const field of record) {
    if (!field.includes('\n')) continue;
    for (const char of field) if (char === '\n') n += 1;
  }
  return n;
}

async function* pieces(text: string, slices: Slices): AsyncGenerator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + CSV_PIECE_CHARS);
    if (end < text.length) {
      const newline = text.indexOf('\n', end);
      end = newline === -1 ? text.length : newline + 1;
    }
    yield text.slice(start, end);
    start = end;
    await slices.next();
  }
}

function isCell(value: unknown): value is Cell {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}
