/**
 * The dashboard under load, for the bench: a store seeded with ended calls
 * and their reports, and a viewer that keeps the live stream open and asks
 * for the history page again and again while the calls of the other phases
 * run — so the first-speak figures show whether the dashboard slows a call.
 */
import { pino } from 'pino';
import type { CallEndReason, CallSummary } from '../src/call/ports/call-summary.js';
import { callRowOf } from '../src/store/call-repository.js';
import { reportRowOf, type StoredReport } from '../src/store/report-repository.js';
import type { Db } from '../src/store/schema.js';
import { openStore, type Store } from '../src/store/store.js';
import { now } from './clock.js';
import { seededRandom, summarize, type Summary } from './stats.js';

export const DASHBOARD_TOKEN = 'bench-dashboard-token';

/** The history pages a viewer asks for in turn: plain, by outcome, by a report field, far back, by number. */
const PAGES: readonly Record<string, string>[] = [{}, { outcome: 'agent_hung_up' }, { field: 'callback_wanted', value: 'true' }, { page: '20' }, { number: '151123' }];

const REASONS: readonly CallEndReason[] = ['caller_hung_up', 'caller_hung_up', 'caller_hung_up', 'agent_hung_up', 'agent_hung_up', 'transferred', 'silence', 'voicemail'];
const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

/** Rows written per INSERT: well under SQLite's 32,766 bound parameters and PostgreSQL's 65,535. */
const ROWS_PER_INSERT = 200;

/**
 * `count` calls over the last 30 days, with turns, tool runs and a report each, written in one
 * transaction to `where`: an open store (SQLite or PostgreSQL), or a SQLite file opened for it.
 */
export async function seedCalls(where: Store | string, count: number, seed = 1): Promise<void> {
  if (typeof where === 'string') {
    const store = await openStore({ databaseFile: where }, pino({ level: 'silent' }));
    try {
      return await seedCalls(store, count, seed);
    } finally {
      await store.close();
    }
  }
  const random = seededRandom(seed);
  const end = Date.now();
  const seeded: { call: CallSummary; report: StoredReport }[] = [];
  for (let i = 0; i < count; i++) {
    const endedAt = end - Math.floor(random() * 30 * 86_400_000);
    const durationMs = 20_000 + Math.floor(random() * 240_000);
    const turns = Array.from({ length: 2 + Math.floor(random() * 6) }, (_, t) => {
      const llmRequestMs = 0.2 + random();
      const llmFirstTokenMs = llmRequestMs + 250 + random() * 500;
      const firstSpeakMs = llmFirstTokenMs + 80 + random() * 200;
      return {
        at: new Date(endedAt - durationMs + t * 15_000).toISOString(),
        llmRequestMs,
        llmFirstTokenMs,
        firstSpeakMs,
        playbackStartedMs: firstSpeakMs + 60,
        playbackEndedMs: firstSpeakMs + 2_000 + random() * 4_000,
        interrupted: random() < 0.15,
        failed: false,
      };
    });
    const outbound = random() < 0.3;
    const number = `49151${String(10_000_000 + Math.floor(random() * 89_999_999))}`;
    const call: CallSummary = {
      callId: `seed-${i}`,
      sessionId: `seed-${i}`,
      direction: outbound ? 'outbound' : 'inbound',
      from: outbound ? '4930000000' : number,
      to: outbound ? number : '4930000000',
      startedAt: new Date(endedAt - durationMs).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs,
      endReason: REASONS[Math.floor(random() * REASONS.length)]!,
      serviceReason: undefined,
      turns,
      bargeIns: turns.filter((t) => t.interrupted).length,
      toolRuns: random() < 0.3 ? [{ name: 'order_status', arguments: '{"order_number":"4711"}', outcome: 'ok', durationMs: 120, reused: false }] : [],
      variables: outbound ? { name: `Person ${i}` } : undefined,
      tags: undefined,
      transcriptFile: `/nonexistent/seed-${i}.jsonl`,
    };
    const fields = { callback_wanted: random() < 0.2, sentiment: SENTIMENTS[Math.floor(random() * 3)]!, resolved: random() < 0.7 };
    const report: StoredReport = {
      callId: call.callId,
      sessionId: call.sessionId,
      createdAt: call.endedAt,
      summary: `The caller asked about order ${4000 + (i % 1000)} and was told it has shipped.`,
      fields,
      fieldsStatus: 'ok',
      fieldsError: null,
      body: '{}',
    };
    seeded.push({ call, report });
  }
  await where.db.transaction().execute((trx) => writeEndedCalls(trx, seeded));
}

/**
 * Ended calls and their reports written straight into the store's tables, many rows per statement:
 * for seeding a bench's or a test's store (the call core writes through CallRepository).
 */
export async function writeEndedCalls(db: Db, items: readonly { call: CallSummary; report?: StoredReport | undefined }[]): Promise<void> {
  for (let start = 0; start < items.length; start += ROWS_PER_INSERT) {
    const slice = items.slice(start, start + ROWS_PER_INSERT);
    await db.insertInto('calls').values(slice.map(({ call }) => callRowOf({ ...call, revision: 0 }))).execute();
    const reports = slice.flatMap(({ report }) => (report ? [reportRowOf(report)] : []));
    if (reports.length > 0) await db.insertInto('reports').values(reports).execute();
  }
}

