/**
 * Guessing a secret is slowed down on every edge that compares one: the webhook, the WebSocket
 * upgrade, the dashboard's login, the admin API (/api/calls, /api/campaigns, /api/reports) and
 * /metrics. One failure budget per client address (RATE_LIMIT_AUTH_FAILURES_PER_MINUTE) is looked
 * at before anything is compared: an address that has run out is refused with 429 even when it
 * finally presents the right secret, so a guess made then learns nothing. The real service and the
 * real admin, from other addresses, are unaffected.
 *
 * Real HTTP and WebSocket clients from real source addresses of the loopback range (127.0.0.2,
 * 127.0.0.3, …: Linux answers the whole 127/8), against a real Hotline.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { upgradeStatus } from './helpers/upgrade-status.js';
import { RateLimit } from '../src/transport/rate-limit.js';

const SECRETS = {
  WEBHOOK_SECRET: 'webhook-secret-for-the-tests',
  WS_TOKEN: 'websocket-token-for-the-tests',
  ADMIN_TOKEN: 'admin-token-for-the-tests',
  METRICS_TOKEN: 'metrics-token-for-the-tests',
};
const BUDGET = 3;

let env: TestHotline | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

async function hotline(vars: Record<string, string> = {}): Promise<TestHotline> {
  env = await startTestHotline(scriptByUserText({}), { ...SECRETS, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(BUDGET), ...vars });
  return env;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** An HTTP request from one source address of the loopback range. */
