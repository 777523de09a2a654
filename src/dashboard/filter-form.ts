import { z } from 'zod';
import { CALL_END_REASONS } from '../call/ports/call-summary.js';
import { FIELD_NAME, type CallFilter } from '../store/call-search.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const blankToUndefined = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optional = <S extends z.ZodType>(schema: S) => z.preprocess(blankToUndefined, schema.optional());

/**
 * The history's filter as the form sends it. Lenient: a value that does not
 * fit is dropped and named, so a bad filter still shows calls, never an error page.
 */
const FilterForm = z.object({
  since: optional(z.string().regex(DAY)),
  until: optional(z.string().regex(DAY)),
  direction: optional(z.enum(['inbound', 'outbound'])),
  outcome: optional(z.enum(CALL_END_REASONS)),
  campaign: optional(z.string().max(100)),
  number: optional(z.string().max(40)),
  text: optional(z.string().max(200)),
  field: optional(z.string().regex(FIELD_NAME)),
  value: optional(z.string().max(200)),
  page: optional(z.coerce.number().int().min(1).max(1_000_000)),
});
export type FilterValues = z.infer<typeof FilterForm>;
const KEYS = Object.keys(FilterForm.shape) as (keyof FilterValues)[];

export interface ParsedFilter {
  values: FilterValues;
  filter: CallFilter;
  page: number;
  /** Parts of the form that were ignored, by name. */
  ignored: string[];
}

export function parseFilter(input: Record<string, unknown>): ParsedFilter {
  const values: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const key of KEYS) {
    const raw = Array.isArray(input[key]) ? (input[key] as unknown[])[0] : input[key];
    const parsed = FilterForm.shape[key].safeParse(raw);
    if (parsed.success) values[key] = parsed.data;
    else ignored.push(key);
  }
  const v = values as FilterValues;
  const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  const filter: CallFilter = {
    since: v.since && `${v.since}T00:00:00.000Z`,
    until: v.until && nextDay(v.until),
    direction: v.direction,
    endReason: v.outcome,
    campaign: v.campaign,
    number: v.number,
    text: v.text,
    field: v.field !== undefined && v.value !== undefined ? { name: v.field, value: v.value } : undefined,
  };
  return { values: v, filter, page: v.page ?? 1, ignored };
}

/** The filter's values as hidden inputs' name/value pairs (for the paging and export forms). */
export function filterEntries(values: FilterValues): [string, string][] {
  return KEYS.filter((key) => key !== 'page' && values[key] !== undefined).map((key) => [key, String(values[key])]);
}
