/**
 * The dashboard's charts and prompts pages: the numbers the store (SQLite and
 * PostgreSQL alike) counts for the charts, the pages that show them, the browser script that draws them, and
 * the prompt store's status the prompts page reads.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { CompiledQuery } from 'kysely';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { writeEndedCalls } from '../bench/dashboard-load.js';
import type { CallSummary, TurnSummary } from '../src/call/ports/call-summary.js';
import { CHARTS_SCRIPT } from '../src/dashboard/charts-script.js';
import { chartsPage, chartsView } from '../src/dashboard/pages/charts.js';
import { promptsPage } from '../src/dashboard/pages/prompts.js';
import { PromptStore, type PromptsStatus } from '../src/prompts/prompt-store.js';
import { CallStats, windowQueries, type ChartData, type DayStats } from '../src/store/call-stats.js';
import type { Store } from '../src/store/store.js';
import { callSummary } from './helpers/reports.js';
import { freshStore, storeKinds, type StoreKind } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const NOW = new Date('2026-11-23T05:30:00.000Z');

function turn(firstSpeakMs?: number, llmFirstTokenMs?: number): TurnSummary {
  return {
    at: '2026-11-23T00:00:00.000Z',
    ...(firstSpeakMs === undefined ? {} : { firstSpeakMs }),
    ...(llmFirstTokenMs === undefined ? {} : { llmFirstTokenMs }),
    interrupted: false,
    failed: firstSpeakMs === undefined,
  };
}

function call(sessionId: string, endedAt: string, overrides: Partial<CallSummary> = {}): CallSummary {
  return callSummary({ sessionId, endedAt, turns: [], bargeIns: 0, ...overrides });
}

/** The calls of the chart tests; each sits where a window's edge, a bucket or a percentile is tested. */
const CALLS: readonly CallSummary[] = [
  call('today-1', '2026-11-23T05:10:00.000Z', { turns: [turn(100, 50), turn(300, 150)], bargeIns: 1 }),
  call('today-2', '2026-11-23T05:20:00.000Z', {
    turns: [turn(200, 60), turn(400), turn(500), turn()],
    endReason: 'transferred',
  }),
  call('today-3', '2026-11-23T03:59:59.999Z', { turns: [turn(1000), turn(2000)], bargeIns: 2 }),
  // One millisecond before the 48 hours: in the days, not in the hours.
  call('before-48h', '2026-11-21T05:59:59.999Z', { endReason: 'error' }),
  call('first-hour', '2026-11-21T06:00:00.000Z', { endReason: 'silence' }),
  // Twenty turns of 10 … 200 ms, inside the last 24 hours.
  call('yesterday-1', '2026-11-22T10:00:00.000Z', {
    turns: Array.from({ length: 20 }, (_, i) => turn((i + 1) * 10)),
    endReason: 'agent_hung_up',
  }),
  // One millisecond before the last 24 hours.
  call('yesterday-2', '2026-11-22T05:29:59.999Z', { turns: [turn(5000)] }),
  call('first-day', '2026-10-25T00:00:00.000Z', { turns: [turn(700, 300)], bargeIns: 1, endReason: 'agent_hung_up' }),
  // One millisecond before the 30 days: nowhere.
  call('before-30d', '2026-10-24T23:59:59.999Z', { turns: [turn(9999, 9999)], bargeIns: 5, endReason: 'voicemail' }),
];

async function openCallStore(kind: StoreKind): Promise<Store> {
  const store = await freshStore(kind);
  cleanups.push(() => store.close());
  return store;
}

async function save(store: Store, calls: readonly CallSummary[]): Promise<void> {
  await writeEndedCalls(store.db, calls.map((call) => ({ call })));
}

async function chartData(calls: readonly CallSummary[] = CALLS, kind: StoreKind = 'sqlite'): Promise<ChartData> {
  const store = await openCallStore(kind);
  await save(store, calls);
  return new CallStats(store).charts(NOW);
}

