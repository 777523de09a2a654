import { isBuiltinName } from '../prompts/builtins.js';
import { pick } from './json-path.js';
import { resultText } from './result-text.js';

/** A caller-context variable's name: letters, digits and _, not starting with a digit. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A prompt reads these; a long CRM note would crowd out the rest of it. */
export const MAX_VALUE_CHARS = 500;

/** A variable's name and the path of its field. */
export type Mapped = readonly [string, readonly string[]];

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record's fields as variables: the mapped ones, or else every scalar top-level field; each at most `maxChars`. */
export function fieldsOf(record: Record<string, unknown>, mapping: readonly Mapped[] | undefined, maxChars = MAX_VALUE_CHARS): Record<string, string> {
  const fields: Record<string, string> = {};
  const add = (name: string, value: string | undefined): void => {
    if (value !== undefined && value !== '') fields[name] = value;
  };
  if (mapping !== undefined) {
    // Asked for by name, so an object or a list is given too, as JSON.
    for (const [name, parts] of mapping) {
      const value = pick(record, parts);
      add(name, value === undefined || value === null ? undefined : cap(resultText(value).trim(), maxChars));
    }
    return fields;
  }
  for (const [name, value] of Object.entries(record)) {
    if (!VARIABLE_NAME.test(name) || isBuiltinName(name)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') add(name, cap(String(value).trim(), maxChars));
  }
  return fields;
}

/** At most `maxChars`, never half a surrogate pair, and no mark: the value may be spoken. */
export function cap(value: string, maxChars = MAX_VALUE_CHARS): string {
  if (value.length <= maxChars) return value;
  let end = maxChars;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return value.slice(0, end).trimEnd();
}
