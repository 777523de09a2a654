/**
 * The dashboard in a real headless Chromium against a real Hotline: log in,
 * watch a call appear live and end, open its story (the waterfall, the
 * interrupted reply), filter the history, export it as CSV. Each page is
 * written to test-results/screenshots for review.
 *
 * Needs Chromium from the system (Debian's `chromium`; .ci/run installs it).
 * Where none can be installed the suite is skipped and says so.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { BROWSER_STORE_KINDS, chromiumPath, launchChromium, screenshotPath, startHotlineOn } from './helpers/browser.js';
import type { TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';

const ADMIN = 'dashboard-admin-token';
const STORY = 'Once upon a time there was a small phone agent. It listened to every caller. It never talked over anyone. And it always said goodbye.';
const FIELDS = { summary: 'The caller asked for a story, cut it short, and said goodbye.', callback_wanted: true, customer_number: '4711', sentiment: 'positive', resolved: true };

function script(request: ChatRequestBody): ScriptedReply {
  if ('response_format' in request && request.response_format) return { content: JSON.stringify(FIELDS) };
  switch (lastUserText(request)) {
    case 'Tell me a story':
      return { content: STORY, tokenDelayMs: 15 };
    case 'Enough':
      return { content: 'Alright, no more stories.' };
    case 'That is all, bye.':
      return { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
    default:
      return { content: 'I can tell you a story.' };
  }
}

const browserPath = chromiumPath();
if (!browserPath) {
  console.warn('SKIPPED dashboard browser tests: no Chromium found (install Debian\'s "chromium" package; .ci/run does so with apt-get)');
}

describe.skipIf(!browserPath).each(BROWSER_STORE_KINDS)('the dashboard in headless Chromium, on %s', (kind) => {
  let browser: Browser;
  let env: TestHotline | undefined;
  const services: FakeVoiceService[] = [];

  // A first start of Chromium on a cold, busy machine (CI) can take longer than a hook's default 10 s.
  beforeAll(async () => {
    browser = await launchChromium(browserPath!);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
    await env?.close();
    env = undefined;
  });

  async function call(from: string): Promise<FakeVoiceService> {
    const service = await FakeVoiceService.connect(env!.hotline.wsUrl, { playback: { kind: 'manual' } });
    services.push(service);
    service.start({ from_phone_number: from });
    await service.nextOfType('speak');
    return service;
  }

  async function logIn(page: Page): Promise<void> {
    await page.goto(`${env!.hotline.url}/dashboard`);
    await page.waitForURL(/\/dashboard\/login$/);
    await page.screenshot({ path: screenshotPath('login', kind) });
    await page.fill('input[name=password]', 'not the token');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('[role=alert]')).toContain('not the admin token');
    await page.fill('input[name=password]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/dashboard\/$/);
  }

  test('log in, watch a call live until it ends, open its story, filter the history, export CSV', async () => {
    // SHOP_API_URL: the shipped tools' variable, set so that the prompts page has no problem to show.
    env = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN, REPORT_FIELDS: 'true', SHOP_API_URL: 'http://127.0.0.1:9' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await logIn(page);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'hotline_dashboard');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(page.url()).not.toContain(ADMIN);
    await page.waitForSelector('body[data-live=ready]');

    // A call starts: its row appears, masked, greeting.
    const service = await call('4915112345678');
    const row = page.locator(`tr[data-session="${service.sessionId}"]`);
    await expect.poll(() => row.locator('td').nth(3).textContent()).toBe('greeting');
    expect(await row.locator('td').first().textContent()).toBe('4915•••••••78');
    service.finishSpeech();

    // The caller asks for a story and cuts it short.
    service.say('Tell me a story');
    await service.next((a) => a.type === 'speak' && a.text !== undefined && a.text.startsWith('Once upon a time'));
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('Tell me a story');
    // The latest sentence sent: the model writes on while the first plays, so on a busy machine it may be a later one.
    await expect.poll(async () => STORY.includes((await row.locator('td').nth(5).textContent()) || '-')).toBe(true);
    await page.screenshot({ path: screenshotPath('live', kind) });
    // The first sentence plays to its end; the caller cuts in during the second.
    service.finishSpeech();
    await service.next((a) => a.type === 'speak' && a.text === 'It listened to every caller.');
    service.say('Enough', { bargedIn: true });
    await service.next((a) => a.text === 'Alright, no more stories.');
    service.finishSpeech();
    service.say('That is all, bye.');
    await service.nextOfType('hangup');
    service.end('hangup');

    // The row says the call ended and links to its story.
    const storyLink = row.locator('a', { hasText: 'story' });
    await storyLink.waitFor();
    await env.hotline.registry.whenRecorded();
    await env.hotline.reports.whenIdle();
    await storyLink.click();
    await page.waitForURL(new RegExp(`/dashboard/calls/${service.sessionId}$`));

    // The story: the report, the interrupted reply set apart, and a waterfall row per turn.
    expect(await page.textContent('.report-summary')).toBe(FIELDS.summary);
    const cut = page.locator('li.agent.interrupted');
    expect(await cut.count()).toBe(1);
    expect(await cut.locator('.badge.barge').textContent()).toBe('interrupted');
    const heard = (await cut.locator('.heard').textContent()) ?? '';
    const unheard = (await cut.locator('.unheard').textContent()) ?? '';
    expect(heard.length).toBeGreaterThan(0);
    expect(unheard.length).toBeGreaterThan(0);
    // Generation stopped at the barge-in: the second sentence (and any the model wrote before it stopped) unheard.
    expect(unheard.trim()).toMatch(/^It listened to every caller\./);
    expect(STORY.startsWith(`${heard.trim()} ${unheard.trim()}`)).toBe(true);
    expect(heard.trim()).toMatch(/^Once upon a time there was a small phone agent\./);
    expect(STORY.startsWith(heard.trim())).toBe(true);
    const turns = page.locator('ol.waterfall > li');
    expect(await turns.count()).toBe(3);
    expect(await turns.nth(0).getAttribute('class')).toContain('interrupted');
    expect(await turns.nth(0).locator('.bar').count()).toBeGreaterThanOrEqual(3);
    expect(await turns.nth(0).locator('.label').textContent()).toContain('Tell me a story');
    await page.screenshot({ path: screenshotPath('story', kind), fullPage: true });

    // A second call that ends another way, so the history has something to filter out.
    const other = await call('4917699887766');
    other.end('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.whenRecorded();
    await env.hotline.reports.whenIdle();

    await page.click('nav >> text=Calls');
    await page.waitForURL(/\/dashboard\/calls$/);
    expect(await page.textContent('#total')).toBe('2');
    await page.selectOption('select[name=outcome]', 'agent_hung_up');
    await page.click('#filters button[type=submit]');
    await expect.poll(() => page.textContent('#total')).toBe('1');
    expect(await page.locator('#history tbody tr').count()).toBe(1);
    // Filters travel in the body, never in the URL.
    expect(page.url()).toMatch(/\/dashboard\/calls$/);
    await page.screenshot({ path: screenshotPath('history', kind), fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
    const csv = await readFile((await download.path())!, 'utf8');
    // RFC 4180 lines (CRLF); the call's own id and its LLM cost last, after the columns as they were.
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe('session_id,started_at,ended_at,direction,from,to,duration_s,end_reason,turns,barge_ins,campaign,summary,fields,call_id,cost_usd');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(service.sessionId);
    expect(lines[1]).toContain('agent_hung_up');
    expect(lines[1]).toContain('4915•••••••78');
    expect(csv).not.toContain('4915112345678');

    // The charts draw with Chart.js, served by Hotline itself (the page may load nothing from elsewhere).
    const failed: string[] = [];
    page.on('pageerror', (error) => failed.push(error.message));
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.click('nav >> text=Charts');
    await page.waitForSelector('body[data-charts]');
    expect(await page.evaluate('window.hotlineChartsDrawn')).toBe(true);
    expect(await page.locator('canvas').count()).toBe(5);
    await page.screenshot({ path: screenshotPath('charts', kind), fullPage: true });
    await page.click('nav >> text=Campaigns');
    await page.waitForURL(/\/dashboard\/campaigns$/);
    await page.screenshot({ path: screenshotPath('campaigns', kind), fullPage: true });
    await page.click('nav >> text=Prompts');
    await page.waitForURL(/\/dashboard\/prompts$/);
    expect(await page.locator('#prompt-files li').count()).toBeGreaterThan(0);
    expect(await page.locator('#prompts-check tbody tr').count()).toBeGreaterThan(5);
    expect(await page.textContent('#check-problems')).toBe('0');
    await page.screenshot({ path: screenshotPath('prompts', kind), fullPage: true });
    expect(failed).toEqual([]);
    await page.close();
  }, 60_000);

  test('a call in progress opens from its number: the conversation grows as it happens, a person ends it, and the page is its story', async () => {
    env = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const failed: string[] = [];
    page.on('pageerror', (error) => failed.push(error.message));
    await logIn(page);
    await page.waitForSelector('body[data-live=ready]');

    const service = await call('4915112345678');
    const row = page.locator(`tr[data-session="${service.sessionId}"]`);
    await row.locator('td').first().locator('a').click();
    await page.waitForURL(new RegExp(`/dashboard/calls/${service.sessionId}$`));
    await page.waitForSelector('body[data-call-live=ready]');
    expect(await page.textContent('h1')).toContain('4915•••••••78');
    expect(await page.textContent('h1')).toContain('in progress');

    // The greeting is written once it has played; the page shows it without a reload.
    service.finishSpeech();
    await expect.poll(() => page.locator('.conversation li.agent').count()).toBe(1);
    service.say('Tell me a story');
    await service.next((a) => a.type === 'speak' && a.text !== undefined && a.text.startsWith('Once upon a time'));
    await expect.poll(() => page.locator('.conversation li.caller').last().textContent()).toContain('Tell me a story');
    // The latest sentence sent: on a busy machine the model may have written on by the time the page looks.
    await expect.poll(async () => STORY.includes((await page.textContent('.agent-said')) || '-')).toBe(true);
    expect(await page.textContent('.phase')).toMatch(/thinking|speaking/);
    await page.screenshot({ path: screenshotPath('live-call', kind), fullPage: true });

    // The person watching ends the call, after saying yes to the question: the story stops, a goodbye, the hangup.
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await page.click('#hang-up-call');
    expect(asked).toEqual([expect.stringContaining('End this call now?')]);
    await service.nextOfType('barge_in');
    expect((await service.nextOfType('speak')).text).toContain('Goodbye');
    service.finishSpeech();
    await service.nextOfType('hangup');
    service.end('hangup');
    // The call's story takes the page's place: the waterfall, the cut story marked, who ended it.
    await page.waitForSelector('#waterfall', { timeout: 15_000 });
    expect(await page.locator('#live-call').count()).toBe(0);
    expect(await page.locator('li.agent.interrupted').count()).toBe(1);
    expect(await page.textContent('.reason')).toBe('operator hung up');
    expect(failed).toEqual([]);
    await page.close();
  }, 60_000);
});