function day(data: ChartData, label: string): DayStats {
  const found = data.days.find((d) => d.label === label);
  if (found === undefined) throw new Error(`no day ${label}`);
  return found;
}

describe.each(await storeKinds())('CallStats.charts on %s', (kind) => {
  const chartsOf = (calls?: readonly CallSummary[]) => chartData(calls, kind);

  test('calls per hour: 48 hours up to the current one, every hour present, the edges exact', async () => {
    const data = await chartsOf();
    expect(data.at).toBe('2026-11-23T05:30:00.000Z');
    expect(data.hours).toHaveLength(48);
    expect(data.hours[0]).toEqual({ label: '2026-11-21 06:00', calls: 1 });
    expect(data.hours.at(-1)).toEqual({ label: '2026-11-23 05:00', calls: 2 });
    const nonZero = data.hours.filter((h) => h.calls > 0);
    expect(nonZero).toEqual([
      { label: '2026-11-21 06:00', calls: 1 },
      { label: '2026-11-22 05:00', calls: 1 },
      { label: '2026-11-22 10:00', calls: 1 },
      { label: '2026-11-23 03:00', calls: 1 },
      { label: '2026-11-23 05:00', calls: 2 },
    ]);
    expect(data.hours.find((h) => h.label === '2026-11-23 04:00')).toEqual({ label: '2026-11-23 04:00', calls: 0 });
    // Consecutive hours, none missing, none twice.
    const starts = data.hours.map((h) => Date.parse(`${h.label.replace(' ', 'T')}:00Z`));
    expect(starts.slice(1).map((t, i) => t - starts[i]!)).toEqual(Array(47).fill(3_600_000));
  });

  test('calls per day: 30 days up to today, every day present', async () => {
    const data = await chartsOf();
    expect(data.days).toHaveLength(30);
    expect(data.days[0]!.label).toBe('2026-10-25');
    expect(data.days.at(-1)!.label).toBe('2026-11-23');
    expect(data.days.filter((d) => d.calls > 0).map((d) => [d.label, d.calls])).toEqual([
      ['2026-10-25', 1],
      ['2026-11-21', 2],
      ['2026-11-22', 2],
      ['2026-11-23', 3],
    ]);
    expect(day(data, '2026-11-20')).toEqual({
      label: '2026-11-20',
      calls: 0,
      firstSpeakMs: { p50: null, p95: null },
      llmFirstTokenMs: { p50: null, p95: null },
      turns: 0,
      bargeIns: 0,
      bargeInRate: null,
    });
  });

  test('outcomes over the 30 days, most first, a tie in the order of the end reasons', async () => {
    expect((await chartsOf()).outcomes).toEqual([
      { reason: 'caller_hung_up', calls: 3 },
      { reason: 'agent_hung_up', calls: 2 },
      { reason: 'transferred', calls: 1 },
      { reason: 'silence', calls: 1 },
      { reason: 'error', calls: 1 },
    ]);
  });

  test('p50 and p95 per day by nearest rank over every turn of the day, turns without a value left out', async () => {
    const data = await chartsOf();
    // First speak on the 23rd: 100 200 300 400 500 1000 2000 → ranks ceil(3.5) = 4 and ceil(6.65) = 7.
    // LLM first token: 50 60 150 → ranks 2 and 3.
    expect(day(data, '2026-11-23')).toMatchObject({ firstSpeakMs: { p50: 400, p95: 2000 }, llmFirstTokenMs: { p50: 60, p95: 150 } });
    // 10 … 200 and 5000 (21 values) → ranks ceil(10.5) = 11 and ceil(19.95) = 20; no LLM value that day.
    expect(day(data, '2026-11-22')).toMatchObject({ firstSpeakMs: { p50: 110, p95: 200 }, llmFirstTokenMs: { p50: null, p95: null } });
    expect(day(data, '2026-10-25')).toMatchObject({ firstSpeakMs: { p50: 700, p95: 700 }, llmFirstTokenMs: { p50: 300, p95: 300 } });
    // Calls without turns: no values, no rate.
    expect(day(data, '2026-11-21')).toMatchObject({ calls: 2, turns: 0, firstSpeakMs: { p50: null, p95: null }, bargeInRate: null });
  });

  test('nearest rank at the sizes where it rounds: one value, two, twenty', async () => {
    const ranks = async (values: number[]) => {
      const data = await chartsOf([call('one', '2026-11-23T01:00:00.000Z', { turns: values.map((v) => turn(v)) })]);
      return day(data, '2026-11-23').firstSpeakMs;
    };
    expect(await ranks([42])).toEqual({ p50: 42, p95: 42 });
    expect(await ranks([20, 10])).toEqual({ p50: 10, p95: 20 });
    // n = 20: p95 is rank 19, not the maximum.
    expect(await ranks(Array.from({ length: 20 }, (_, i) => 20 - i))).toEqual({ p50: 10, p95: 19 });
  });

  test('barge-in rate per day: barge-ins over all turns, failed turns counted', async () => {
    const data = await chartsOf();
    expect(day(data, '2026-11-23')).toMatchObject({ turns: 8, bargeIns: 3, bargeInRate: 3 / 8 });
    expect(day(data, '2026-11-22')).toMatchObject({ turns: 21, bargeIns: 0, bargeInRate: 0 });
    expect(day(data, '2026-10-25')).toMatchObject({ turns: 1, bargeIns: 1, bargeInRate: 1 });
  });

  test('the last 24 hours: calls, p95 first speak and barge-in rate, up to and including now', async () => {
    const data = await chartsOf([...CALLS, call('at-now', NOW.toISOString(), { turns: [turn(50)] }), call('after-now', '2026-11-23T05:30:00.001Z')]);
    // today-1, today-2, today-3, yesterday-1 and at-now; yesterday-2 ended a millisecond too early.
    // First speak: 10 … 200, 50, 100 … 500, 1000, 2000 (28 values) → rank ceil(26.6) = 27: 1000.
    expect(data.last24h).toEqual({ calls: 5, firstSpeakP95Ms: 1000, bargeInRate: 3 / 29 });
  });

  test('an empty database: every bucket zero, nothing measured', async () => {
    const data = await chartsOf([]);
    expect(data.hours.every((h) => h.calls === 0)).toBe(true);
    expect(data.days.every((d) => d.calls === 0 && d.bargeInRate === null && d.firstSpeakMs.p95 === null)).toBe(true);
    expect(data.outcomes).toEqual([]);
    expect(data.last24h).toEqual({ calls: 0, firstSpeakP95Ms: null, bargeInRate: null });
  });

  test('a day that has ended is counted once; today is counted at every call, and so is yesterday once today is over', async () => {
    const store = await openCallStore(kind);
    await save(store, CALLS);
    const stats = new CallStats(store);
    expect(day(await stats.charts(NOW), '2026-11-22').calls).toBe(2);

    await save(store, [call('late', '2026-11-22T12:00:00.000Z'), call('today-4', '2026-11-23T05:25:00.000Z', { turns: [turn(100)], endReason: 'idle' })]);
    const again = await stats.charts(NOW);
    expect(day(again, '2026-11-22').calls).toBe(2);
    expect(day(again, '2026-11-23')).toMatchObject({ calls: 4, turns: 9, bargeInRate: 3 / 9 });
    expect(again.outcomes).toContainEqual({ reason: 'idle', calls: 1 });
    // The hours and the last 24 hours are always counted afresh.
    expect(again.hours.find((h) => h.label === '2026-11-22 12:00')!.calls).toBe(1);
    expect(again.last24h.calls).toBe(6);

    const tomorrow = await stats.charts(new Date('2026-11-24T00:30:00.000Z'));
    expect(tomorrow.days[0]!.label).toBe('2026-10-26');
    expect(tomorrow.days.at(-1)).toMatchObject({ label: '2026-11-24', calls: 0 });
    expect(day(tomorrow, '2026-11-23')).toMatchObject({ calls: 4, firstSpeakMs: { p50: 300, p95: 2000 } });
    // The 25th of October left the window, and its call the outcomes with it.
    expect(tomorrow.outcomes).toContainEqual({ reason: 'agent_hung_up', calls: 1 });
  });

  test('7 and 90 days as well as 30: the same days counted alike, and a day counted for one range serves the others', async () => {
    const store = await openCallStore(kind);
    await save(store, CALLS);
    const stats = new CallStats(store);
    const month = await stats.charts(NOW);
    expect(month.dayCount).toBe(30);
    const week = await stats.charts(NOW, 7);
    expect(week.dayCount).toBe(7);
    expect(week.days.map((d) => d.label)).toEqual(month.days.slice(-7).map((d) => d.label));
    expect(week.days).toEqual(month.days.slice(-7));
    expect(week.outcomes.reduce((n, o) => n + o.calls, 0)).toBe(7);
    const quarter = await stats.charts(NOW, 90);
    expect(quarter.days).toHaveLength(90);
    expect(quarter.days.slice(-30)).toEqual(month.days);
    // The call a millisecond before the 30 days is in the 90.
    expect(day(quarter, '2026-10-24')).toMatchObject({ calls: 1, bargeIns: 5 });
    expect(quarter.outcomes).toContainEqual({ reason: 'voicemail', calls: 1 });
    // A day already counted is not counted again: a call stored late into an ended day changes nothing.
    await save(store, [call('late', '2026-10-24T12:00:00.000Z')]);
    expect(day(await stats.charts(NOW, 90), '2026-10-24').calls).toBe(1);
    expect(await stats.charts(NOW)).toEqual(month);
  });

  test('a call in progress (no end yet) is in no figure', async () => {
    const store = await openCallStore(kind);
    await save(store, CALLS);
    const before = await new CallStats(store).charts(NOW);
    await store.db
      .insertInto('calls')
      .values({
        call_id: 'in-progress', session_id: 'in-progress', direction: 'inbound', from_number: null, to_number: null,
        started_at: '2026-11-23T05:00:00.000Z', ended_at: null, duration_ms: null, end_reason: null, service_reason: null,
        turns: JSON.stringify([turn(1)]), barge_ins: 3, tool_runs: '[]', variables: null, tags: null, transcript_file: '/nonexistent',
      })
      .execute();
    expect(await new CallStats(store).charts(NOW)).toEqual(before);
  });

  test('the queries read the calls of their window through the ended_at index, not the whole table', async () => {
    const store = await openCallStore(kind);
    const queries = windowQueries(kind, { since: '2026-01-01', until: '2026-02-01' });
    expect(queries).toHaveLength(6);
    // PostgreSQL plans an empty table's scan as cheaper than any index: with scans made dear, a
    // query that can use the index does, one that cannot still scans.
    await store.db.connection().execute(async (db) => {
      if (kind === 'postgres') await db.executeQuery(CompiledQuery.raw('SET enable_seqscan = off'));
      for (const query of queries) {
        const { sql, parameters } = query.compile(db);
        const explain = kind === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN';
        const { rows } = await db.executeQuery(CompiledQuery.raw(`${explain} ${sql}`, [...parameters]));
        const plan = rows.map((row) => Object.values(z.record(z.string(), z.unknown()).parse(row)).join(' ')).join('\n');
        if (kind === 'sqlite') {
          expect(plan).toMatch(/SEARCH (c|calls) USING (COVERING )?INDEX calls_by_end \(ended_at>\? AND ended_at<\?\)/);
          expect(plan).not.toMatch(/SCAN (c|calls)\b/);
        } else {
          expect(plan).toMatch(/Index (Only )?Scan using calls_by_end on calls|Bitmap Index Scan on calls_by_end/);
          expect(plan).not.toMatch(/Seq Scan on calls/);
        }
      }
    });
  });
});

