/**
 * What a model's tokens cost: a price table in US dollars per million tokens, by model name. The
 * defaults are the providers' published list prices for their common models when this table was
 * written (2025); a business's own prices (a discount, a newer model, a self-hosted one at cost) go
 * in LLM_PRICES_FILE and win. A model the table does not know costs nothing known: its calls show
 * tokens without a price, never a guess.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { DEMO_MODEL_ID } from './scripted-contract.js';
import type { TokenUsage } from './usage.js';

export interface ModelPrice {
  /** Prompt tokens, per million. */
  readonly input: number;
  /** Prompt tokens read from the provider's cache, per million; the input price when not given. */
  readonly cachedInput?: number;
  /** Completion tokens (reasoning tokens included), per million. */
  readonly output: number;
}

/** List prices, USD per million tokens (OpenAI, Anthropic via gateways, Mistral, Groq, DeepSeek). */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
  o3: { input: 2, cachedInput: 0.5, output: 8 },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, output: 4 },
  'mistral-small': { input: 0.1, output: 0.3 },
  'mistral-medium': { input: 0.4, output: 2 },
  'mistral-large': { input: 2, output: 6 },
  'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'deepseek-chat': { input: 0.27, cachedInput: 0.07, output: 1.1 },
};

const PriceFileSchema = z.record(
  z.string().min(1),
  z.strictObject({ input: z.number().nonnegative(), cached_input: z.number().nonnegative().optional(), output: z.number().nonnegative() }),
);

export class PriceTable {
  /** Longest names first: `gpt-4o-mini-2024-07-18` is a gpt-4o-mini, not a gpt-4o. */
  private readonly names: string[];

  constructor(private readonly prices: Readonly<Record<string, ModelPrice>> = DEFAULT_PRICES) {
    this.names = Object.keys(prices).sort((a, b) => b.length - a.length);
  }

  /** The model's price: its own name, else the longest known name it starts with (a dated version, a provider prefix cut). */
  priceOf(model: string): ModelPrice | undefined {
    const name = model.toLowerCase().replace(/^[\w.-]+\//, '');
    const exact = this.prices[name];
    if (exact) return exact;
    const known = this.names.find((known) => name.startsWith(`${known}-`) || name.startsWith(`${known}:`) || name.startsWith(`${known}@`));
    return known === undefined ? undefined : this.prices[known];
  }

  /** What one request's (or a turn's) tokens cost in USD; undefined for a model without a price. */
  costOf(model: string, usage: TokenUsage): number | undefined {
    const price = this.priceOf(model);
    if (!price) return undefined;
    const cached = Math.min(usage.cached ?? 0, usage.prompt);
    const fresh = usage.prompt - cached;
    return (fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.completion * price.output) / 1_000_000;
  }
}

/** The defaults with LLM_PRICES_FILE's prices over them: `{"my-model": {"input": 0.2, "cached_input": 0.05, "output": 0.8}}`. */
export async function loadPriceTable(file: string | undefined): Promise<PriceTable> {
  if (!file) return new PriceTable();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`LLM_PRICES_FILE ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`LLM_PRICES_FILE ${file} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const prices = PriceFileSchema.safeParse(parsed);
  if (!prices.success) {
    const issue = prices.error.issues[0];
    throw new ConfigError(`LLM_PRICES_FILE ${file}: ${issue ? `${issue.path.join('.') || 'the file'}: ${issue.message}` : 'not a price table'}; expected {"model": {"input": …, "cached_input": …, "output": …}} in USD per million tokens`);
  }
  const own: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(prices.data)) {
    own[model.toLowerCase()] = { input: price.input, output: price.output, ...(price.cached_input === undefined ? {} : { cachedInput: price.cached_input }) };
  }
  return new PriceTable({ ...DEFAULT_PRICES, ...own });
}

/** Turns' costs summed; null when none had a price. */
export function sumCost(turns: readonly { readonly costUsd?: number }[]): number | null {
  let sum: number | null = null;
  for (const turn of turns) if (turn.costUsd !== undefined) sum = (sum ?? 0) + turn.costUsd;
  return sum;
}

/**
 * What a call's LLM turns cost in USD, or null when that is not known — the calls table's
 * `cost_usd`, which the history lists, filters and sums.
 *
 * Null rather than a sum that looks complete: a business adding up its calls must not be told $0
 * (or too little) for tokens nobody priced. So the cost is unknown when a turn's tokens were counted
 * but its model had no price (LLM_PRICES_FILE), or when the call had turns and no server counted a
 * token of any of them. A call without a turn asked no LLM (the greeting is a template): $0.
 * A turn cut off before its counts came adds nothing; the counted ones still give the cost.
 *
 * The SQL steps that fill the column for calls stored before it (store/sqlite/migrations.ts step 11,
 * store/postgres/migrations.ts step 5) say the same in SQL: change one, change them all.
 */
export function callCostUsd(turns: readonly { readonly tokens?: unknown; readonly costUsd?: number }[]): number | null {
  let sum: number | null = null;
  for (const turn of turns) {
    if (turn.costUsd !== undefined) sum = (sum ?? 0) + turn.costUsd;
    else if (turn.tokens !== undefined) return null;
  }
  return turns.length === 0 ? 0 : sum;
}

/**
 * Whether a call's turns asked the built-in demo model and no other: its cost is null (the demo model
 * has no price) because nothing was paid, not because a price is missing. The history asks the same
 * in SQL (CallSearch in store/call-search.ts): change one, change both.
 */
export function onDemoModel(turns: readonly { readonly model?: string }[]): boolean {
  return turns.some((turn) => turn.model === DEMO_MODEL_ID) && turns.every((turn) => turn.model === undefined || turn.model === DEMO_MODEL_ID);
}
