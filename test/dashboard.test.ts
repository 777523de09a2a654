/**
 * The dashboard over plain HTTP against a real Hotline: the login and its
 * cookie, what is off without a token, relative links (a reverse proxy's
 * prefix), posted filters, escaping, CSV, and the live stream of a real call.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, onTestFinished, test } from 'vitest';
import { seedCalls, writeEndedCalls } from '../bench/dashboard-load.js';
import type { TurnSummary } from '../src/call/ports/call-summary.js';
import { WEEKDAYS } from '../src/campaigns/definition.js';
import { SessionCookies } from '../src/dashboard/session-cookie.js';
import { eventsOf } from './helpers/sse-events.js';
import { timeAxis } from '../src/dashboard/pages/story.js';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { DEMO_MODEL_ID } from '../src/llm/scripted-contract.js';
import type { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { closedPort, startReportReceiver } from './helpers/report-receiver.js';
import { lastUserText } from './helpers/scripts.js';
import { testCalls } from './helpers/test-calls.js';
import { startHotlineOn } from './helpers/browser.js';
import { callSummary } from './helpers/reports.js';
import { storeKinds } from './helpers/stores.js';

const ADMIN = 'dashboard-admin-token';
const HOSTILE = '<img src=x onerror=alert(1)>';
const FIELDS = { summary: `=HYPERLINK("x") ${HOSTILE}`, callback_wanted: true, customer_number: '4711', sentiment: 'negative', resolved: false };

function script(request: ChatRequestBody): ScriptedReply {
  if ('response_format' in request && request.response_format) return { content: JSON.stringify(FIELDS) };
  if (lastUserText(request) === 'bye') return { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
  return { content: 'Sure.' };
}

const calls = testCalls();
let env: TestHotline | undefined;

async function start(vars: Record<string, string> = { ADMIN_TOKEN: ADMIN }): Promise<TestHotline> {
  env = await calls.start(script, { REPORT_FIELDS: 'true', ...vars });
  return env;
}

function get(path: string, cookie?: string, accept = 'text/html'): Promise<Response> {
  return fetch(`${env!.hotline.url}${path}`, { redirect: 'manual', headers: { accept, ...(cookie ? { cookie } : {}) } });
}

function post(path: string, form: Record<string, string>, cookie?: string): Promise<Response> {
  return fetch(`${env!.hotline.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(form).toString(),
  });
}

async function logIn(): Promise<string> {
  const res = await post('/dashboard/login', { token: ADMIN });
  expect(res.status).toBe(303);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return setCookie.split(';')[0]!;
}

/** Outbound calling configured, against a voice service that is not there: every call fails. */
async function unreachableService(): Promise<Record<string, string>> {
  return { AIFLOW_API_URL: `http://127.0.0.1:${await closedPort()}`, AIFLOW_ACCESS_TOKEN: 'platform-token', AIFLOW_ID: 'flow-1', AIFLOW_BILLING_DEVICE: 'dev-1' };
}

/** One finished call from `from`: a word, then goodbye and the hangup. */
async function finishedCall(from: string): Promise<FakeVoiceService> {
  const service = await calls.connect();
  service.start({ from_phone_number: from });
  await service.nextOfType('speak');
  await sayGoodbye(service);
  return service;
}

/** The call id Hotline gave the (latest) stored call of a session id. */
async function callIdOf(sessionId: string): Promise<string> {
  const id = (await env!.hotline.reports.getCall(sessionId))?.call.callId;
  if (!id) throw new Error(`no stored call for ${sessionId}`);
  return id;
}

/** The caller says goodbye: Hotline hangs up, the call ends, and it is stored with its report. */
async function sayGoodbye(service: FakeVoiceService): Promise<void> {
  service.say('bye');
  await service.nextOfType('hangup');
  service.end('hangup');
  await expect.poll(() => env!.hotline.registry.size).toBe(0);
  await env!.hotline.registry.whenRecorded();
  await env!.hotline.reports.whenIdle();
}

