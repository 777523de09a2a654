/**
 * The dashboard's reads on the store, SQLite and PostgreSQL alike: the history's filters, paging
 * and export batches (CallSearch), a call's story, and the files' thread (a transcript parsed,
 * the prompts folder checked) that keeps parsing off the event loop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { writeEndedCalls } from '../bench/dashboard-load.js';
import type { CallSummary } from '../src/call/ports/call-summary.js';
import { FileThread } from '../src/dashboard/file-thread.js';
import { StoreReads } from '../src/dashboard/reads.js';
import { CallSearch, type CallFilter, type CallListing } from '../src/store/call-search.js';
import type { FieldValues, StoredReport } from '../src/store/report-repository.js';
import type { Store } from '../src/store/store.js';
import { callSummary, ORDER_CALL, writeTranscript } from './helpers/reports.js';
import { freshStore, storeKinds, type StoreKind } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const PROMPTS = { dir: path.resolve('prompts'), env: {} };
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(kind: StoreKind): Promise<Store & { location: { location: { databaseFile: string } } }> {
  const store = await freshStore(kind);
  cleanups.push(() => store.close());
  return store;
}

function report(call: CallSummary, summary: string | null, fields: FieldValues | null): StoredReport {
  return { callId: call.callId, sessionId: call.sessionId, createdAt: call.endedAt, summary, fields, fieldsStatus: 'ok', fieldsError: null, body: '{}' };
}

/** Six ended calls, each where one filter tells it from the others. */
const CALLS: readonly { call: CallSummary; report?: StoredReport }[] = (() => {
  const a = callSummary({ sessionId: 'a', endedAt: '2026-11-20T10:00:00.000Z', from: '4915111111111', to: '4930000000' });
  const b = callSummary({ sessionId: 'b', endedAt: '2026-11-21T10:00:00.000Z', direction: 'outbound', from: '4930000000', to: '4915122222222', tags: { campaign: 'spring' } });
  const c = callSummary({ sessionId: 'c', endedAt: '2026-11-22T10:00:00.000Z', endReason: 'transferred' });
  const d = callSummary({ sessionId: 'd', endedAt: '2026-11-22T23:59:59.999Z' });
  const e = callSummary({ sessionId: 'e', endedAt: '2026-11-23T00:00:00.000Z', tags: { campaign: 'autumn' } });
  // The same end as e: the call id breaks the tie.
  const f = callSummary({ sessionId: 'f', endedAt: '2026-11-23T00:00:00.000Z' });
  return [
    { call: a, report: report(a, 'Asked about ORDER 4711; 100% sure', { callback_wanted: true, customer_number: '4711', score: 3 }) },
    { call: b, report: report(b, 'Wanted a callback_later', { callback_wanted: false, customer_number: 4711, score: 3.5 }) },
    { call: c, report: report(c, 'Passed to sales', { sentiment: 'negative', Zeta: 'x', alpha: 'y' }) },
    { call: d },
    { call: e, report: report(e, null, null) },
    { call: f },
  ];
})();

/** A call whose row is written as it starts (issue 22): no end yet. */
async function callInProgress(store: Store, sessionId: string): Promise<void> {
  await store.db
    .insertInto('calls')
    .values({
      call_id: sessionId,
      session_id: sessionId,
      direction: 'inbound',
      from_number: '4915111111111',
      to_number: '4930000000',
      started_at: '2026-11-23T01:00:00.000Z',
      ended_at: null,
      duration_ms: null,
      end_reason: null,
      service_reason: null,
      turns: '[]',
      barge_ins: 0,
      tool_runs: '[]',
      variables: null,
      tags: JSON.stringify({ campaign: 'spring' }),
      transcript_file: '/nonexistent',
    })
    .execute();
}

