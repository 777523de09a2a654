/**
 * The dashboard's admin edge in a real headless Chromium against a real Hotline:
 *
 * - a page served from another port of 127.0.0.1 (the "same site" as the dashboard, so the
 *   browser sends its SameSite=Strict cookie along) posts forms and fetches to the dashboard
 *   while someone is logged in there: every one is refused with 403 and changes nothing — the
 *   call still runs, the session still holds — while the dashboard's own buttons still work;
 * - logging out ends the session on the server: a copy of the cookie taken before is refused.
 *
 * Needs Chromium from the system (Debian's `chromium`); skipped, and says so, without it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page, Response as PageResponse } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { BROWSER_STORE_KINDS, chromiumPath, launchChromium, startHotlineOn } from './helpers/browser.js';
import type { TestHotline } from './helpers/hotline.js';

const ADMIN = 'dashboard-admin-token-for-the-browser';

function script(_request: ChatRequestBody): ScriptedReply {
  return { content: 'I am listening.' };
}

const browserPath = chromiumPath();
if (!browserPath) console.warn('SKIPPED dashboard admin browser tests: no Chromium found (install Debian\'s "chromium" package)');

describe.skipIf(!browserPath).each(BROWSER_STORE_KINDS)('the admin edge in headless Chromium, on %s', (kind) => {
  let browser: Browser;
  let env: TestHotline | undefined;
  let attacker: Server | undefined;
  const services: FakeVoiceService[] = [];

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
    await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve(undefined)));
    attacker = undefined;
  });

  async function liveCall(): Promise<FakeVoiceService> {
    const service = await FakeVoiceService.connect(env!.hotline.wsUrl, { playback: { kind: 'manual' } });
    services.push(service);
    service.start({ from_phone_number: '4915112345678' });
    await service.nextOfType('speak');
    return service;
  }

  async function logIn(page: Page): Promise<void> {
    await page.goto(`${env!.hotline.url}/dashboard/login`);
    await page.fill('input[name=password]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/dashboard\/$/);
  }

  /** A site of its own on another port of the same host: it serves one page, whatever is asked. */
  async function serveAttack(body: string): Promise<string> {
    attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(body));
    await new Promise<void>((resolve) => attacker!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  }

  test('a page on another port of 127.0.0.1 posting to the dashboard while logged in: 403, nothing changes, the call still runs', async () => {
    env = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN });
    const service = await liveCall();
    const dashboard = `${env.hotline.url}/dashboard`;
    const call = `${dashboard}/calls/${service.sessionId}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page);

    // Every state-changing address the dashboard has, by fetch (no-cors sends the cookie and
    // needs no preflight), and the hangup as a real form, submitted as a page would.
    const targets = [`${call}/hangup`, `${call}/transfer`, `${dashboard}/logout`, `${dashboard}/redeliver`, `${dashboard}/campaigns`, `${dashboard}/numbers`];
    const attack = await serveAttack(`<!doctype html><title>Win a prize</title>
<form id="f" method="post" action="${call}/hangup"><input name="x" value="1"></form>
<script>
  const targets = ${JSON.stringify(targets)};
  Promise.all(targets.map((url) => fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include',
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'target=&do=pause&campaign=x&show=yes' }).catch(() => null)))
    .then(() => document.getElementById('f').submit());
</script>`);
    const evil = await context.newPage();
    const seen = new Map<string, number>();
    evil.on('response', (res: PageResponse) => {
      if (res.url().startsWith(dashboard)) seen.set(`${res.request().method()} ${res.url()}`, res.status());
    });
    const formAnswer = evil.waitForResponse((res) => res.url() === `${call}/hangup` && res.request().isNavigationRequest());
    await evil.goto(attack);
    const refused = await formAnswer;
    await expect.poll(() => seen.size).toBeGreaterThanOrEqual(targets.length);

    // Nothing happened: the call runs, nothing was sent to the service, the session still holds.
    expect(service.actions.map((a) => a.type)).toEqual(['speak']);
    expect(env.hotline.registry.get(service.sessionId)).toBeDefined();
    for (const url of targets) expect(seen.get(`POST ${url}`), url).toBe(403);
    expect(refused.status()).toBe(403);
    expect(await evil.textContent('[role=alert]')).toContain('Nothing was done');
    await page.goto(call);
    expect(page.url()).toBe(call);
    expect(await page.textContent('h1')).toContain('in progress');

    // The dashboard's own button still ends the call.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('#hang-up-call');
    await service.nextOfType('barge_in');
    await context.close();
  }, 60_000);

  test('logging out ends the session on the server: a copy of the cookie taken before is refused', async () => {
    env = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN });
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page);
    const copied = (await context.cookies()).find((c) => c.name === 'hotline_dashboard');
    expect(copied).toBeDefined();
    // A second window of the same login, watching the live calls.
    const watching = await context.newPage();
    await watching.goto(`${env.hotline.url}/dashboard/`);
    await watching.waitForSelector('body[data-live=ready]');

    await page.click('header >> text=Log out');
    await page.waitForURL(/\/dashboard\/login$/);
    expect((await context.cookies()).find((c) => c.name === 'hotline_dashboard')).toBeUndefined();
    // The live view of the ended session is closed by the server, and cannot reconnect.
    await expect.poll(() => watching.textContent('#live-state'), { timeout: 10_000 }).toContain('The live view has closed: log in again');

    // Someone who kept the cookie: another browser, the copied cookie put back.
    const other = await browser.newContext();
    await other.addCookies([copied!]);
    const stolen = await other.newPage();
    await stolen.goto(`${env.hotline.url}/dashboard/calls`);
    await stolen.waitForURL(/\/dashboard\/login$/);
    const api = await other.request.get(`${env.hotline.url}/dashboard/live`, { headers: { accept: 'text/event-stream' } });
    expect(api.status()).toBe(401);
    await other.close();
    await context.close();
  }, 60_000);
});