/** The JSON the page inlines, read back the way the browser reads it. */
function inlineJson(page: string): unknown {
  const match = /<script type="application\/json" id="chart-data">([\s\S]*?)<\/script>/.exec(page);
  if (!match) throw new Error('no #chart-data');
  return JSON.parse(match[1]!);
}

describe('chartsPage', () => {
  test('one figure and canvas per chart, each with a text fallback; the data inlined; the scripts named', async () => {
    const data = await chartData();
    const page = chartsPage(data, { numbersShown: false }).text;
    for (const id of ['chart-hours', 'chart-days', 'chart-outcomes', 'chart-latency', 'chart-barge-ins']) {
      expect(page).toMatch(new RegExp(`<figure>\\s*<figcaption>[^<]+</figcaption>[\\s\\S]*?<div class="chart"><canvas id="${id}"><p>[^<]+</p>\\s*<table>[\\s\\S]*?</table></canvas></div>\\s*</figure>`));
    }
    expect(page.match(/<figure>/g)).toHaveLength(5);
    expect(page).toContain('<a href="charts" aria-current="page">');
    expect(page).toContain('<script src="assets/chart.umd.min.js" defer></script><script src="assets/charts.js" defer></script>');
    expect(inlineJson(page)).toEqual(chartsView(data));
    expect(chartsView(data).days.bargeInPercent.at(-1)).toBe(37.5);
    expect(page).toContain('<dd id="calls-24h">4</dd>');
    expect(page).toContain('<dd id="first-speak-24h">1,000 ms</dd>');
    expect(page).toContain('<dd id="barge-in-24h">10.7 %</dd>');
    expect(page).toContain('<th scope="row">2026-11-23</th><td>400 ms</td><td>2,000 ms</td><td>60 ms</td><td>150 ms</td>');
    expect(page).toContain('<th scope="row">2026-11-21</th><td>—</td><td>0</td><td>0</td>');
  });

  test('text from the database is escaped in the page, and cannot end the inline JSON early', async () => {
    const hostile = '</script><script>alert(1)</script><!--';
    const data: ChartData = { ...(await chartData([])), outcomes: [{ reason: hostile, calls: 1 }] };
    const page = chartsPage(data, { numbersShown: false }).text;
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--');
    // Two script elements by src and the one JSON element: every </script> closes one of them.
    expect(page.match(/<\/script>/gi)).toHaveLength(3);
    expect(page).not.toContain('<!--');
    const view = inlineJson(page) as ReturnType<typeof chartsView>;
    expect(view.outcomes.labels).toEqual([hostile.replaceAll('_', ' ')]);
  });

  test('end reasons read as words', async () => {
    const page = chartsPage(await chartData(), { numbersShown: false }).text;
    expect(page).toContain('<th scope="row">Passed to a person</th><td>1</td>');
    expect(chartsView(await chartData()).outcomes.labels).toEqual(['Caller hung up', 'Agent ended the call', 'Passed to a person', 'Caller stayed silent', 'Gave up after errors']);
  });
});

