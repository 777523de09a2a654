import type { StoredContact } from '../store/campaign-repository.js';

/**
 * A campaign's results, one row per contact: the number, what became of it
 * and the contact's own variables (one column each, in order of first
 * appearance), so the file goes back into a spreadsheet beside the original.
 */
export function resultsCsv(contacts: readonly StoredContact[]): string {
  const variableNames: string[] = [];
  for (const c of contacts) for (const name of Object.keys(c.variables)) if (!variableNames.includes(name)) variableNames.push(name);
  const header = ['phone', 'status', 'outcome', 'attempts', 'last_session_id', 'last_error', ...variableNames];
  const rows = contacts.map((c) => [
    c.number,
    c.status,
    c.outcome ?? '',
    String(c.attempts),
    c.lastSessionId ?? '',
    c.lastError ?? '',
    ...variableNames.map((name) => c.variables[name] ?? ''),
  ]);
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** RFC 4180; a leading = + - @ is quoted with a ' so a spreadsheet never runs it as a formula. */
function csvField(value: string): string {
  const safe = /^[=+\-@]/.test(value) && !/^[+-]?\d/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) || safe !== value ? `"${safe.replace(/"/g, '""')}"` : safe;
}
