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
import { writeEndedCalls } from '../src/bench/dashboard-load.js';
import type { CallSummary } from '../src/call/ports/call-summary.js';
import { FileThread } from '../src/dashboard/file-thread.js';
import { StoreReads } from '../src/dashboard/reads.js';
import { CallSearch, type CallFilter } from '../src/store/call-search.js';
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
    });
    expect(listed.find((call) => call.callId === 'b')?.campaign).toBe('spring');
  });

  test('pages: a slice and the total of all that match', async () => {
    const calls = await search();
    expect(await calls.page({}, 2, 2)).toMatchObject({ total: 6, calls: [{ callId: 'd' }, { callId: 'c' }] });
    expect(await calls.page({ direction: 'inbound' }, 2, 4)).toMatchObject({ total: 5, calls: [{ callId: 'a' }] });
    expect(await calls.page({}, 10, 60)).toEqual({ total: 6, calls: [] });
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