interface FakeCanvas {
  id: string;
  childNodes: string[];
  replacedBy: string[] | undefined;
  replaceWith(...nodes: string[]): void;
}

/** Runs the charts script against a page of five canvases and, if given, a stand-in for Chart.js. */
function runScript(view: unknown, chart: ((canvas: FakeCanvas, config: unknown) => void) | undefined) {
  const canvases = new Map<string, FakeCanvas>();
  for (const id of ['chart-hours', 'chart-days', 'chart-outcomes', 'chart-latency', 'chart-barge-ins']) {
    canvases.set(id, {
      id,
      childNodes: [`fallback of ${id}`],
      replacedBy: undefined,
      replaceWith(...nodes) {
        this.replacedBy = nodes;
      },
    });
  }
  const errors: unknown[] = [];
  const window: Record<string, unknown> = {};
  const globals: Record<string, unknown> = {
    window,
    console: { error: (...args: unknown[]) => errors.push(args) },
    document: {
      getElementById: (id: string) => (id === 'chart-data' ? { textContent: JSON.stringify(view) } : (canvases.get(id) ?? null)),
    },
  };
  if (chart) {
    globals.Chart = function Chart(canvas: FakeCanvas, config: unknown) {
      chart(canvas, config);
    };
  }
  runInNewContext(CHARTS_SCRIPT, globals);
  return { canvases, window, errors };
}

