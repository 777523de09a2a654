/**
 * Every CSV file Hotline writes — the dashboard's history export, a
 * campaign's results — is made here, so every cell is made safe the same way.
 */
import { stringify } from 'csv-stringify/sync';

export type CsvCell = string | number | boolean | null | undefined;

/**
 * What a spreadsheet may take for a formula (OWASP, CSV injection): = + - @, a tab or a carriage
 * return, and the full-width = + - @ that some spreadsheets read as their ASCII forms.
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * A phone number (`+49 151 1234567`, `+1 (555) 010-0199`) or a plain number (`-5`, `-0.5`): digits
 * and the marks numbers are written with, nothing else. It names no function, no cell and no other
 * program, so a spreadsheet can do nothing with it but show a number — and a person or a dialler
 * reading the file needs it exactly as written, which a quote in front would spoil.
 */
const PLAIN_NUMBER = /^[+-]?\d[\d ()./-]*$/;

/** A cell a spreadsheet shows as text and never runs: a formula-like value gets a leading `'`. */
export function inertCell(value: string): string {
  return FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
}

/** CSV lines (RFC 4180: quoted where needed, CRLF line ends) of rows of cells, each made inert. */
export function csvLines(rows: readonly (readonly CsvCell[])[]): string {
  return stringify(
    rows.map((row) => row.map((cell) => (typeof cell === 'string' ? inertCell(cell) : (cell ?? '')))),
    { record_delimiter: 'windows' },
  );
}
