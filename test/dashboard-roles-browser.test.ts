/**
 * Staff accounts and their roles in a real headless Chromium against a real Hotline: a viewer reads
 * the calls with numbers masked and reaches no live call nor its controls, not even by posting
 * straight to them; an operator watches, reveals numbers and ends a call; an admin answers an erasure
 * request with a confirmation that names what goes, and reads the audit log, which holds every one of
 * those actions. SQLite only: the roles are the dashboard's, the same on either store.
 *
 * Needs Chromium from the system (Debian's `chromium`); skipped, and says so, without it.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { AuditLog } from '../src/privacy/audit-log.js';
import { StaffRepository } from '../src/store/staff-repository.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { chromiumPath, launchChromium, screenshotPath, startHotlineOn } from './helpers/browser.js';
import type { TestHotline } from './helpers/hotline.js';

const ADMIN = 'dashboard-roles-admin-token-0123456789';
const PASSWORD = 'correct horse battery';
const ANNA = '4915112345678';
const LIVE = '4917099999999';

const browserPath = chromiumPath();
if (!browserPath) console.warn('SKIPPED dashboard roles browser tests: no Chromium found (install Debian\'s "chromium" package)');

describe.skipIf(!browserPath)('staff roles in headless Chromium', () => {
  let browser: Browser;
  let env: TestHotline | undefined;
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
  });

  async function call(from: string, end: boolean): Promise<FakeVoiceService> {
    const service = await FakeVoiceService.connect(env!.hotline.wsUrl, { playback: { kind: 'manual' } });
    services.push(service);
    service.start({ from_phone_number: from });
    await service.nextOfType('speak');
    if (end) {
      service.end('caller_hangup');
      await expect.poll(() => env!.hotline.registry.get(service.sessionId)).toBeUndefined();
      await env!.hotline.registry.whenRecorded();
      await env!.hotline.reports.whenIdle();
    }
    return service;
  }

  async function logIn(name: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${env!.hotline.url}/dashboard/login`);
    await page.fill('input[name=name]', name);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    return page;
  }

  const navOf = async (page: Page): Promise<string[]> => page.$$eval('header nav a', (links) => links.map((a) => a.textContent ?? ''));
  /** A form post from the dashboard's own page, as a person with the browser's tools could send it. */
  const postFrom = (page: Page, path: string): Promise<number> =>
    page.evaluate(async (url) => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'x=1' })).status, `${env!.hotline.url}${path}`);

  test('viewer, operator and admin each see and do exactly what their role allows; the audit log has it all', async () => {
    env = await startHotlineOn('sqlite', () => ({ content: 'I am listening.' }), { ADMIN_TOKEN: ADMIN });
    const staff = new StaffRepository(env.hotline.store.db);
    await staff.add('vera', 'viewer', PASSWORD);
    await staff.add('otto', 'operator', PASSWORD);
    await staff.add('ada', 'admin', PASSWORD);
    const ended = await call(ANNA, true);
    const live = await call(LIVE, false);
    const handedOver = await call('4930555555555', false);

    // The viewer: the calls and the charts, numbers masked, no live call, no controls.
    const vera = await logIn('vera');
    await vera.waitForURL(/\/dashboard\/calls$/);
    expect(await navOf(vera)).toEqual(['Calls', 'Charts']);
    expect(await vera.$('header form.numbers')).toBeNull();
    const history = (await vera.textContent('main')) ?? '';
    expect(history).not.toContain(ANNA);
    expect(history).toContain('4915•••••••78');
    await vera.goto(`${env.hotline.url}/dashboard/calls/${ended.sessionId}`);
    expect(await vera.textContent('main')).not.toContain(ANNA);
    const liveCall = await vera.goto(`${env.hotline.url}/dashboard/calls/${live.sessionId}`);
    expect(liveCall?.status()).toBe(403);
    expect(await vera.$('#hang-up-call')).toBeNull();
    for (const path of [`/dashboard/calls/${live.sessionId}/hangup`, `/dashboard/calls/${live.sessionId}/transfer`, '/dashboard/numbers', '/dashboard/people/erase', '/dashboard/campaigns']) {
      expect(await postFrom(vera, path), path).toBe(403);
    }
    expect((await vera.goto(`${env.hotline.url}/dashboard/`))?.url()).toMatch(/\/dashboard\/calls$/);
    for (const path of ['/dashboard/live', '/dashboard/audit', '/dashboard/people', '/dashboard/prompts']) {
      expect((await vera.goto(`${env.hotline.url}${path}`))?.status(), path).toBe(403);
    }
    // The call the viewer tried to end still runs.
    expect(env.hotline.registry.get(live.sessionId)).toBeDefined();

    // The operator: the live call and its controls, numbers on demand; no people, no audit.
    const otto = await logIn('otto');
    await otto.waitForURL(/\/dashboard\/$/);
    expect(await navOf(otto)).toEqual(['Live', 'Calls', 'Charts']);
    await otto.goto(`${env.hotline.url}/dashboard/calls/${live.sessionId}`);
    await otto.click('header form.numbers button');
    await otto.waitForLoadState();
    expect(await otto.textContent('main')).toContain(LIVE);
    expect((await otto.goto(`${env.hotline.url}/dashboard/people`))?.status()).toBe(403);
    await otto.goto(`${env.hotline.url}/dashboard/calls/${live.sessionId}`);
    otto.once('dialog', (dialog) => void dialog.accept());
    await otto.click('#hang-up-call');
    await live.nextOfType('barge_in');
    await otto.goto(`${env.hotline.url}/dashboard/calls/${handedOver.sessionId}`);
    otto.once('dialog', (dialog) => void dialog.accept());
    await otto.click('#transfer-call');
    await handedOver.nextOfType('barge_in');

    // The admin: an erasure, confirmed on a page that names what goes; then the audit log.
    const ada = await logIn('ada');
    expect(await navOf(ada)).toEqual(['Live', 'Calls', 'Campaigns', 'Charts', 'Prompts', 'People', 'Audit']);
    await ada.goto(`${env.hotline.url}/dashboard/people`);
    await ada.fill('input[name=number]', '+49 (0)151 1234 5678');
    await ada.click('main form.filters button');
    await ada.waitForSelector('#found');
    expect(await ada.textContent('#found')).toContain('Erasing removes 1 call(s), 1 transcript(s), 1 report(s)');
    // Her access request first: the document downloads, with her call in it.
    const [download] = await Promise.all([ada.waitForEvent('download'), ada.click('#found form:not(.danger) button')]);
    const exported = JSON.parse(await readFile((await download.path())!, 'utf8')) as { number: string; calls: { call: { session_id: string } }[] };
    expect(exported).toMatchObject({ number: ANNA, calls: [{ call: { session_id: ended.sessionId } }] });
    await ada.click('form.danger button');
    // The browser asks for the word first (required); typed wrong, the server erases nothing.
    await ada.fill('input[name=confirm]', 'yes');
    await ada.click('form.danger button');
    await ada.waitForSelector('[role=alert]');
    expect(await ada.textContent('[role=alert]')).toContain('Nothing was erased');
    await ada.fill('input[name=confirm]', 'erase');
    await ada.click('form.danger button');
    await ada.waitForSelector('#erased');
    expect(await ada.textContent('#erased')).toContain('1 call(s), 1 transcript(s), 1 report(s)');
    expect(await env.hotline.store.db.selectFrom('calls').select('session_id').where('from_number', '=', ANNA).execute()).toEqual([]);

    await ada.goto(`${env.hotline.url}/dashboard/audit`);
    await ada.screenshot({ path: screenshotPath('dashboard-audit'), fullPage: true });
    const entries = await new AuditLog(env.hotline.store.db, pino({ level: 'silent' })).list();
    const did = entries.map((e) => `${e.actor} ${e.action}${e.session_id ? ` ${e.session_id}` : ''}`);
    expect(did).toEqual(
      expect.arrayContaining([
        'vera log_in',
        `vera open_story ${ended.sessionId}`,
        'otto log_in',
        `otto open_live_call ${live.sessionId}`,
        'otto reveal_numbers',
        `otto hang_up ${live.sessionId}`,
        `otto transfer ${handedOver.sessionId}`,
        'ada log_in',
        'ada export_person',
        'ada erase_person',
      ]),
    );
    // Looking is one entry per person and call, however often the page was loaded.
    expect(did.filter((line) => line === `otto open_live_call ${live.sessionId}`)).toHaveLength(1);
    // Nothing the viewer was refused is on record as done.
    expect(did.filter((line) => line.startsWith('vera ') && !/log_in|open_story/.test(line))).toEqual([]);
    const table = (await ada.textContent('#audit')) ?? '';
    for (const line of ['vera', 'otto', 'ada', 'hang_up', 'erase_person', 'reveal_numbers']) expect(table).toContain(line);
    // The audit log names no one's number.
    expect(table).not.toContain('15112345678');

    // Filtered by person and action.
    await ada.goto(`${env.hotline.url}/dashboard/audit?actor=otto&action=hang_up`);
    expect(await ada.$$eval('#audit tbody tr', (rows) => rows.length)).toBe(1);
  }, 120_000);
});