describe('CHARTS_SCRIPT', () => {
  test('draws the five charts with animation off, then says so', async () => {
    const view = chartsView(await chartData());
    const drawn: { id: string; config: { type: string; options: { animation: unknown }; data: { labels: string[]; datasets: { data: unknown[] }[] } } }[] = [];
    const { window, errors } = runScript(view, (canvas, config) => drawn.push({ id: canvas.id, config: config as (typeof drawn)[number]['config'] }));
    expect(errors).toEqual([]);
    expect(drawn.map((d) => [d.id, d.config.type])).toEqual([
      ['chart-hours', 'bar'],
      ['chart-days', 'bar'],
      ['chart-outcomes', 'doughnut'],
      ['chart-latency', 'line'],
      ['chart-barge-ins', 'line'],
    ]);
    for (const d of drawn) expect(d.config.options.animation).toBe(false);
    expect(drawn[0]!.config.data.labels).toHaveLength(48);
    expect(drawn[3]!.config.data.datasets.map((s) => s.data)).toEqual([
      view.days.firstSpeakP50,
      view.days.firstSpeakP95,
      view.days.llmFirstTokenP50,
      view.days.llmFirstTokenP95,
    ]);
    expect(window.hotlineChartsDrawn).toBe(true);
  });

  test('without Chart.js every canvas gives way to its fallback', async () => {
    const { canvases, window } = runScript(chartsView(await chartData([])), undefined);
    for (const canvas of canvases.values()) expect(canvas.replacedBy).toEqual([`fallback of ${canvas.id}`]);
    expect(window.hotlineChartsDrawn).toBe(false);
  });

  test('a chart that fails leaves the others drawn and shows its fallback', async () => {
    const { canvases, window, errors } = runScript(chartsView(await chartData([])), (canvas) => {
      if (canvas.id === 'chart-outcomes') throw new Error('broken');
    });
    expect(canvases.get('chart-outcomes')!.replacedBy).toEqual(['fallback of chart-outcomes']);
    expect(canvases.get('chart-days')!.replacedBy).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(window.hotlineChartsDrawn).toBe(false);
  });
});