describe.each(await storeKinds())('the history on %s', (kind) => {
  async function search(): Promise<CallSearch> {
    const store = await openStore(kind);
    await writeEndedCalls(store.db, CALLS);
    await callInProgress(store, 'live');
    return new CallSearch(store);
  }

  async function ids(calls: CallSearch, filter: CallFilter): Promise<string[]> {
    return (await calls.page(filter, 100, 0)).calls.map((call) => call.callId);
  }

  test('every ended call, newest first (the call id breaking a tie); a call in progress is not listed', async () => {
    const calls = await search();
    const { calls: listed, total } = await calls.page({}, 100, 0);
    expect(total).toBe(6);
    expect(listed.map((call) => call.callId)).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    expect(listed.at(-1)).toEqual({
      callId: 'a',
      sessionId: 'a',
      direction: 'inbound',
      from: '4915111111111',
      to: '4930000000',
      startedAt: '2026-11-22T03:03:55.823Z',
      endedAt: '2026-11-20T10:00:00.000Z',
      durationMs: 65_788,
      endReason: 'caller_hung_up',
      turns: 3,
      bargeIns: 1,
      campaign: null,
      summary: 'Asked about ORDER 4711; 100% sure',
      fields: { callback_wanted: true, customer_number: '4711', score: 3 },
      // Its second turn's model has no price: the call's cost is not known (null), not $0.0004.
      costUsd: null,
      demo: false,
    });
    expect(listed.find((call) => call.callId === 'b')?.campaign).toBe('spring');
  });

  test('pages: a slice and the total of all that match', async () => {
    const calls = await search();
    expect(await calls.page({}, 2, 2)).toMatchObject({ total: 6, calls: [{ callId: 'd' }, { callId: 'c' }] });
    expect(await calls.page({ direction: 'inbound' }, 2, 4)).toMatchObject({ total: 5, calls: [{ callId: 'a' }] });
    expect(await calls.page({}, 10, 60)).toEqual({ total: 6, calls: [], cost: { usd: null, unknown: 6, demo: 0 } });
  });

  test('each filter, and filters together', async () => {
    const calls = await search();
    // The day's start is in, the next day's start (until) is out.
    expect(await ids(calls, { since: '2026-11-22T00:00:00.000Z', until: '2026-11-23T00:00:00.000Z' })).toEqual(['d', 'c']);
    expect(await ids(calls, { direction: 'outbound' })).toEqual(['b']);
    expect(await ids(calls, { endReason: 'transferred' })).toEqual(['c']);
    expect(await ids(calls, { campaign: 'spring' })).toEqual(['b']);
    expect(await ids(calls, { campaign: 'none' })).toEqual([]);
    // Digits anywhere in either number, whatever else was typed.
    expect(await ids(calls, { number: '+49 151 2222' })).toEqual(['b']);
    expect(await ids(calls, { number: '30000000' })).toEqual(['b', 'a']);
    expect(await ids(calls, { number: 'abc' })).toHaveLength(6);
    expect(await ids(calls, { direction: 'inbound', number: '49151' })).toEqual(['f', 'e', 'd', 'c', 'a']);
  });

  test('words in the summary: either case, % and _ only themselves', async () => {
    const calls = await search();
    expect(await ids(calls, { text: 'order 4711' })).toEqual(['a']);
    expect(await ids(calls, { text: '  Passed TO  ' })).toEqual(['c']);
    expect(await ids(calls, { text: 'passed  to' })).toEqual([]);
    expect(await ids(calls, { text: 'passed to' })).toEqual(['c']);
    expect(await ids(calls, { text: '100%' })).toEqual(['a']);
    expect(await ids(calls, { text: '0%' })).toEqual(['a']);
    expect(await ids(calls, { text: '%' })).toEqual(['a']);
    expect(await ids(calls, { text: 'callback_' })).toEqual(['b']);
    expect(await ids(calls, { text: 'd_' })).toEqual([]);
  });

  test('a report field: booleans by "true"/"false", a number by its value or its text, text as it is', async () => {
    const calls = await search();
    const field = (name: string, value: string) => ids(calls, { field: { name, value } });
    expect(await field('callback_wanted', 'true')).toEqual(['a']);
    expect(await field('callback_wanted', 'false')).toEqual(['b']);
    // The text "4711" in one report, the number in the other.
    expect(await field('customer_number', '4711')).toEqual(['b', 'a']);
    expect(await field('customer_number', '4711.0')).toEqual(['b']);
    expect(await field('score', '3.5')).toEqual(['b']);
    expect(await field('score', '3')).toEqual(['a']);
    expect(await field('sentiment', 'negative')).toEqual(['c']);
    expect(await field('sentiment', 'NEGATIVE')).toEqual([]);
    expect(await field('missing', 'x')).toEqual([]);
    // Not a field name: ignored, never SQL.
    expect(await field(`x') OR 1=1 --`, 'x')).toHaveLength(6);
  });

  test('an export in batches: each call once, newest first, the tie at one end split across two batches', async () => {
    const calls = await search();
    const seen: string[] = [];
    for (let after: { endedAt: string; callId: string } | undefined; ; ) {
      const batch = await calls.batch({}, after, 1);
      if (batch.length === 0) break;
      seen.push(...batch.map((call) => call.callId));
      after = batch.at(-1);
    }
    expect(seen).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    expect((await calls.batch({ direction: 'inbound' }, { endedAt: '2026-11-22T10:00:00.000Z', callId: 'c' }, 10)).map((call) => call.callId)).toEqual(['a']);
  });

  test('the field names of the latest reports, sorted, for the filter', async () => {
    const calls = await search();
    expect(await calls.fieldNames()).toEqual(['Zeta', 'alpha', 'callback_wanted', 'customer_number', 'score', 'sentiment']);
  });

  describe('the LLM cost', () => {
    /**
     * A call whose turns cost these: a number in USD; `null` for a turn whose tokens were counted
     * and whose model had no price; 'uncounted' for one no server counted tokens of (cut off, failed).
     */
    function costing(sessionId: string, day: number, costs: readonly (number | null | 'uncounted')[], overrides: Partial<CallSummary> = {}): CallSummary {
      const endedAt = `2026-11-${day}T10:00:00.000Z`;
      const turns = costs.map((cost) => {
        const turn = { at: endedAt, interrupted: false, failed: false };
        if (cost === 'uncounted') return turn;
        const counted = { ...turn, tokens: { prompt: 1000, completion: 20 }, model: cost === null ? 'house-model' : 'gpt-4o-mini' };
        return cost === null ? counted : { ...counted, costUsd: cost };
      });
      return callSummary({ sessionId, endedAt, turns, ...overrides });
    }

    const COSTED = [
      costing('cheap', 20, [0.0004, 0.0021]),
      // Hung up during the greeting, a template: no LLM asked, nothing spent.
      costing('zero', 21, []),
      // 0.1 + 0.2 is 0.30000000000000004 in doubles: "at most $0.30" must still find it.
      costing('mid', 22, [0.1, 0.2], { direction: 'outbound', from: '4930000000', to: '4915122222222' }),
      costing('big', 23, [0.5, 0.75]),
      costing('unpriced', 24, [0.01, null]),
      costing('uncounted', 25, ['uncounted', 'uncounted']),
      // A turn cut off before its counts came adds nothing; the counted one is the cost.
      costing('partial', 26, [0.05, 'uncounted']),
    ];
    const KNOWN: Record<string, number | null> = { cheap: 0.0025, zero: 0, mid: 0.3, big: 1.25, unpriced: null, uncounted: null, partial: 0.05 };

    async function costSearch(): Promise<CallSearch> {
      const store = await openStore(kind);
      await writeEndedCalls(store.db, COSTED.map((call) => ({ call })));
      await callInProgress(store, 'live');
      return new CallSearch(store);
    }

    const sumOf = (listed: readonly CallListing[]) => listed.reduce((sum, call) => sum + (call.costUsd ?? 0), 0);

    test("each call's cost as its turns add up; unknown ones null, a call with no turn $0", async () => {
      const { calls } = await (await costSearch()).page({}, 100, 0);
      const costs = Object.fromEntries(calls.map((call) => [call.callId, call.costUsd]));
      expect(Object.keys(costs).sort()).toEqual(Object.keys(KNOWN).sort());
      for (const [id, cost] of Object.entries(KNOWN)) {
        if (cost === null) expect(costs[id], id).toBeNull();
        else expect(costs[id], id).toBeCloseTo(cost, 12);
      }
    });

    test('the sum is of every call that matches, not only the page shown; calls of unknown cost are counted apart, never as $0', async () => {
      const search = await costSearch();
      const all = await search.page({}, 100, 0);
      const page = await search.page({}, 2, 0);
      expect(page.calls).toHaveLength(2);
      expect(page.total).toBe(7);
      expect(page.cost.unknown).toBe(2);
      expect(page.cost.usd).toBeCloseTo(sumOf(all.calls), 12);
      expect(page.cost.usd).toBeCloseTo(0.0025 + 0 + 0.3 + 1.25 + 0.05, 12);
      // Later pages carry the same sum: it is the filter's, not the page's.
      expect((await search.page({}, 2, 4)).cost).toEqual(page.cost);
      // Only calls of unknown cost: no sum at all, rather than $0.
      expect((await search.page({ since: '2026-11-24T00:00:00.000Z', until: '2026-11-26T00:00:00.000Z' }, 100, 0)).cost).toEqual({ usd: null, unknown: 2, demo: 0 });
      // Nothing matches: nothing to sum and nothing unknown.
      expect((await search.page({ endReason: 'voicemail' }, 100, 0)).cost).toEqual({ usd: null, unknown: 0, demo: 0 });
    });

    test('filtered by cost at least and at most, with the other filters: the expensive calls, and the sum of exactly those', async () => {
      const search = await costSearch();
      const cases: [CallFilter, string[]][] = [
        [{ costAtLeast: 0.25 }, ['big', 'mid']],
        [{ costAtLeast: 1 }, ['big']],
        [{ costAtMost: 0.3 }, ['partial', 'mid', 'zero', 'cheap']],
        [{ costAtLeast: 0.0025, costAtMost: 0.05 }, ['partial', 'cheap']],
        // $0 at least: every call whose cost is known, and none whose is not.
        [{ costAtLeast: 0 }, ['partial', 'big', 'mid', 'zero', 'cheap']],
        [{ costAtLeast: 0.25, direction: 'outbound' }, ['mid']],
        [{ costAtLeast: 2 }, []],
      ];
      for (const [filter, expected] of cases) {
        const { calls, total, cost } = await search.page(filter, 100, 0);
        expect(calls.map((call) => call.callId), JSON.stringify(filter)).toEqual(expected);
        expect(total).toBe(expected.length);
        // A cost filter finds only calls whose cost is known.
        expect(cost.unknown).toBe(0);
        if (expected.length === 0) expect(cost.usd).toBeNull();
        else expect(cost.usd, JSON.stringify(filter)).toBeCloseTo(sumOf(calls), 12);
      }
      // The export's batches carry the cost and take the same filter.
      expect((await search.batch({ costAtLeast: 1 }, undefined, 10)).map((call) => [call.callId, call.costUsd])).toEqual([['big', 1.25]]);
    });

    test("calls on the built-in demo model are demo calls, counted apart from the real model's calls of unknown cost", async () => {
      /** A call whose turns asked these models ('' for a turn cut off before any tokens were counted), none of them priced. */
      const onDemo = (sessionId: string, day: number, models: readonly string[]): CallSummary => {
        const at = `2026-11-${day}T10:00:00.000Z`;
        const turns = models.map((model) => ({ at, interrupted: false, failed: false, ...(model ? { tokens: { prompt: 900, completion: 12 }, model } : {}) }));
        return callSummary({ sessionId, endedAt: at, turns });
      };
      const store = await openStore(kind);
      await writeEndedCalls(
        store.db,
        [
          // A turn cut off before its counts came does not make a demo call any less one.
          onDemo('demo', 20, ['hotline-demo', 'hotline-demo', '']),
          // A turn on a real model without a price: that price is missing, whatever the other turn asked.
          onDemo('mixed', 21, ['hotline-demo', 'house-model']),
          costing('unpriced', 22, [null]),
          costing('priced', 23, [0.02]),
          costing('nothing-asked', 24, []),
        ].map((call) => ({ call })),
      );
      const search = new CallSearch(store);
      const { calls, cost } = await search.page({}, 100, 0);
      expect(calls.map((call) => [call.callId, call.costUsd, call.demo])).toEqual([
        ['nothing-asked', 0, false],
        ['priced', 0.02, false],
        ['unpriced', null, false],
        ['mixed', null, false],
        ['demo', null, true],
      ]);
      expect(cost).toEqual({ usd: 0.02, unknown: 2, demo: 1 });
      expect((await search.page({ until: '2026-11-21T00:00:00.000Z' }, 100, 0)).cost).toEqual({ usd: null, unknown: 0, demo: 1 });
      expect((await search.batch({}, undefined, 10)).find((call) => call.callId === 'demo')?.demo).toBe(true);
    });
  });
});