function httpFrom(from: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const url = new URL(path, env!.hotline.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: options.method ?? 'GET', headers: options.headers, localAddress: from },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The status of a WebSocket upgrade from one source address: 101 when it opens. */
function upgradeFrom(from: string, token: string): Promise<number> {
  return upgradeStatus(`${env!.hotline.wsUrl}?token=${encodeURIComponent(token)}`, {}, { localAddress: from });
}

/** Each edge: a request presenting `secret` from `from`, answered with a status; `ok` is what the right secret gets. */
interface Edge {
  name: string;
  ok: number;
  right: string;
  send(from: string, secret: string): Promise<number>;
}

const json = { 'content-type': 'application/json' };
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

const EDGES: Edge[] = [
  {
    name: 'POST /webhook (X-API-TOKEN)',
    ok: 204,
    right: SECRETS.WEBHOOK_SECRET,
    send: async (from, secret) =>
      (await httpFrom(from, '/webhook', { method: 'POST', headers: { ...json, 'x-api-token': secret }, body: JSON.stringify({ type: 'assistant_speech_ended', session: { id: 'nobody' } }) })).status,
  },
  { name: 'the WebSocket upgrade (?token=)', ok: 101, right: SECRETS.WS_TOKEN, send: upgradeFrom },
  {
    name: 'the dashboard login',
    ok: 303,
    right: SECRETS.ADMIN_TOKEN,
    send: async (from, secret) =>
      (await httpFrom(from, '/dashboard/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: secret }).toString() })).status,
  },
  {
    name: 'POST /api/calls/:id/hangup',
    // No such call: the token was right.
    ok: 404,
    right: SECRETS.ADMIN_TOKEN,
    send: async (from, secret) => (await httpFrom(from, '/api/calls/nobody/hangup', { method: 'POST', headers: bearer(secret) })).status,
  },
  {
    name: 'POST /api/calls',
    // An empty body is not a call: the token was right.
    ok: 400,
    right: SECRETS.ADMIN_TOKEN,
    send: async (from, secret) => (await httpFrom(from, '/api/calls', { method: 'POST', headers: { ...json, ...bearer(secret) }, body: '{}' })).status,
  },
  { name: 'GET /api/campaigns', ok: 200, right: SECRETS.ADMIN_TOKEN, send: async (from, secret) => (await httpFrom(from, '/api/campaigns', { headers: bearer(secret) })).status },
  {
    name: 'POST /api/reports/redeliver',
    // No report webhook configured: the token was right.
    ok: 409,
    right: SECRETS.ADMIN_TOKEN,
    send: async (from, secret) => (await httpFrom(from, '/api/reports/redeliver', { method: 'POST', headers: bearer(secret) })).status,
  },
  { name: 'GET /metrics (METRICS_TOKEN)', ok: 200, right: SECRETS.METRICS_TOKEN, send: async (from, secret) => (await httpFrom(from, '/metrics', { headers: bearer(secret) })).status },
];

async function statuses(count: number, request: (i: number) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(await request(i));
  return out;
}

describe('one failure budget per address, looked at before anything is compared', () => {
  test.each(EDGES)('$name: wrong secrets get 401 up to the budget, then 429, the right one too; another address is unaffected', async (edge) => {
    await hotline();
    const guesser = '127.0.0.2';
    expect(await statuses(BUDGET, (i) => edge.send(guesser, `guess-${i}`))).toEqual(Array(BUDGET).fill(401));
    expect(await edge.send(guesser, 'one more guess')).toBe(429);
    // The right secret from the guessing address is refused as well: nothing was compared.
    expect(await edge.send(guesser, edge.right)).toBe(429);
    // The real service, the real admin: elsewhere, and never held up by the guesser.
    expect(await edge.send('127.0.0.3', edge.right)).toBe(edge.ok);
    expect(await edge.send('127.0.0.3', edge.right)).toBe(edge.ok);
  });

  test('the budget is one for every edge: a guesser gains nothing by switching', async () => {
    await hotline();
    const guesser = '127.0.0.4';
    const [webhook, ws, login, api, campaigns, , , metrics] = EDGES as [Edge, Edge, Edge, Edge, Edge, Edge, Edge, Edge];
    expect(await webhook.send(guesser, 'a')).toBe(401);
    expect(await ws.send(guesser, 'b')).toBe(401);
    expect(await login.send(guesser, 'c')).toBe(401);
    for (const edge of [api, campaigns, metrics, webhook, ws, login]) expect(await edge.send(guesser, edge.right), edge.name).toBe(429);
  });

  test('a 429 says when to try again (Retry-After), and the dashboard says so in words', async () => {
    await hotline({ RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1' });
    expect((await httpFrom('127.0.0.5', '/api/campaigns', { headers: bearer('guess') })).status).toBe(401);
    const api = await httpFrom('127.0.0.5', '/api/campaigns', { headers: bearer(SECRETS.ADMIN_TOKEN) });
    expect(api.status).toBe(429);
    expect(Number(api.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(api.headers['retry-after'])).toBeLessThanOrEqual(60);
    const login = await httpFrom('127.0.0.5', '/dashboard/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.ADMIN_TOKEN }).toString(),
    });
    expect(login.status).toBe(429);
    expect(login.headers['set-cookie']).toBeUndefined();
  });

  test('RATE_LIMIT_AUTH_FAILURES_PER_MINUTE=0 turns the budget off: wrong tokens stay 401, the right one works', async () => {
    await hotline({ RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '0' });
    const api = EDGES[3]!;
    expect(await statuses(10, (i) => api.send('127.0.0.6', `guess-${i}`))).toEqual(Array(10).fill(401));
    expect(await api.send('127.0.0.6', api.right)).toBe(api.ok);
  });
});

describe('the request budget among replicas', () => {
  test('each of three replicas allows an address a third of the minute\'s requests, so together they allow them once; alone, one allows all', async () => {
    let replicas = 3;
    const limit = new RateLimit(9, () => replicas);
    const answers: boolean[] = [];
    for (let i = 0; i < 5; i++) answers.push(await limit.allow('10.0.0.1'));
    expect(answers).toEqual([true, true, true, false, false]);
    // Another address has its own count.
    expect(await limit.allow('10.0.0.2')).toBe(true);
    // The others gone: this one's share is the whole minute's budget again (9, of which 5 are spent).
    replicas = 1;
    const alone: boolean[] = [];
    for (let i = 0; i < 5; i++) alone.push(await limit.allow('10.0.0.1'));
    expect(alone).toEqual([true, true, true, true, false]);
  });
});