/** A copy of the shipped prompts: every file there, so a folder without problems. */
async function promptsFolder(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'hotline-prompts-status-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const dir = path.join(root, 'prompts');
  await cp(path.resolve('prompts'), dir, { recursive: true });
  await writeFile(path.join(dir, 'greeting.md'), 'Hello from the first version!\n');
  return dir;
}

async function openStore(dir: string): Promise<PromptStore> {
  const store = await PromptStore.open(dir, logger);
  cleanups.push(() => store.close());
  return store;
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('PromptStore.status', () => {
  test('after open: the folder, a short version, when it was loaded, the start as the first check, the files on disk', async () => {
    const dir = await promptsFolder();
    const before = new Date().toISOString();
    const store = await openStore(dir);
    const status = store.status;
    expect(status).toEqual({
      dir,
      version: expect.stringMatching(/^[0-9a-f]{8}$/),
      loadedAt: expect.stringMatching(ISO),
      lastCheck: { at: expect.stringMatching(ISO), ok: true, problems: [] },
      files: expect.any(Array),
    });
    expect(status.loadedAt >= before).toBe(true);
    expect(status.files).toEqual(expect.arrayContaining(['system.md', 'greeting.md', 'error.md', 'thinking.md']));
    expect(status.files.every((file) => file.endsWith('.md'))).toBe(true);
  });

  test('a broken reload keeps the version and says why; a good one takes the new version', async () => {
    const dir = await promptsFolder();
    const store = await openStore(dir);
    const first = store.status;

    await writeFile(path.join(dir, 'greeting.md'), 'Hello {{oops\n');
    expect(await store.reload()).toMatchObject({ ok: false });
    const broken = store.status;
    expect(broken.version).toBe(first.version);
    expect(broken.loadedAt).toBe(first.loadedAt);
    expect(broken.files).toEqual(first.files);
    expect(broken.lastCheck).toEqual({
      at: expect.stringMatching(ISO),
      ok: false,
      problems: [{ file: 'greeting.md', severity: 'error', message: expect.stringMatching(/^line 1, column 7: unclosed "\{\{"/) }],
    });
    expect(store.current.render('greeting', {})).toBe('Hello from the first version!');

    // Fixed, and a file that falls back to its built-in wording: taken into use, with a warning.
    await writeFile(path.join(dir, 'greeting.md'), 'Hello from the second version!\n');
    await rm(path.join(dir, 'thinking.md'));
    const missing = { file: 'thinking.md', severity: 'warning', message: 'is missing; the built-in default is used' };
    expect(await store.reload()).toEqual({ ok: true, problems: [missing] });
    const fixed = store.status;
    expect(fixed.version).not.toBe(first.version);
    expect(fixed.version).toMatch(/^[0-9a-f]{8}$/);
    expect(fixed.loadedAt >= first.loadedAt).toBe(true);
    expect(fixed.lastCheck).toEqual({ at: expect.stringMatching(ISO), ok: true, problems: [missing] });
    expect(fixed.files).toEqual(first.files.filter((file) => file !== 'thinking.md'));
    expect(store.current.render('greeting', {})).toBe('Hello from the second version!');

    // A reload that finds nothing new is still a check, and keeps the version and its time.
    expect(await store.reload()).toEqual({ ok: true, problems: [missing] });
    expect(store.status).toMatchObject({ version: fixed.version, loadedAt: fixed.loadedAt, lastCheck: { ok: true } });
  });

  test('the status is a copy: changing it changes nothing in the store', async () => {
    const store = await openStore(await promptsFolder());
    expect(store.status.files).not.toBe(store.status.files);
    expect(store.status.files).toEqual(store.status.files);
  });
});

describe('promptsPage', () => {
  const status: PromptsStatus = {
    dir: '/srv/hotline/prompts',
    version: '0123abcd',
    loadedAt: '2026-11-23T05:00:00.000Z',
    lastCheck: {
      at: '2026-11-23T05:10:00.000Z',
      ok: false,
      problems: [{ file: 'greeting.md', severity: 'error', message: 'line 1, column 7: <script>alert(1)</script> & "quotes"' }],
    },
    files: ['system.md', 'greeting.md'],
  };

  test('the folder, the version, when it was loaded, the last check kept the last good version, its problems, the files', async () => {
    const page = promptsPage(status, { numbersShown: false }).text;
    expect(page).toContain('<a href="prompts" aria-current="page">');
    expect(page).toContain('<code>/srv/hotline/prompts</code>');
    expect(page).toContain('<code id="prompts-version">0123abcd</code>');
    expect(page).toContain('2026-11-23 05:00:00 UTC');
    expect(page).toMatch(/kept the last good version.*checked 2026-11-23 05:10:00 UTC/);
    expect(page).toMatch(/<td data-label="File"><code>greeting\.md<\/code><\/td>\s*<td data-label="Severity"><span class="warning">error/);
    expect(page).toContain('<ul id="prompt-files"><li><code>system.md</code></li><li><code>greeting.md</code></li></ul>');
    expect(page).not.toContain('<script');
  });

  test('a problem message is escaped', async () => {
    const page = promptsPage(status, { numbersShown: false }).text;
    expect(page).toContain('line 1, column 7: &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;');
  });

  test('before any reload, and after a good one with warnings', async () => {
    expect(promptsPage({ ...status, lastCheck: undefined }, { numbersShown: false }).text).toContain('Not checked again since Hotline started.');
    const warned = promptsPage(
      { ...status, lastCheck: { at: status.loadedAt, ok: true, problems: [{ file: 'readme.txt', severity: 'warning', message: 'is not read by Hotline' }] } },
      { numbersShown: false },
    ).text;
    expect(warned).toContain('Read and in use, with 1 thing worth a look below.');
    expect(warned).toContain('<h2>Worth a look</h2>');
    expect(warned).not.toContain('kept the last good version');
  });
});
