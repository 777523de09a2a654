/**
 * How the dashboard's tables lay out, in a real headless Chromium against a real Hotline holding 21
 * calls that differ the way real ones do (helpers/varied-calls.ts), on a 1366×900 desktop and a
 * 390×844 phone:
 *
 * - no table cell breaks a word in the middle ("Directio/n", "outboun/d", a number over two lines);
 * - nothing makes the page scroll sideways: a table too wide scrolls inside its own box;
 * - on the desktop the calls table takes the width there is, one line per call;
 * - on the phone the filter is folded under its summary, and the first screen shows calls;
 * - a call on the built-in demo model reads as a demo call, not as a cost nobody knows.
 *
 * Pages are written to test-results/screenshots (layout-*.png) for review. Needs Chromium from the
 * system (Debian's `chromium`); skipped, and says so, without it.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ScriptedReply } from '../src/llm/scripted-server.js';
import { BROWSER_STORE_KINDS, chromiumPath, launchChromium, screenshotPath, startHotlineOn } from './helpers/browser.js';
import type { TestHotline } from './helpers/hotline.js';
import { seedVariedCalls, variedCalls, type CostKind } from './helpers/varied-calls.js';

const ADMIN = 'dashboard-admin-token-for-the-layout';
const CALLS = 21;
const COSTS: readonly CostKind[] = ['known', 'unknown', 'demo'];
const costOf = (index: number): CostKind => COSTS[index % COSTS.length]!;
const SEEDED = variedCalls(CALLS, new Date(), costOf);
const count = (kind: CostKind) => SEEDED.filter((_, i) => costOf(i) === kind).length;

const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
/** The pages looked at: the calls, an inbound call's story (with its conversation), an outbound one's (a long name among its variables), the campaigns. */
const PAGES = ['calls', 'calls/varied-0', 'calls/varied-1', 'campaigns'] as const;

const browserPath = chromiumPath();
if (!browserPath) console.warn('SKIPPED dashboard layout browser tests: no Chromium found (install Debian\'s "chromium" package)');

interface Layout {
  /** Words of a table cell drawn on more than one line: the cell, and the word. */
  brokenWords: string[];
  scrollWidth: number;
  innerWidth: number;
  /** Elements reaching past the screen's right edge with no box of their own that scrolls or clips them. */
  sticking: string[];
}

/**
 * What the page draws wrongly, measured in the page. A string: the tests compile without the DOM's
 * types. A word is a run without white space in one text node, a hyphen ending it as the break a
 * reader expects there ("Hohenzollern-" "Sigmaringen"); a Range over it has one box per line it is
 * drawn on. Cells too small to see (a phone's table head, hidden for screen readers) are
 * left out: what is not seen cannot be misread.
 */
const MEASURE = `(() => {
  const unseen = (el) => {
    for (let at = el; at && at !== document.body; at = at.parentElement) {
      const box = at.getBoundingClientRect();
      if (box.width <= 1 || box.height <= 1) return true;
    }
    return false;
  };
  const brokenWords = [];
  for (const cell of document.querySelectorAll('main td, main th')) {
    if (unseen(cell)) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/[^\\s-]+-?|-/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.bottom / 4)));
        if (lines.size > 1) brokenWords.push((cell.dataset.label || cell.cellIndex) + ': ' + match[0]);
      }
    }
  }
  const contained = (el) => {
    for (let at = el.parentElement; at && at !== document.body; at = at.parentElement) {
      if (getComputedStyle(at).overflowX !== 'visible') return true;
    }
    return false;
  };
  const sticking = Array.from(document.querySelectorAll('body *'))
    .filter((el) => {
      const box = el.getBoundingClientRect();
      return box.width > 0 && box.right > window.innerWidth + 0.5 && !contained(el);
    })
    .map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' + (el.textContent || '').trim().slice(0, 30) + '"');
  return { brokenWords, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, sticking };
})()`;

/** The calls table's rows: their heights, and the line height of their cells. */
const ROWS = `(() => {
  const table = document.getElementById('history');
  const rows = Array.from(table.tBodies[0].rows);
  const cell = rows[0].cells[0];
  return {
    tableWidth: table.getBoundingClientRect().width,
    lineHeight: parseFloat(getComputedStyle(cell).lineHeight),
    rowHeights: rows.map((row) => row.getBoundingClientRect().height),
    firstRowBottom: rows[0].getBoundingClientRect().bottom,
    pageHeight: document.documentElement.scrollHeight,
  };
})()`;

