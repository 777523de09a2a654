/**
 * What a person sees of the dashboard, in a real headless Chromium against a real Hotline:
 *
 * - on a 390 px phone every page fits: no sideways scroll, every tab and button on the screen;
 * - no page logs a console error (the icon is served, nothing 404s), none runs an inline script;
 * - "End the call" pressed on a call that has just ended lands on the call, not on "Not done";
 * - a story that says "No report yet" shows the report once it is written, by itself;
 * - the waterfall has a time axis; a chart's lone point at the right edge is drawn whole;
 * - the confirmation quotes what the caller will hear, not a file name.
 *
 * Pages are written to test-results/screenshots (phone-*.png) for review. Needs Chromium from the
 * system (Debian's `chromium`); skipped, and says so, without it.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { WEEKDAYS } from '../src/campaigns/definition.js';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { BROWSER_STORE_KINDS, chromiumPath, launchChromium, screenshotPath, startHotlineOn } from './helpers/browser.js';
import type { TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';

const ADMIN = 'dashboard-admin-token-for-the-phone';
const FIELDS = { summary: 'The caller asked about an order and said goodbye.', callback_wanted: false, customer_number: '4711', sentiment: 'positive', resolved: true };
const GOODBYE_LINE = "I'm sorry, I have to end this call now. Thank you for calling. Goodbye.";

/** Lets each test hold the report's request until it says so. */
let reportGate: Promise<void> = Promise.resolve();