describe('access', () => {
  test('without ADMIN_TOKEN the dashboard is off and says how to turn it on', async () => {
    await start({});
    const res = await get('/dashboard/calls');
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Set <code>ADMIN_TOKEN</code>');
  });

  test('a login form sets an HttpOnly, SameSite=Strict cookie; a wrong token sets none; pages need the cookie', async () => {
    await start();
    expect((await get('/dashboard')).headers.get('location')).toBe('dashboard/');
    const page = await get('/dashboard/calls/abc');
    expect(page.status).toBe(303);
    // Relative: behind a proxy's prefix it still lands on the prefix's login.
    expect(page.headers.get('location')).toBe('../login');
    expect((await get('/dashboard/live', undefined, 'text/event-stream')).status).toBe(401);

    const wrong = await post('/dashboard/login', { token: 'guess' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();

    const right = await post('/dashboard/login', { token: ADMIN });
    const setCookie = right.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^hotline_dashboard=[\w.-]+;/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).not.toContain(ADMIN);
    const cookie = setCookie.split(';')[0]!;
    expect((await get('/dashboard/assets/constructor', cookie)).status).toBe(404);
    expect((await get('/dashboard/assets/live.js')).headers.get('content-type')).toContain('javascript');
    const calls = await get('/dashboard/calls', cookie);
    expect(calls.status).toBe(200);
    expect(calls.headers.get('cache-control')).toBe('no-store');
    expect(calls.headers.get('content-security-policy')).toContain("script-src 'self'");

    // A forged or altered cookie is nobody's.
    const forged = cookie.replace(/\.(\d+)\./, (_m, expires: string) => `.${Number(expires) + 1}.`);
    expect(forged).not.toBe(cookie);
    expect((await get('/dashboard/calls', forged)).status).toBe(303);
  });

  test('a session cookie expires, and a new admin token ends every session', async () => {
    const sessions = new SessionCookies('token-a');
    const issued = await sessions.issue(1_000);
    expect(await sessions.valid(issued, 2_000)).toBe(true);
    expect(await sessions.valid(issued, 1_000 + 12 * 3600_000 + 1)).toBe(false);
    expect(await new SessionCookies('token-b').valid(issued, 2_000)).toBe(false);
    expect(await sessions.valid('garbage', 2_000)).toBe(false);
    expect(await sessions.valid(undefined, 2_000)).toBe(false);
  });

  test('wrong tokens from one address run out its budget: 429', async () => {
    await start({ ADMIN_TOKEN: ADMIN, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2' });
    expect((await post('/dashboard/login', { token: 'a' })).status).toBe(401);
    expect((await post('/dashboard/login', { token: 'b' })).status).toBe(401);
    expect((await post('/dashboard/login', { token: 'c' })).status).toBe(429);
  });
});

describe('requests from elsewhere (CSRF)', () => {
  /** A state-changing request as a browser would send it, with the headers that say where it came from. */
  function postFrom(path: string, headers: Record<string, string>, cookie: string): Promise<Response> {
    return fetch(`${env!.hotline.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
      body: 'show=yes&back=calls',
    });
  }

  test('Sec-Fetch-Site decides: same-origin passes; same-site, cross-site refused with 403 and nothing done', async () => {
    await start();
    const cookie = await logIn();
    expect((await postFrom('/dashboard/numbers', { 'sec-fetch-site': 'same-origin' }, cookie)).status).toBe(303);
    for (const site of ['same-site', 'cross-site']) {
      const res = await postFrom('/dashboard/numbers', { 'sec-fetch-site': site, origin: env!.hotline.url }, cookie);
      expect(res.status, site).toBe(403);
      expect(res.headers.get('set-cookie'), site).toBeNull();
      expect(await res.text()).toContain('Nothing was done');
    }
    // Logging out from elsewhere is refused too: the session holds.
    expect((await postFrom('/dashboard/logout', { 'sec-fetch-site': 'same-site' }, cookie)).status).toBe(403);
    expect((await get('/dashboard/calls', cookie)).status).toBe(200);
    // The login form as well: nobody logs a browser in from another page.
    const login = await fetch(`${env!.hotline.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    expect(login.status).toBe(403);
    expect(login.headers.get('set-cookie')).toBeNull();
  });

  test('without Sec-Fetch-Site (older browsers) Origin decides: its host and scheme must be the dashboard\'s', async () => {
    await start();
    const cookie = await logIn();
    const own = new URL(env!.hotline.url);
    expect((await postFrom('/dashboard/numbers', { origin: own.origin }, cookie)).status).toBe(303);
    const elsewhere = [`http://127.0.0.1:${Number(own.port) + 1}`, `http://localhost:${own.port}`, 'null', 'https://evil.example', 'not a url'];
    for (const origin of elsewhere) expect((await postFrom('/dashboard/numbers', { origin }, cookie)).status, origin).toBe(403);
    // No header that says where it came from: not a browser, which cannot be tricked into sending the cookie.
    expect((await postFrom('/dashboard/numbers', {}, cookie)).status).toBe(303);
  });

  test('behind a reverse proxy: X-Forwarded-Host and -Proto count only when TRUST_PROXY trusts the proxy', async () => {
    const proxied = { 'x-forwarded-host': 'example.com', 'x-forwarded-proto': 'https', origin: 'https://example.com' };
    await start({ ADMIN_TOKEN: ADMIN, TRUST_PROXY: 'loopback' });
    const cookie = await secureLogIn();
    expect((await postFrom('/dashboard/numbers', proxied, cookie)).status).toBe(303);
    expect((await postFrom('/dashboard/numbers', { ...proxied, origin: 'http://example.com' }, cookie)).status).toBe(403);
    expect((await postFrom('/dashboard/numbers', { ...proxied, origin: 'https://evil.example.com' }, cookie)).status).toBe(403);
    await env!.close();
    env = undefined;
    // Untrusted, the forwarded host is anyone's to claim: only the Host header counts. A TLS proxy in
    // front makes the browser's origin https while Hotline sees http: that is the same dashboard.
    await start({ ADMIN_TOKEN: ADMIN });
    const plain = await logIn();
    const host = new URL(env!.hotline.url).host;
    expect((await postFrom('/dashboard/numbers', { ...proxied, origin: 'https://example.com' }, plain)).status).toBe(403);
    expect((await postFrom('/dashboard/numbers', { ...proxied, origin: `https://${host}` }, plain)).status).toBe(303);
  });

  /** A login over HTTPS as a trusted proxy forwards it: the cookie is __Host- prefixed and Secure. */
  async function secureLogIn(): Promise<string> {
    const res = await fetch(`${env!.hotline.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    expect(res.status).toBe(303);
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^__Host-hotline_dashboard=[\w.-]+;/);
    expect(setCookie).toContain('Path=/;');
    expect(setCookie).toContain('Secure');
    expect(setCookie).not.toMatch(/Domain=/i);
    return setCookie.split(';')[0]!;
  }

  test('over HTTPS (a proxy TRUST_PROXY trusts) the cookie is __Host-hotline_dashboard, and only it is read there', async () => {
    await start({ ADMIN_TOKEN: ADMIN, TRUST_PROXY: 'loopback' });
    const secure = await secureLogIn();
    const https = { 'x-forwarded-proto': 'https' };
    const page = (cookie: string, headers: Record<string, string> = {}) =>
      fetch(`${env!.hotline.url}/dashboard/calls`, { redirect: 'manual', headers: { accept: 'text/html', cookie, ...headers } });
    expect((await page(secure, https)).status).toBe(200);
    // The same value without the prefix (as a sibling subdomain or a plain-HTTP page could set it) is not read over HTTPS.
    const unprefixed = secure.replace('__Host-', '');
    expect((await page(unprefixed, https)).status).toBe(303);
    // Over plain HTTP the cookie has no prefix and no Secure: a browser may not keep a Secure cookie there.
    const plain = await logIn();
    expect(plain).toMatch(/^hotline_dashboard=/);
    expect((await page(plain)).status).toBe(200);
  });
});

describe('logging out', () => {
  test('ends the session on the server: the cookie, and any copy of it, is refused; its live stream closes', async () => {
    await start();
    const cookie = await logIn();
    const other = await logIn();
    const stream = await fetch(`${env!.hotline.url}/dashboard/live`, { headers: { accept: 'text/event-stream', cookie } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    await reader.read();

    const out = await post('/dashboard/logout', {}, cookie);
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/^hotline_dashboard=;/);
    // The stream ends: the server closed it.
    for (;;) if ((await reader.read()).done) break;
    expect((await get('/dashboard/calls', cookie)).status).toBe(303);
    expect((await get('/dashboard/live', cookie, 'text/event-stream')).status).toBe(401);
    expect((await post('/dashboard/numbers', { show: 'yes' }, cookie)).status).toBe(401);
    // Another login (another browser) is another session: it holds.
    expect((await get('/dashboard/calls', other)).status).toBe(200);
  });
});

describe('pages', () => {
  test('every link, script and form is relative: the dashboard works under a reverse proxy prefix', async () => {
    await start();
    const cookie = await logIn();
    const service = await finishedCall('4915112345678');
    for (const path of ['/dashboard/', '/dashboard/calls', `/dashboard/calls/${service.sessionId}`, '/dashboard/login']) {
      const body = await (await get(path, cookie)).text();
      expect(body, path).toMatch(/href="/);
      expect(body.match(/(?:href|src|action)="\/[^"]*"/g), path).toBeNull();
    }
  });

  test('the history: numbers masked, a search by number posted (never in a URL), a field filter, escaping, CSV', async () => {
    await start();
    const cookie = await logIn();
    const first = await finishedCall('4915112345678');
    await finishedCall('4917600000001');

    const all = await (await get('/dashboard/calls', cookie)).text();
    expect(all).toContain('<span class="count" id="total">2</span>');
    expect(all).toContain('4915•••••••78');
    expect(all).not.toContain('4915112345678');
    expect(all).not.toContain(HOSTILE);
    expect(all).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // Paging and export forms post the filter; no link carries it.
    expect(all).not.toMatch(/href="[^"]*\?/);

    const byNumber = await (await post('/dashboard/calls', { number: '12345678' }, cookie)).text();
    expect(byNumber).toContain('id="total">1<');
    // Each call's link names the call itself: a session id the service uses again is another call.
    expect(byNumber).toContain(`calls/${await callIdOf(first.sessionId)}`);
    const byField = await (await post('/dashboard/calls', { field: 'callback_wanted', value: 'true' }, cookie)).text();
    expect(byField).toContain('id="total">2<');
    const bySummary = await (await post('/dashboard/calls', { text: 'hyperlink("x")' }, cookie)).text();
    expect(bySummary).toContain('id="total">2<');
    // % and _ are the caller's characters, not wildcards: unescaped, '%' would match every call.
    const noSummary = await (await post('/dashboard/calls', { text: '%' }, cookie)).text();
    expect(noSummary).toContain('id="total">0<');
    const byText = await (await post('/dashboard/calls', { field: 'customer_number', value: '4711' }, cookie)).text();
    expect(byText).toContain('id="total">2<');
    const none = await (await post('/dashboard/calls', { field: 'callback_wanted', value: 'false', direction: 'outbound' }, cookie)).text();
    expect(none).toContain('id="total">0<');
    const odd = await (await post('/dashboard/calls', { since: 'yesterday', direction: 'sideways' }, cookie)).text();
    expect(odd).toContain('Ignored, not understood: since, direction.');
    expect(odd).toContain('id="total">2<');

    const csv = await (await post('/dashboard/calls.csv', { number: '12345678' }, cookie)).text();
    const lines = csv.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('4915•••••••78');
    // A cell that would run as a spreadsheet formula stays text.
    expect(lines[1]).toContain(`"'=HYPERLINK(""x"")`);

    // Numbers shown on request, by a cookie of the viewer's: still never in a URL.
    const shown = await post('/dashboard/numbers', { show: 'yes', back: 'calls' }, cookie);
    // Back to the page the button was on, and never anywhere else.
    expect(shown.headers.get('location')).toBe('./calls');
    for (const back of ['//evil.example', '../../x', '%2e%2e/%2E%2E/x', 'https://evil.example/', 'a'.repeat(5000) + '!']) {
      expect((await post('/dashboard/numbers', { show: 'no', back }, cookie)).headers.get('location')).toBe('./');
    }
    const numbersCookie = (shown.headers.get('set-cookie') ?? '').split(';')[0]!;
    const full = await (await get('/dashboard/calls', `${cookie}; ${numbersCookie}`)).text();
    expect(full).toContain('4915112345678');
  });

  test('the prompts page shows every file as prompts:check sees it, a broken tool file with its line', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'hotline-dashboard-prompts-'));
    try {
      const dir = path.join(root, 'prompts');
      await cp(path.resolve('prompts'), dir, { recursive: true });
      await writeFile(path.join(dir, 'tools', 'broken.yaml'), 'name: broken\nrequest:\n  method: TELEPORT\n');
      await start({ ADMIN_TOKEN: ADMIN, PROMPTS_DIR: dir });
      const cookie = await logIn();
      const page = await (await get('/dashboard/prompts', cookie)).text();
      expect(page).toContain('<code>system.md</code>');
      expect(page).toContain('<code>tools/order_status.yaml</code>');
      expect(page).toMatch(/<code>tools\/broken\.yaml<\/code>[\s\S]*?error: /);
      expect(page).toMatch(/id="check-problems">[1-9]/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  test('the campaigns page: each campaign with its progress, a way to its calls; the history filters by its name', async () => {
    await start({ ADMIN_TOKEN: ADMIN, ...(await unreachableService()) });
    const cookie = await logIn();
    expect(await (await get('/dashboard/campaigns', cookie)).text()).toContain('No campaign yet.');
    const created = await fetch(`${env!.hotline.url}/api/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Spring <check-in>', contacts: [{ phone: '+49 151 1234567', name: 'Anna' }] }),
    });
    const { id } = (await created.json()) as { id: string };
    // The voice service cannot be reached: the one contact fails at once, and the campaign is done.
    await expect.poll(async () => (await env!.hotline.campaigns.require(id)).state).toBe('done');
    const page = await (await get('/dashboard/campaigns', cookie)).text();
    expect(page).toContain(`data-campaign="${id}"`);
    expect(page).toContain('<strong>Spring &lt;check-in&gt;</strong>');
    expect(page).toContain('failed: 1');
    expect(page).toContain(`<input type="hidden" name="campaign" value="${id}">`);
    const history = await (await get('/dashboard/calls', cookie)).text();
    expect(history).toContain(`<option value="${id}">Spring &lt;check-in&gt;</option>`);
    // A campaign done has nothing to pause.
    expect(page).not.toContain('name="do"');
  });

  test('a running campaign is paused and resumed from its row', async () => {
    await start({ ADMIN_TOKEN: ADMIN, ...(await unreachableService()) });
    const cookie = await logIn();
    // Calling hours two days from now: the campaign runs, and its contact waits.
    const day = WEEKDAYS[(new Date().getUTCDay() + 2) % 7]!;
    const created = await fetch(`${env!.hotline.url}/api/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Later', calling_hours: { days: [day], from: '00:00', to: '24:00' }, contacts: [{ phone: '+49 151 1234567' }] }),
    });
    const { id } = (await created.json()) as { id: string };
    expect(await (await get('/dashboard/campaigns', cookie)).text()).toContain('<button type="submit" name="do" value="pause">Pause</button>');

    const paused = await post('/dashboard/campaigns', { campaign: id, do: 'pause' }, cookie);
    expect(paused.status).toBe(303);
    expect(paused.headers.get('location')).toBe('campaigns');
    expect((await env!.hotline.campaigns.require(id)).state).toBe('paused');
    expect(await (await get('/dashboard/campaigns', cookie)).text()).toContain('<button type="submit" name="do" value="resume">Resume</button>');
    expect((await post('/dashboard/campaigns', { campaign: id, do: 'resume' }, cookie)).status).toBe(303);
    expect((await env!.hotline.campaigns.require(id)).state).toBe('running');

    expect((await post('/dashboard/campaigns', { campaign: 'no-such', do: 'pause' }, cookie)).status).toBe(404);
    expect((await post('/dashboard/campaigns', { campaign: id, do: 'delete' }, cookie)).status).toBe(400);
    // Without the cookie: nothing changes.
    expect((await post('/dashboard/campaigns', { campaign: id, do: 'pause' })).status).toBe(401);
    expect((await env!.hotline.campaigns.require(id)).state).toBe('running');
  });

  test('the charts cover 30 days, or 7 or 90 when asked; anything else is 30', async () => {
    await start();
    const cookie = await logIn();
    const page = async (query: string) => (await get(`/dashboard/charts${query}`, cookie)).text();
    const month = await page('');
    expect(month).toContain('Calls per day, last 30 days');
    expect(month).toContain('<strong aria-current="true">30</strong>');
    expect(month).toContain('<a href="charts?days=7">7</a>');
    expect(month).toContain('<a href="charts?days=90">90</a>');
    const quarter = await page('?days=90');
    expect(quarter).toContain('How calls ended, last 90 days');
    expect(quarter).toContain('<strong aria-current="true">90</strong>');
    expect(await page('?days=7')).toContain('Calls per day, last 7 days');
    for (const odd of ['?days=365', '?days=abc', '?days=7&days=90', '?days=__proto__']) expect(await page(odd)).toContain('Calls per day, last 30 days');
  });

  test('an export longer than one slice has every call once, newest first', async () => {
    await start();
    const cookie = await logIn();
    // Written into Hotline's store beside it, as a second instance's calls would land.
    await seedCalls(env!.hotline.store, 250);
    const csv = (await (await post('/dashboard/calls.csv', {}, cookie)).text()).trim().split('\n').slice(1);
    expect(csv).toHaveLength(250);
    const ids = csv.map((line) => line.split(',')[0]!);
    expect(new Set(ids).size).toBe(250);
    const ended = csv.map((line) => line.split(',')[2]!);
    expect([...ended].sort().reverse()).toEqual(ended);
  });

  test('reports given up: counted on the history, told on the story, and sent again once the receiver is back', async () => {
    const port = await closedPort();
    await start({ ADMIN_TOKEN: ADMIN, REPORT_WEBHOOK_URL: `http://127.0.0.1:${port}/hooks`, REPORT_WEBHOOK_SECRET: 'whsec-dash', REPORT_WEBHOOK_GIVE_UP_MS: '150' });
    const cookie = await logIn();
    const service = await finishedCall('4915112345678');
    const history = async () => (await get('/dashboard/calls', cookie)).text();
    await expect.poll(history).toContain('id="failed-deliveries"');
    expect(await history()).toContain('1 report could not be delivered');
    const address = `/dashboard/calls/${encodeURIComponent(service.sessionId)}`;
    const story = await (await get(address, cookie)).text();
    expect(story).toContain('Delivery given up after');
    expect(story).toContain('ECONNREFUSED');
    expect(story).toContain(`action="${await callIdOf(service.sessionId)}/redeliver"`);

    const receiver = await startReportReceiver('whsec-dash', port);
    try {
      const again = await post('/dashboard/redeliver', {}, cookie);
      expect(again.status).toBe(303);
      expect(again.headers.get('location')).toBe('calls');
      const report = await receiver.request(0);
      expect(report.verified).toBe(true);
      expect(JSON.parse(report.body)).toMatchObject({ session_id: service.sessionId });
      await expect.poll(async () => (await (await get(address, cookie)).text()).includes('Delivered to the webhook')).toBe(true);
      expect(await history()).not.toContain('id="failed-deliveries"');
      // Nothing left to send: the API says so, and the receiver got the report once.
      const api = await fetch(`${env!.hotline.url}/api/reports/redeliver`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
      expect(await api.json()).toEqual({ requeued: 0 });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  test('a call not (yet) stored: 404 with a way back; reports sent again with no webhook: 409, saying why', async () => {
    await start();
    const cookie = await logIn();
    const res = await get('/dashboard/calls/no-such-call', cookie);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('href="../calls"');
    const nowhere = await post('/dashboard/redeliver', {}, cookie);
    expect(nowhere.status).toBe(409);
    expect(await nowhere.text()).toContain('set <code>REPORT_WEBHOOK_URL</code>');
  });
});

describe.each(await storeKinds())("the LLM cost in the history and the story, on %s", (kind) => {
  /** Turns costing these (USD); `null` a turn whose model has no price; 'uncounted' one without token counts. */
  function turnsCosting(costs: readonly (number | null | 'uncounted')[]): TurnSummary[] {
    return costs.map((cost) => {
      const turn = { at: new Date().toISOString(), interrupted: false, failed: false };
      if (cost === 'uncounted') return turn;
      const counted = { ...turn, tokens: { prompt: 900, completion: 25 }, model: cost === null ? 'house-model' : 'gpt-4o-mini' };
      return cost === null ? counted : { ...counted, costUsd: cost };
    });
  }

  const SEEDED: readonly [string, (number | null | 'uncounted')[]][] = [
    ['cheap', [0.0022, 0.002]],
    ['pricey', [0.5, 0.75]],
    // 0.30000000000000004 in doubles: "at most $0.30" still finds it.
    ['mid', [0.1, 0.2]],
    ['unpriced', [0.01, null]],
    ['no-counts', ['uncounted']],
    ['no-turn', []],
  ];

  async function seeded(): Promise<{ cookie: string }> {
    const own = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN });
    env = own;
    onTestFinished(() => own.close());
    const now = Date.now();
    await writeEndedCalls(
      own.hotline.store.db,
      SEEDED.map(([id, costs], i) => ({ call: callSummary({ sessionId: id, endedAt: new Date(now - i * 60_000).toISOString(), turns: turnsCosting(costs) }) })),
    );
    return { cookie: await logIn() };
  }

  const costCell = (page: string, id: string) => page.match(new RegExp(`href="calls/${id}"[\\s\\S]*?data-label="LLM cost" class="cost">(.*?)</td>`))?.[1];
  const rowsOf = (page: string) => [...page.matchAll(/<a href="calls\/([\w-]+)">/g)].map((m) => m[1]);

  test('a column per call ("—" when not known), the sum of every call that matches with the unknown ones told apart, a filter by cost', async () => {
    const { cookie } = await seeded();
    const all = await (await get('/dashboard/calls', cookie)).text();
    expect(all).toContain('id="total">6<');
    expect(costCell(all, 'pricey')).toBe('$1.250');
    expect(costCell(all, 'mid')).toBe('$0.300');
    expect(costCell(all, 'cheap')).toBe('$0.0042');
    expect(costCell(all, 'no-turn')).toBe('$0');
    // Not known: a dash, never $0.
    for (const id of ['unpriced', 'no-counts']) expect(costCell(all, id)).toMatch(/^<span class="muted" title="not known: [^"]+">—<\/span>$/);
    // The sum of all that match: 1.25 + 0.3 + 0.0042 + 0, and the two of unknown cost said apart.
    expect(all).toContain('LLM cost of all 6 calls that match: <strong id="cost-sum">$1.554</strong> for 4 of them; <span class="warning" id="cost-unknown">2 calls with no known cost (—) are not in the sum</span>');

    // The expensive ones: the sum is theirs, and the filter stays in the paging and export forms.
    const expensive = await (await post('/dashboard/calls', { cost_min: '0.25' }, cookie)).text();
    expect(expensive).toContain('id="total">2<');
    expect(rowsOf(expensive)).toEqual(['pricey', 'mid']);
    expect(expensive).toContain('LLM cost of all 2 calls that match: <strong id="cost-sum">$1.550</strong></p>');
    expect(expensive).not.toContain('id="cost-unknown"');
    expect(expensive).toContain('name="cost_min" inputmode="decimal" autocomplete="off" size="7" value="0.25"');
    expect(expensive).toContain('<input type="hidden" name="cost_min" value="0.25">');
    const cheap = await (await post('/dashboard/calls', { cost_max: '$0.30' }, cookie)).text();
    expect(rowsOf(cheap)).toEqual(['cheap', 'mid', 'no-turn']);
    expect(cheap).toContain('<strong id="cost-sum">$0.304</strong></p>');
    const one = await (await post('/dashboard/calls', { cost_min: '0.0042', cost_max: '0.0042' }, cookie)).text();
    expect(rowsOf(one)).toEqual(['cheap']);
    expect(one).toContain('LLM cost of the call that matches: <strong id="cost-sum">$0.0042</strong>');
  });

  test('an amount that is not one is told in words and ignored; the page still lists the calls', async () => {
    const { cookie } = await seeded();
    const cases: [Record<string, string>, string, number][] = [
      [{ cost_min: 'abc' }, 'Cost at least: &quot;abc&quot; is not an amount in US dollars; write it like 0.05.', 6],
      [{ cost_max: '-1' }, 'Cost at most: &quot;-1&quot; is below $0, and no call costs less than nothing.', 6],
      [{ cost_min: '1,5' }, 'Cost at least: &quot;1,5&quot; is not an amount in US dollars; write it like 0.05.', 6],
      [{ cost_min: HOSTILE }, 'Cost at least: &quot;&lt;img src=x onerror=a…&quot; is not an amount in US dollars', 6],
      [{ cost_min: '5', cost_max: '1' }, 'No call can cost at least $5 and at most $1: the least is above the most.', 0],
    ];
    for (const [form, message, total] of cases) {
      const res = await post('/dashboard/calls', form, cookie);
      expect(res.status, JSON.stringify(form)).toBe(200);
      const page = await res.text();
      expect(page, JSON.stringify(form)).toContain(message);
      expect(page).toContain(`id="total">${total}<`);
      expect(page).not.toContain(HOSTILE);
      expect(page).not.toMatch(/at \w+ \(.*\.ts:\d+/);
    }
    // The export takes the same form: a bad amount filters nothing, and is no error.
    const csv = await post('/dashboard/calls.csv', { cost_min: 'abc' }, cookie);
    expect(csv.status).toBe(200);
    expect(parse(await csv.text())).toHaveLength(7);
  });

  test('the CSV has each call\'s cost last (empty when not known) for the calls the filter picks; the story says the call\'s cost and why one is not known', async () => {
    const { cookie } = await seeded();
    const rows = (await (await post('/dashboard/calls.csv', {}, cookie)).text()).trim();
    const [header, ...lines] = parse(rows) as string[][];
    expect(header!.slice(-2)).toEqual(['call_id', 'cost_usd']);
    const costs = Object.fromEntries(lines.map((line) => [line.at(-2), line.at(-1)]));
    expect(Number(costs['pricey'])).toBe(1.25);
    expect(Number(costs['mid'])).toBeCloseTo(0.3, 12);
    expect(costs['no-turn']).toBe('0');
    expect(costs['unpriced']).toBe('');
    expect(costs['no-counts']).toBe('');
    const expensive = parse(await (await post('/dashboard/calls.csv', { cost_min: '1' }, cookie)).text()) as string[][];
    expect(expensive.slice(1).map((line) => [line.at(-2), line.at(-1)])).toEqual([['pricey', '1.25']]);

    const story = async (id: string) => (await get(`/dashboard/calls/${id}`, cookie)).text();
    expect(await story('pricey')).toContain('<dt>LLM cost</dt><dd class="cost" id="call-cost">$1.250</dd>');
    expect(await story('no-turn')).toContain('<dd class="cost" id="call-cost">$0 <span class="muted">(no LLM turn)</span></dd>');
    expect(await story('unpriced')).toContain(
      '<dd class="cost unknown" id="call-cost">— <span class="muted">not known: no price for house-model (LLM_PRICES_FILE); the turns with a price cost $0.010</span></dd>',
    );
    expect(await story('no-counts')).toContain('<dd class="cost unknown" id="call-cost">— <span class="muted">not known: no token counts came from the server</span></dd>');
  });

  test('a call on the built-in demo model costs "demo": counted apart in a plain colour, the warning kept for a price missing', async () => {
    const own = await startHotlineOn(kind, script, { ADMIN_TOKEN: ADMIN });
    env = own;
    onTestFinished(() => own.close());
    const onDemo = (): TurnSummary[] => [{ at: new Date().toISOString(), interrupted: false, failed: false, tokens: { prompt: 900, completion: 25 }, model: DEMO_MODEL_ID }];
    const seed = (calls: [string, TurnSummary[]][]) =>
      writeEndedCalls(own.hotline.store.db, calls.map(([id, turns], i) => ({ call: callSummary({ sessionId: id, endedAt: new Date(Date.now() - i * 60_000).toISOString(), turns }) })));
    await seed([
      ['demo-1', onDemo()],
      ['demo-2', onDemo()],
    ]);
    const cookie = await logIn();
    const onlyDemo = await (await get('/dashboard/calls', cookie)).text();
    expect(costCell(onlyDemo, 'demo-1')).toBe('<span class="demo" title="the built-in demo model answered: no cost">demo</span>');
    expect(onlyDemo).toContain('LLM cost of all 2 calls that match: none — <span class="demo" id="cost-demo" title="the built-in demo model answered: no cost">2 demo calls (no cost)</span></p>');
    expect(onlyDemo).not.toContain('class="warning"');

    await seed([
      ['priced', turnsCosting([0.5])],
      ['unpriced', turnsCosting([null])],
    ]);
    const mixed = await (await get('/dashboard/calls', cookie)).text();
    expect(mixed).toMatch(
      /LLM cost of all 4 calls that match: <strong id="cost-sum">\$0\.500<\/strong> for 1 of them; <span class="warning" id="cost-unknown">1 call with no known cost \(—\) is not in the sum<\/span> <span class="muted">\(.+?\)<\/span>; <span class="demo" id="cost-demo"[^>]*>2 demo calls \(no cost\)<\/span><\/p>/,
    );
    expect(await (await get('/dashboard/calls/demo-1', cookie)).text()).toContain(
      '<dd class="cost demo" id="call-cost">demo <span class="muted">(the built-in demo model: no cost)</span></dd>',
    );
  });
});

describe('live', () => {
  test('a call in progress at its story\'s address: the conversation so far and the latest words; once ended, its story', async () => {
    await start();
    const cookie = await logIn();
    const service = await calls.connect();
    service.start({ from_phone_number: '4915112345678' });
    await service.nextOfType('speak');
    service.say(`hello ${HOSTILE}`);
    await service.next((a) => a.text === 'Sure.');
    const address = `/dashboard/calls/${encodeURIComponent(service.sessionId)}`;
    // The reply is written once it has played (the fake service reports its end).
    await expect.poll(async () => (await (await get(address, cookie)).text()).includes('<p>Sure.</p>')).toBe(true);
    const res = await get(address, cookie);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('in progress');
    expect(page).toContain(`data-session="${service.sessionId}"`);
    expect(page).toContain('4915•••••••78');
    expect(page).not.toContain('4915112345678');
    expect(page).toContain('hello &lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain('<q class="agent-said">Sure.</q>');
    expect(page).toContain('src="../assets/call-live.js"');
    expect((await get('/dashboard/assets/call-live.js', cookie, '*/*')).status).toBe(200);

    await sayGoodbye(service);
    const story = await (await get(address, cookie)).text();
    expect(story).not.toContain('in progress');
    expect(story).toContain('Where the time went');
  });

  test('the event stream: a snapshot, then the call as it starts, speaks and ends, its number masked', async () => {
    await start();
    const cookie = await logIn();
    const controller = new AbortController();
    const res = await fetch(`${env!.hotline.url}/dashboard/live`, { headers: { cookie, accept: 'text/event-stream' }, signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = eventsOf(res.body!);
    expect(await events.next('snapshot')).toEqual([]);

    const service = await calls.connect();
    service.start({ from_phone_number: '4915112345678' });
    const started = (await events.nextWith('update', (u) => updateOf(u).calls.length > 0)) as Update;
    expect(started.calls[0]).toMatchObject({ sessionId: service.sessionId, number: '4915•••••••78', direction: 'inbound' });
    expect(JSON.stringify(started)).not.toContain('4915112345678');
    await service.nextOfType('speak');
    service.say('bye');
    await events.nextWith('update', (u) => updateOf(u).calls.some((c) => c.callerSaid === 'bye'));
    await service.nextOfType('hangup');
    service.end('hangup');
    const ended = await events.nextWith('update', (u) => updateOf(u).ended.length > 0);
    expect(updateOf(ended).ended).toEqual([service.sessionId]);
    controller.abort();
  });
});

interface Update {
  calls: { sessionId: string; number: string; phase: string; callerSaid: string }[];
  ended: string[];
}
const updateOf = (value: unknown): Update => value as Update;

describe('the waterfall\'s time axis', () => {
  test('round steps of 1, 2 or 5 × 10ⁿ ms from 0, four or five of them, ending on the first tick at or past the longest turn', () => {
    expect(timeAxis(741)).toEqual({ scale: 800, ticks: [0, 200, 400, 600, 800] });
    expect(timeAxis(1000)).toEqual({ scale: 1000, ticks: [0, 500, 1000] });
    expect(timeAxis(2_950)).toEqual({ scale: 3000, ticks: [0, 1000, 2000, 3000] });
    expect(timeAxis(12_345)).toEqual({ scale: 15_000, ticks: [0, 5000, 10_000, 15_000] });
    expect(timeAxis(3)).toEqual({ scale: 3, ticks: [0, 1, 2, 3] });
    expect(timeAxis(0.4).ticks[0]).toBe(0);
    expect(timeAxis(0.4).scale).toBeGreaterThan(0);
  });
});