describe.each(await storeKinds())('the dashboard reads on %s', (kind) => {
  test('the history and the charts come from the store, and see calls written after they started', async () => {
    const store = await openStore(kind);
    const reads = new StoreReads(store, PROMPTS, logger);
    cleanups.push(() => reads.close());
    await writeEndedCalls(store.db, [{ call: callSummary({ sessionId: 'first', endedAt: new Date(Date.now() - 60_000).toISOString() }) }]);
    expect((await reads.page({}, 10, 0)).total).toBe(1);
    await writeEndedCalls(store.db, [{ call: callSummary({ sessionId: 'second', endedAt: new Date().toISOString() }) }]);
    const { calls, total } = await reads.page({}, 10, 0);
    expect(total).toBe(2);
    expect(calls.map((c) => c.sessionId)).toEqual(['second', 'first']);
    expect(await reads.batch({}, { endedAt: calls[0]!.endedAt, callId: 'second' }, 10)).toHaveLength(1);
    expect((await reads.charts(new Date())).last24h.calls).toBe(2);
  });

  test('a store that is gone rejects each question with why, and nothing crashes', async () => {
    const store = await freshStore(kind);
    const reads = new StoreReads(store, PROMPTS, logger);
    cleanups.push(() => reads.close());
    await store.close();
    await expect(reads.page({}, 10, 0)).rejects.toThrow();
    await expect(reads.fieldNames()).rejects.toThrow();
    await expect(reads.charts(new Date())).rejects.toThrow();
    // The files' thread does not need the store.
    expect((await reads.checkPrompts()).files.length).toBeGreaterThan(0);
  });

  test("a call's story: by its call id or its session id, its transcript parsed, never a call in progress", async () => {
    const store = await openStore(kind);
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-reads-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const reads = new StoreReads(store, PROMPTS, logger);
    cleanups.push(() => reads.close());
    const transcriptFile = await writeTranscript(dir, 'story', ORDER_CALL);
    const first = callSummary({ callId: 'story-1', sessionId: 'story', endedAt: '2026-11-21T10:00:00.000Z', transcriptFile });
    const second = callSummary({ callId: 'story-2', sessionId: 'story', startedAt: '2026-11-22T10:00:00.000Z', endedAt: '2026-11-22T10:01:00.000Z', transcriptFile });
    await writeEndedCalls(store.db, [{ call: first, report: report(first, 'The first', null) }, { call: second }]);
    await callInProgress(store, 'live');

    const bySession = await reads.call('story');
    expect(bySession).toMatchObject({ call: { callId: 'story-2' }, matchedBy: 'sessionId', otherCalls: [{ callId: 'story-1' }], report: undefined, deliveries: [] });
    expect(bySession!.lines.map((line) => line.text)).toEqual(ORDER_CALL.map((line) => line.text));
    expect(bySession!.transcriptProblem).toBeUndefined();
    expect(await reads.call('story-1')).toMatchObject({ call: { callId: 'story-1' }, matchedBy: 'callId', report: { summary: 'The first' } });
    expect(await reads.call('nope')).toBeUndefined();
  });
});

describe("the files' thread", () => {
  test('parses a transcript and checks the prompts folder as prompts:check does; stopped, it starts again', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-reads-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const files = new FileThread(PROMPTS, logger);
    cleanups.push(() => files.close());
    const file = await writeTranscript(dir, 'one', ORDER_CALL);
    expect((await files.transcript(file)).lines).toHaveLength(ORDER_CALL.length);
    expect((await files.checkPrompts()).files.map((f) => f.file)).toContain('system.md');
    await files.close();
    expect(await files.transcript(path.join(dir, 'gone.jsonl'))).toEqual({ lines: [], problem: 'The transcript file is gone.' });
    // A thread starts under tsx here (it compiles the modules it loads): seconds on a busy machine.
  }, 60_000);
});