async function script(request: ChatRequestBody): Promise<ScriptedReply> {
  if ('response_format' in request && request.response_format) {
    await reportGate;
    return { content: JSON.stringify(FIELDS) };
  }
  switch (lastUserText(request)) {
    case 'Tell me a story':
      return { content: 'Once upon a time there was a phone agent. It listened to every caller, and it never talked over anyone.', tokenDelayMs: 10 };
    case 'bye':
      return { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
    default:
      return { content: 'Sure, I can help with that.' };
  }
}

const browserPath = chromiumPath();
if (!browserPath) console.warn('SKIPPED dashboard usability browser tests: no Chromium found (install Debian\'s "chromium" package)');

describe.skipIf(!browserPath).each(BROWSER_STORE_KINDS)('the dashboard as a person sees it, in headless Chromium, on %s', (kind) => {
  let browser: Browser;
  let env: TestHotline | undefined;
  const services: FakeVoiceService[] = [];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium(browserPath!);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    reportGate = Promise.resolve();
    await Promise.all(contexts.splice(0).map((c) => c.close()));
    await Promise.all(services.splice(0).map((s) => s.close()));
    await env?.close();
    env = undefined;
  });

  async function start(vars: Record<string, string> = {}): Promise<TestHotline> {
    env = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN, REPORT_FIELDS: 'true', ...vars });
    return env;
  }

  /** A call that is greeted and then waits, its speech played by hand. */
  async function liveCall(from: string): Promise<FakeVoiceService> {
    const service = await FakeVoiceService.connect(env!.hotline.wsUrl, { playback: { kind: 'manual' } });
    services.push(service);
    service.start({ from_phone_number: from });
    await service.nextOfType('speak');
    service.finishSpeech();
    return service;
  }

  /** A call with an interrupted reply, ended by the caller's goodbye. */
  async function finishedCall(from: string): Promise<FakeVoiceService> {
    const service = await liveCall(from);
    service.say('Tell me a story');
    await service.next((a) => a.type === 'speak' && a.text?.startsWith('Once upon a time') === true);
    service.say('Enough', { bargedIn: true });
    await service.next((a) => a.text === 'Sure, I can help with that.');
    service.finishSpeech();
    service.say('bye');
    await service.nextOfType('hangup');
    service.end('hangup');
    await env!.hotline.registry.whenRecorded();
    return service;
  }

  /** A browser logged in to the dashboard, and every console error, failed request and 4xx/5xx it meets. */
  async function loggedIn(viewport: { width: number; height: number }): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()} (${page.url()})`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message} (${page.url()})`));
    // A live view's stream is cut when the page is left (net::ERR_ABORTED): that is no failure.
    page.on('requestfailed', (request) => {
      if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    await page.goto(`${env!.hotline.url}/dashboard/login`);
    await page.fill('input[name=password]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/dashboard\/$/);
    return { page, problems };
  }

  /** What does not fit a phone's screen: the page's own sideways scroll, and every control that is not on the screen. */
  function offScreen(page: Page): Promise<{ scrollWidth: number; innerWidth: number; outside: string[] }> {
    // A string: the tests compile without the DOM's types.
    return page.evaluate(`(() => {
      const outside = Array.from(document.querySelectorAll('a, button, select, input:not([type=hidden]), nav, table, canvas'))
        .filter((el) => {
          const box = el.getBoundingClientRect();
          return box.width > 0 && box.height > 0 && (box.left < -0.5 || box.right > window.innerWidth + 0.5);
        })
        .map((el) => el.tagName.toLowerCase() + ' "' + (el.textContent || '').trim().slice(0, 30) + '"');
      return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, outside };
    })()`);
  }

  /** Inline scripts that would run: none (CSP script-src 'self' refuses them); JSON data blocks are not scripts. */
  function inlineScripts(page: Page): Promise<number> {
    return page.locator('script:not([src]):not([type="application/json"])').count();
  }

  test('on a 390 px phone every page fits the screen, every tab and button on it; no page logs an error or runs an inline script', async () => {
    // Outbound settings, so that a campaign may be made; its calling hours are two days away, so nothing is dialled.
    await start({ AIFLOW_API_URL: 'http://127.0.0.1:9', AIFLOW_ACCESS_TOKEN: 'aiflow-token', AIFLOW_ID: 'flow', AIFLOW_BILLING_DEVICE: 'device' });
    const ended = await finishedCall('4915112345678');
    await env!.hotline.reports.whenIdle();
    const day = WEEKDAYS[(new Date().getUTCDay() + 2) % 7]!;
    const created = await fetch(`${env!.hotline.url}/api/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Spring check-in for every customer', calling_hours: { days: [day], from: '00:00', to: '24:00' }, contacts: [{ phone: '+49 151 1234567' }] }),
    });
    expect(created.status).toBe(201);
    const live = await liveCall('4917699887766');
    live.say('Tell me a story');
    await live.next((a) => a.type === 'speak' && a.text?.startsWith('Once upon a time') === true);

    const { page, problems } = await loggedIn({ width: 390, height: 844 });
    const pages: [string, string, string][] = [
      ['live', '', 'body[data-live=ready]'],
      ['calls', 'calls', '#history'],
      ['story', `calls/${ended.sessionId}`, '#waterfall'],
      ['live-call', `calls/${live.sessionId}`, 'body[data-call-live=ready]'],
      ['campaigns', 'campaigns', '#campaigns'],
      ['charts', 'charts', 'canvas'],
      ['prompts', 'prompts', '#prompts-check'],
    ];
    for (const [name, path, ready] of pages) {
      await page.goto(`${env!.hotline.url}/dashboard/${path}`);
      await page.waitForSelector(ready);
      if (name === 'charts') await page.waitForSelector('body[data-charts]');
      if (name === 'live') await expect.poll(() => page.locator('#live-calls tbody tr').count()).toBe(1);
      await page.screenshot({ path: screenshotPath(`phone-${name}`, kind), fullPage: true });
      const fit = await offScreen(page);
      expect(fit.scrollWidth, name).toBeLessThanOrEqual(fit.innerWidth);
      expect(fit.outside, name).toEqual([]);
      // Every tab of the navigation is on the screen, whichever page.
      for (const tab of await page.locator('header nav a').all()) {
        const box = (await tab.boundingBox())!;
        expect(box.x, name).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, name).toBeLessThanOrEqual(390);
      }
      expect(await inlineScripts(page), name).toBe(0);
    }
    // The login page, logged out.
    await page.click('header >> text=Log out');
    await page.waitForURL(/\/dashboard\/login$/);
    const login = await offScreen(page);
    expect(login.scrollWidth).toBeLessThanOrEqual(login.innerWidth);
    expect(login.outside).toEqual([]);
    expect(problems).toEqual([]);
  }, 90_000);

  test('the icon: every page names it and it is served (no /favicon.ico 404), at a desktop width too', async () => {
    await start();
    const { page, problems } = await loggedIn({ width: 1280, height: 860 });
    const icon = await page.locator('link[rel=icon]').getAttribute('href');
    expect(icon).toBe('assets/favicon.svg');
    const served = await page.request.get(new URL(icon!, page.url()).href);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toContain('image/svg+xml');
    expect((await page.request.get(`${env!.hotline.url}/favicon.ico`)).status()).toBe(200);
    for (const path of ['calls', 'charts', 'campaigns', 'prompts']) {
      await page.goto(`${env!.hotline.url}/dashboard/${path}`);
      await page.waitForLoadState('load');
    }
    expect(problems).toEqual([]);
  }, 60_000);

  test('"End the call" pressed on a call that has just ended lands on the call, saying so, then its story: never "Not done"', async () => {
    await start();
    const service = await liveCall('4915112345678');
    const { page } = await loggedIn({ width: 1280, height: 860 });
    // The page does not hear of the end before the button is pressed: its live stream is held back.
    await page.route('**/dashboard/live', (route) => route.abort());
    await page.goto(`${env!.hotline.url}/dashboard/calls/${service.sessionId}`);
    await page.waitForSelector('#hang-up-call');
    service.end('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#hang-up-call');
    await page.waitForURL(new RegExp(`/dashboard/calls/${service.sessionId}\\?was=ended$`));
    expect(await page.textContent('#notice')).toContain('had already ended');
    expect(await page.textContent('h1')).not.toContain('Not done');
    // Its story, once stored (the page fetches itself until it is).
    await page.waitForSelector('#conversation', { timeout: 15_000 });
    expect(await page.textContent('.reason')).toBe('caller hung up');
    await page.screenshot({ path: screenshotPath('ended-meanwhile', kind), fullPage: true });
  }, 60_000);

  test('a story that says "No report yet" shows the report once it is written, without a reload or an inline script', async () => {
    let release!: () => void;
    reportGate = new Promise((resolve) => (release = resolve));
    await start();
    const service = await finishedCall('4915112345678');
    const { page, problems } = await loggedIn({ width: 1280, height: 860 });
    await page.goto(`${env!.hotline.url}/dashboard/calls/${service.sessionId}`);
    expect(await page.textContent('#report')).toContain('No report yet');
    const marker = await page.evaluate('window.kept = Math.random()');

    release();
    await env!.hotline.reports.whenIdle();
    await page.waitForSelector('#report .report-summary', { timeout: 15_000 });
    expect(await page.textContent('#report .report-summary')).toBe(FIELDS.summary);
    expect(await page.textContent('#report')).not.toContain('No report yet');
    expect(await page.evaluate('document.body.dataset.awaited')).toBe('report');
    // The same page, updated in place: nothing reloaded it.
    expect(await page.evaluate('window.kept')).toBe(marker);
    expect(await inlineScripts(page)).toBe(0);
    expect(problems).toEqual([]);
  }, 60_000);

  test('the waterfall has a time axis: round steps from 0, under the bars, in ms or s', async () => {
    await start();
    const service = await finishedCall('4915112345678');
    await env!.hotline.reports.whenIdle();
    const { page } = await loggedIn({ width: 1280, height: 860 });
    await page.goto(`${env!.hotline.url}/dashboard/calls/${service.sessionId}`);
    const ticks = page.locator('.waterfall-axis .tick');
    expect(await ticks.count()).toBeGreaterThanOrEqual(3);
    const labels = await ticks.allTextContents();
    expect(labels[0]).toBe('0 ms');
    for (const label of labels) expect(label).toMatch(/^\d+(\.\d+)? (ms|s)$/);
    // The axis spans the bars' track exactly: its first tick under the track's start, its last under its end.
    const track = (await page.locator('ol.waterfall .track').first().boundingBox())!;
    const axis = (await page.locator('.waterfall-axis .ticks').boundingBox())!;
    expect(Math.abs(axis.x - track.x)).toBeLessThan(1);
    expect(Math.abs(axis.width - track.width)).toBeLessThan(1);
    const last = (await ticks.last().boundingBox())!;
    expect(last.x + last.width).toBeLessThanOrEqual(track.x + track.width + 1);
    await page.locator('#waterfall').screenshot({ path: screenshotPath('waterfall-axis', kind) });
  }, 60_000);

  test('a chart\'s single point at the right edge (today, the only day measured) is drawn whole, and larger than a point on a line', async () => {
    await start();
    await finishedCall('4915112345678');
    const { page } = await loggedIn({ width: 1280, height: 860 });
    await page.goto(`${env!.hotline.url}/dashboard/charts?days=7`);
    await page.waitForSelector('body[data-charts]');
    for (const id of ['chart-latency', 'chart-barge-ins']) {
      const drawn = await page.evaluate<{ x: number; radius: number; left: number; right: number }>(`(() => {
        const chart = Chart.getChart(${JSON.stringify(id)});
        const points = chart.getDatasetMeta(0).data;
        const today = points[points.length - 1];
        return { x: today.x, radius: today.options.radius, right: chart.chartArea.right, left: chart.chartArea.left };
      })()`);
      expect(drawn.x + drawn.radius, id).toBeLessThanOrEqual(drawn.right);
      expect(drawn.x - drawn.radius, id).toBeGreaterThanOrEqual(drawn.left);
      expect(drawn.radius, id).toBeGreaterThanOrEqual(4);
    }
    await page.locator('#chart-latency').screenshot({ path: screenshotPath('chart-single-point', kind) });
  }, 60_000);

  test('the confirmation quotes what the caller will hear before the hangup or the handover, not a file name', async () => {
    await start();
    const service = await liveCall('4915112345678');
    const { page } = await loggedIn({ width: 1280, height: 860 });
    await page.goto(`${env!.hotline.url}/dashboard/calls/${service.sessionId}`);
    await page.waitForSelector('body[data-call-live=ready]');
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.click('#transfer-call');
    await page.click('#hang-up-call');
    expect(asked).toHaveLength(2);
    expect(asked[0]).toContain('Hand this call over now?');
    expect(asked[0]).toContain('“One moment please, I\'ll connect you with a colleague now.”');
    expect(asked[1]).toContain('End this call now?');
    expect(asked[1]).toContain(`“${GOODBYE_LINE}”`);
    for (const message of asked) expect(message).not.toMatch(/\.md\b/);
    // Dismissed: nothing was done.
    expect(service.actions.filter((a) => a.type !== 'speak')).toEqual([]);
    expect(env!.hotline.registry.get(service.sessionId)).toBeDefined();
  }, 60_000);
});