export interface DashboardResult {
  /** Calls in the database the pages were drawn from. */
  storedCalls: number;
  /** From sending the history request to its last byte, per request. */
  historyMs: Summary;
  historyRequests: number;
  /** Messages the live stream delivered while the calls ran. */
  liveMessages: number;
  /** First contentful paint of the history page in headless Chromium, if one is installed. */
  firstPaintMs?: Summary;
}

/** Logs in, keeps the live stream open and asks for history pages (plain, filtered, paged) until stopped. */
export class DashboardViewer {
  private readonly times: number[] = [];
  private liveMessages = 0;
  private running = true;
  private readonly live = new AbortController();
  private loop: Promise<void> = Promise.resolve();

  private constructor(
    private readonly url: string,
    private readonly cookie: string,
    private readonly storedCalls: number,
  ) {}

  static async start(url: string, storedCalls: number, intervalMs = 250, busy = true): Promise<DashboardViewer> {
    const login = await fetch(`${url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: DASHBOARD_TOKEN }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    if (login.status !== 303 || !cookie) throw new Error(`dashboard login failed: HTTP ${login.status}`);
    const viewer = new DashboardViewer(url, cookie, storedCalls);
    if (busy) {
      await viewer.openLive();
      viewer.loop = viewer.askForPages(intervalMs);
    }
    return viewer;
  }

  /** Logs in and keeps the live stream open, asking for nothing else: what a wall screen of calls in progress costs. */
  static async watchLive(url: string): Promise<DashboardViewer> {
    const viewer = await DashboardViewer.start(url, 0, 0, false);
    await viewer.openLive();
    return viewer;
  }

  /** `requests` history pages one after another, nothing else running: the page's own time. */
  static async measureIdle(url: string, storedCalls: number, requests: number): Promise<DashboardResult> {
    const viewer = await DashboardViewer.start(url, storedCalls, 0, false);
    // The first page warms the store's connection and the files' thread: a one-off, not the page's time.
    await viewer.historyOnce();
    for (let i = 0; i < requests; i++) viewer.times.push(await viewer.historyOnce(PAGES[i % PAGES.length]));
    const firstPaintMs = await viewer.firstPaint(5);
    return { ...(await viewer.stop()), ...(firstPaintMs ? { firstPaintMs } : {}) };
  }

  /** The history page loaded `loads` times in headless Chromium: its first contentful paint, from navigation start. */
  private async firstPaint(loads: number): Promise<Summary | undefined> {
    // Loaded only here: playwright-core is a devDependency, and the bench a development tool.
    const { chromiumPath, launchChromium } = await import('../src/testing/chromium.js');
    const executable = chromiumPath();
    if (!executable) return undefined;
    const browser = await launchChromium(executable);
    try {
      const context = await browser.newContext();
      const [name, value] = this.cookie.split('=') as [string, string];
      await context.addCookies([{ name, value, url: this.url }]);
      const page = await context.newPage();
      const paints: number[] = [];
      for (let i = 0; i < loads; i++) {
        await page.goto(`${this.url}/dashboard/calls`, { waitUntil: 'load' });
        // A string: it runs in the page, whose DOM types this Node project does not compile against.
        const paint = await page.evaluate<number>(`new Promise((resolve) => {
          const seen = performance.getEntriesByName('first-contentful-paint')[0];
          if (seen) return resolve(seen.startTime);
          new PerformanceObserver((list) => resolve(list.getEntries()[0].startTime)).observe({ type: 'paint', buffered: true });
        })`);
        paints.push(paint);
      }
      return summarize(paints);
    } finally {
      await browser.close();
    }
  }

  /** One history page request as a browser sends it; its time to the last byte. */
  async historyOnce(form: Record<string, string> = {}): Promise<number> {
    const started = now();
    const res = await fetch(`${this.url}/dashboard/calls`, {
      method: 'POST',
      headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    await res.text();
    if (res.status !== 200) throw new Error(`history page: HTTP ${res.status}`);
    return now() - started;
  }

  async stop(): Promise<DashboardResult> {
    this.running = false;
    await this.loop;
    this.live.abort();
    return { storedCalls: this.storedCalls, historyMs: summarize(this.times), historyRequests: this.times.length, liveMessages: this.liveMessages };
  }

  private async openLive(): Promise<void> {
    const res = await fetch(`${this.url}/dashboard/live`, { headers: { cookie: this.cookie, accept: 'text/event-stream' }, signal: this.live.signal });
    if (!res.body) throw new Error('no live stream');
    const reader = res.body.getReader();
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          this.liveMessages += new TextDecoder().decode(value).split('\n\n').length - 1;
        }
      } catch {
        // Aborted at stop().
      }
    })();
  }

  private async askForPages(intervalMs: number): Promise<void> {
    for (let i = 0; this.running; i++) {
      this.times.push(await this.historyOnce(PAGES[i % PAGES.length]));
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