describe.skipIf(!browserPath).each(BROWSER_STORE_KINDS)('the dashboard laid out on a desktop and on a phone, in headless Chromium, on %s', (kind) => {
  let browser: Browser;
  let env: TestHotline;

  beforeAll(async () => {
    browser = await launchChromium(browserPath!);
    env = await startHotlineOn(kind, (): ScriptedReply => ({ content: 'Hello.' }), { ADMIN_TOKEN: ADMIN });
    await seedVariedCalls(env.hotline.store.db, env.transcriptsDir, SEEDED);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  async function loggedIn(viewport: { width: number; height: number }): Promise<Page> {
    const page = await (await browser.newContext({ viewport })).newPage();
    await page.goto(`${env.hotline.url}/dashboard/login`);
    await page.fill('input[name=password]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/dashboard\/$/);
    return page;
  }

  /** Each page at this size: no word broken in a cell, nothing past the right edge; a screenshot of each. */
  async function everyPageFits(page: Page, size: string): Promise<void> {
    for (const path of PAGES) {
      await page.goto(`${env.hotline.url}/dashboard/${path}`);
      const name = path.replaceAll('/', '-');
      await page.screenshot({ path: screenshotPath(`layout-${size}-${name}`, kind), fullPage: true });
      const layout = (await page.evaluate(MEASURE)) as Layout;
      expect(layout.brokenWords, `${size} ${path}: words broken in a cell`).toEqual([]);
      expect(layout.sticking, `${size} ${path}: past the right edge`).toEqual([]);
      expect(layout.scrollWidth, `${size} ${path}: the page scrolls sideways`).toBeLessThanOrEqual(layout.innerWidth);
    }
  }

  test('on a 1366×900 desktop: the calls table is wider than 1,200 px, one line per call, no word broken, nothing past the edge', async () => {
    const page = await loggedIn(DESKTOP);
    await everyPageFits(page, 'desktop');

    await page.goto(`${env.hotline.url}/dashboard/calls`);
    const rows = (await page.evaluate(ROWS)) as { tableWidth: number; lineHeight: number; rowHeights: number[]; pageHeight: number };
    expect(rows.tableWidth).toBeGreaterThan(1_200);
    expect(rows.rowHeights).toHaveLength(CALLS);
    // One line and the cell's padding; a second line would add a whole line height.
    for (const height of rows.rowHeights) expect(height).toBeLessThan(rows.lineHeight * 2);
    expect(rows.pageHeight, '21 calls make a page of').toBeLessThan(1_500);
    // The filter is open on a desktop: its fields show without a click.
    expect(await page.isVisible('#filters input[name=since]')).toBe(true);
  }, 60_000);

  test('on a 390×844 phone: the filter is folded under a summary that counts what is active, the first screen shows calls', async () => {
    const page = await loggedIn(PHONE);
    await everyPageFits(page, 'phone');

    await page.goto(`${env.hotline.url}/dashboard/calls`);
    await page.screenshot({ path: screenshotPath('layout-phone-calls-first-screen', kind) });
    expect(await page.isVisible('#filters input[name=since]')).toBe(false);
    expect((await page.textContent('#filter-summary'))?.trim()).toBe('Filter');
    const rows = (await page.evaluate(ROWS)) as { firstRowBottom: number };
    expect(rows.firstRowBottom, 'the first call ends on the first screen').toBeLessThanOrEqual(PHONE.height);

    // Opened, it filters as before; the answer comes back folded, saying what is active.
    await page.click('#filter-summary');
    await page.selectOption('#filters select[name=direction]', 'outbound');
    await page.selectOption('#filters select[name=outcome]', 'transferred');
    await page.click('#filters button[type=submit]');
    await page.waitForSelector('#total');
    expect(await page.isVisible('#filters input[name=since]')).toBe(false);
    expect((await page.textContent('#filter-summary'))?.trim()).toBe('Filter (2 active)');
    const matching = SEEDED.filter(({ call }) => call.direction === 'outbound' && call.endReason === 'transferred');
    expect(matching.length).toBeGreaterThan(0);
    expect(await page.textContent('#total')).toBe(String(matching.length));
    await page.screenshot({ path: screenshotPath('layout-phone-calls-filtered', kind), fullPage: true });
  }, 60_000);

  test('a call on the demo model costs "demo", and demo calls are counted apart, not among the calls of unknown cost', async () => {
    const page = await loggedIn(DESKTOP);
    await page.goto(`${env.hotline.url}/dashboard/calls`);
    const cost = (id: string) => page.textContent(`#history tr:has(a[href="calls/${id}"]) td.cost`);
    expect((await cost('varied-0'))?.trim()).toMatch(/^\$\d/);
    expect((await cost('varied-1'))?.trim()).toBe('—');
    expect((await cost('varied-2'))?.trim()).toBe('demo');
    expect(await page.textContent('#cost-unknown')).toBe(`${count('unknown')} calls with no known cost (—) are not in the sum`);
    expect(await page.textContent('#cost-demo')).toBe(`${count('demo')} demo calls (no cost)`);
    // Said apart, and not in the warning's colour.
    const colours = (await page.evaluate(`[getComputedStyle(document.getElementById('cost-demo')).color, getComputedStyle(document.getElementById('cost-unknown')).color]`)) as [string, string];
    expect(colours[0]).not.toBe(colours[1]);
  });
});
