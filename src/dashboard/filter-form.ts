import { z } from 'zod';
import { CALL_END_REASONS } from '../call/ports/call-summary.js';
import { maskedQuery } from '../phone/mask-number.js';
import { FIELD_NAME, type CallFilter } from '../store/call-search.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const blankToUndefined = (value: unknown): unknown => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optional = <S extends z.ZodType>(schema: S) => z.preprocess(blankToUndefined, schema.optional());

/** How the cost fields are named where a problem with one is told. */
const COST_LABELS = { cost_min: 'Cost at least', cost_max: 'Cost at most' } as const;
type CostKey = keyof typeof COST_LABELS;

/**
 * An amount in US dollars as a person types it — `0.05`, `$0.05`, `.5` — checked here so that a bad
 * one is told in a sentence that says what to type, not only named.
 */
function dollars(key: CostKey) {
  const label = COST_LABELS[key];
  return z.string().transform((raw, ctx): number => {
    const text = raw.trim().replace(/^\$\s*/, '');
    const shown = raw.length > 20 ? `${raw.slice(0, 20)}…` : raw;
    if (/^-\s*\$?\s*(?:\d|\.\d)/.test(text)) {
      ctx.addIssue({ code: 'custom', message: `${label}: "${shown}" is below $0, and no call costs less than nothing` });
      return z.NEVER;
    }
    if (!/^(?:\d{1,12}(?:\.\d*)?|\.\d+)$/.test(text)) {
      ctx.addIssue({ code: 'custom', message: `${label}: "${shown}" is not an amount in US dollars; write it like 0.05` });
      return z.NEVER;
    }
    return Number(text);
  });
}

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
  cost_min: optional(dollars('cost_min')),
  cost_max: optional(dollars('cost_max')),
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
  /** Sentences about values that were ignored or cannot match, where a name alone would not say what to type. */
  problems: string[];
}

/**
 * `numbersMasked`: for a role that sees numbers masked, the number filter compares masked forms
 * only (maskedQuery): a part of a number would find the calls whose hidden digits hold it.
 */
export function parseFilter(input: Record<string, unknown>, options: { numbersMasked?: boolean } = {}): ParsedFilter {
  const values: Record<string, unknown> = {};
  const ignored: string[] = [];
  const problems: string[] = [];
  for (const key of KEYS) {
    const raw = Array.isArray(input[key]) ? (input[key] as unknown[])[0] : input[key];
    const parsed = FilterForm.shape[key].safeParse(raw);
    if (parsed.success) values[key] = parsed.data;
    else if (key in COST_LABELS) problems.push(costProblem(key as CostKey, parsed.error));
    else ignored.push(key);
  }
  const v = values as FilterValues;
  if (v.cost_min !== undefined && v.cost_max !== undefined && v.cost_min > v.cost_max) {
    problems.push(`No call can cost at least $${v.cost_min} and at most $${v.cost_max}: the least is above the most`);
  }
  const masked = options.numbersMasked && v.number !== undefined ? maskedQuery(v.number) : undefined;
  if (options.numbersMasked && v.number !== undefined) {
    problems.push(
      masked === undefined
        ? `Number: numbers are masked for you, so only a whole number or one as shown (4915•••••••78) can be looked for, not "${v.number}"`
        : `Numbers are masked for you: these are the calls whose number shows as ${masked}`,
    );
  }
  const nextDay = (day: string): string => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  const filter: CallFilter = {
    since: v.since && `${v.since}T00:00:00.000Z`,
    until: v.until && nextDay(v.until),
    direction: v.direction,
    endReason: v.outcome,
    campaign: v.campaign,
    number: options.numbersMasked ? undefined : v.number,
    // Nothing at all for what cannot be a number masked: a filter dropped shows every call, never fewer.
    maskedNumber: masked,
    text: v.text,
    field: v.field !== undefined && v.value !== undefined ? { name: v.field, value: v.value } : undefined,
    costAtLeast: v.cost_min,
    costAtMost: v.cost_max,
  };
  return { values: v, filter, page: v.page ?? 1, ignored, problems };
}

/** The sentence the check wrote; a value that was not text at all (an object, from a query string made by hand) gets the general one. */
function costProblem(key: CostKey, error: z.ZodError): string {
  const custom = error.issues.find((issue) => issue.code === 'custom');
  return custom ? custom.message : `${COST_LABELS[key]}: not an amount in US dollars; write it like 0.05`;
}

/** The filter's values as hidden inputs' name/value pairs (for the paging and export forms). */
export function filterEntries(values: FilterValues): [string, string][] {
  return KEYS.filter((key) => key !== 'page' && values[key] !== undefined).map((key) => [key, String(values[key])]);
}
