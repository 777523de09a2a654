/**
 * The JSON object in a model's answer. A model that honours `response_format`
 * answers with the object alone; others wrap it in ```json fences or in
 * words ("Here is the report: {...}"), and are still understood.
 */
import { closingBrace } from '../json-braces.js';

const FENCE = /^```[a-zA-Z]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/** The parsed object; undefined when the text holds none. */
export function parseJsonAnswer(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  const fenced = FENCE.exec(trimmed);
  const candidate = fenced ? fenced[1]!.trim() : trimmed;
  const whole = tryParse(candidate);
  if (whole !== undefined) return whole;
  const first = firstObject(candidate);
  return first === undefined ? undefined : tryParse(first);
}

function tryParse(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The first balanced `{...}` in the text, braces inside strings not counted. */
function firstObject(text: string): string | undefined {
  const start = text.indexOf('{');
  const end = start < 0 ? -1 : closingBrace(text, start);
  return end < 0 ? undefined : text.slice(start, end + 1);
}
