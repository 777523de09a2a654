import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { DEFAULT_PRICES, loadPriceTable, PriceTable, sumCost } from '../src/llm/prices.js';

describe('the price table', () => {
  const table = new PriceTable();

  test('a model by its own name, a dated version, or behind a provider prefix; an unknown one has no price', () => {
    expect(table.priceOf('gpt-4o-mini')).toBe(DEFAULT_PRICES['gpt-4o-mini']);
    // The longest known name wins: a gpt-4o-mini is not a gpt-4o.
    expect(table.priceOf('gpt-4o-mini-2024-07-18')).toBe(DEFAULT_PRICES['gpt-4o-mini']);
    expect(table.priceOf('gpt-4o-2024-08-06')).toBe(DEFAULT_PRICES['gpt-4o']);
    expect(table.priceOf('openai/GPT-4.1-mini')).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
    expect(table.priceOf('gpt-4oz')).toBeUndefined();
    expect(table.priceOf('my-own-model')).toBeUndefined();
  });

  test('prompt tokens at the input price, the cached part at the cached price, completion (reasoning in it) at the output price', () => {
    // gpt-4.1: $2 in, $0.50 cached, $8 out per million.
    expect(table.costOf('gpt-4.1', { prompt: 1_000_000, cached: 400_000, completion: 100_000, reasoning: 50_000 })).toBeCloseTo(0.6 * 2 + 0.4 * 0.5 + 0.1 * 8, 12);
    // Without a cached price, cached tokens cost the input price; a count above the prompt is capped.
    expect(table.costOf('mistral-small', { prompt: 1000, cached: 5000, completion: 0 })).toBeCloseTo(1000 * 0.1e-6, 12);
    expect(table.costOf('my-own-model', { prompt: 10, completion: 10 })).toBeUndefined();
  });

  test('sumCost adds what has a price and says null when nothing has', () => {
    expect(sumCost([{ costUsd: 0.001 }, {}, { costUsd: 0.002 }])).toBeCloseTo(0.003, 12);
    expect(sumCost([{}, {}])).toBeNull();
    expect(sumCost([])).toBeNull();
  });

  test('LLM_PRICES_FILE adds and overrides prices; a file that cannot be used is a ConfigError naming it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prices-'));
    try {
      const file = path.join(dir, 'prices.json');
      await writeFile(file, JSON.stringify({ 'House-Model': { input: 0.2, output: 0.8 }, 'gpt-4o-mini': { input: 0.1, cached_input: 0.01, output: 0.4 } }));
      const own = await loadPriceTable(file);
      expect(own.priceOf('house-model')).toEqual({ input: 0.2, output: 0.8 });
      expect(own.priceOf('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.1, cachedInput: 0.01, output: 0.4 });
      expect(own.priceOf('gpt-4o')).toBe(DEFAULT_PRICES['gpt-4o']);

      await writeFile(file, '{"m": {"input": -1, "output": 1}}');
      await expect(loadPriceTable(file)).rejects.toThrow(ConfigError);
      await writeFile(file, 'not json');
      await expect(loadPriceTable(file)).rejects.toThrow(/is not JSON/);
      await expect(loadPriceTable(path.join(dir, 'missing.json'))).rejects.toThrow(/cannot be read \(ENOENT\)/);
      expect((await loadPriceTable(undefined)).priceOf('gpt-5')).toBe(DEFAULT_PRICES['gpt-5']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
