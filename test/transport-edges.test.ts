import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { WebSocket, type ClientOptions } from 'ws';
import { ConfigError } from '../src/errors.js';
import { compileProxyTrust, clientAddressOf } from '../src/transport/auth.js';
import { FakeVoiceService, WebSocketRefusedError } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { upgradeStatus } from './helpers/upgrade-status.js';

let env: TestHotline | undefined;
const sockets: WebSocket[] = [];
const services: FakeVoiceService[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(services.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await env?.close();
  env = undefined;
});

async function hotline(vars: Record<string, string>): Promise<TestHotline> {
  env = await startTestHotline(scriptByUserText({ 'Are you there?': { content: 'Yes, still here.' } }), vars);
  return env;
}

/** A WebSocket that opens and then says nothing: no session_start, ever. */
async function openIdle(url: string, options: ClientOptions = {}): Promise<WebSocket> {
  const ws = new WebSocket(url, options);
  sockets.push(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
    ws.once('error', reject);
  });
  return ws;
}

function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })));
}

async function connect(url: string): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(url, { playback: { kind: 'auto', msPerChar: 0.2 } });
  services.push(service);
  return service;
}

/** Status and body of a refused upgrade, or 101 and no body when it opened. */
async function upgrade(url: string): Promise<{ status: number; body?: unknown }> {
  try {
    services.push(await FakeVoiceService.connect(url));
    return { status: 101 };
  } catch (error) {
    if (!(error instanceof WebSocketRefusedError)) throw error;
    return { status: error.status, body: JSON.parse(error.body) };
  }
}

async function post(path: string, event: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${env!.hotline.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(event),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function statuses(count: number, request: (i: number) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(await request(i));
  return out;
}

const nothingPending = (id = 'no-such-call') => ({ type: 'assistant_speech_ended', session: { id } });

describe('idle WebSockets', () => {
  test('every open socket counts against MAX_CALLS: idle ones beyond it get 503 while the limit holds', async () => {
    const { hotline: h } = await hotline({ MAX_CALLS: '20' });
    const idle = await Promise.all(Array.from({ length: 20 }, () => openIdle(h.wsUrl)));
    expect(await statuses(5, () => upgradeStatus(h.wsUrl))).toEqual([503, 503, 503, 503, 503]);
    expect(await upgrade(h.wsUrl)).toEqual({ status: 503, body: { error: 'too many calls: try again later' } });
    expect(await post('/webhook', { type: 'session_start', session: { id: 'webhook-call' } })).toMatchObject({ status: 503 });
    expect((await fetch(`${h.url}/readyz`)).status).toBe(503);

    // The place an idle socket holds becomes its call's when it starts one.
    idle[0]!.send(JSON.stringify({ type: 'session_start', session: { id: 'from-idle', direction: 'inbound' } }));
    const greeting = await new Promise<string>((resolve) => idle[0]!.once('message', (data) => resolve(String(data))));
    expect(JSON.parse(greeting)).toMatchObject({ type: 'speak', session_id: 'from-idle' });
    expect(h.registry.size).toBe(1);
    expect(await upgradeStatus(h.wsUrl)).toBe(503);

    // A socket that goes away gives its place back.
    idle[1]!.close();
    await expect.poll(() => upgradeStatus(h.wsUrl)).toBe(101);
  });

  test('a socket that starts no call within WS_START_TIMEOUT_MS is closed with 1008; a call on another socket goes on', async () => {
    const { hotline: h } = await hotline({ WS_START_TIMEOUT_MS: '200' });
    const idle = await openIdle(h.wsUrl);
    const idleClosed = closeOf(idle);
    const service = await connect(h.wsUrl);
    service.start();
    await service.nextOfType('speak');

    expect(await idleClosed).toEqual({ code: 1008, reason: 'no session_start in time' });
    service.say('Are you there?');
    expect((await service.nextOfType('speak')).text).toBe('Yes, still here.');
    expect(service.socket.readyState).toBe(WebSocket.OPEN);
  });

  test('a socket whose call has ended is idle again: it must start another call in time', async () => {
    const { hotline: h } = await hotline({ WS_START_TIMEOUT_MS: '200', MAX_CALLS: '1' });
    const service = await connect(h.wsUrl);
    service.start();
    await service.nextOfType('speak');
    service.end();
    await expect.poll(() => h.registry.size).toBe(0);
    // Idle again, it holds the only place…
    expect(await upgradeStatus(h.wsUrl)).toBe(503);
    // …until it is closed for starting nothing.
    expect(await service.closed).toBe(1008);
  });

  test('a peer that stops answering pings is dropped and its call ended', async () => {
    const { hotline: h } = await hotline({ WS_PING_INTERVAL_MS: '50' });
    // Like a peer whose host vanished: the TCP connection stays, nothing answers.
    const silent = await openIdle(h.wsUrl, { autoPong: false });
    const dropped = closeOf(silent);
    silent.send(JSON.stringify({ type: 'session_start', session: { id: 'silent-peer', direction: 'inbound' } }));
    await new Promise((resolve) => silent.once('message', resolve));
    expect(h.registry.get('silent-peer')).toBeDefined();

    // Terminated, not closed: there is no one to hold a close handshake with.
    expect((await dropped).code).toBe(1006);
    await expect.poll(() => h.registry.get('silent-peer')).toBeUndefined();
  });

  test('with pings on, a peer that answers them keeps its call', async () => {
    const { hotline: h } = await hotline({ WS_PING_INTERVAL_MS: '100' });
    const service = await connect(h.wsUrl);
    service.start();
    await service.nextOfType('speak');
    // Several rounds, each of which would have dropped a socket that left the previous ping unanswered.
    await new Promise<void>((resolve) => {
      let pings = 0;
      service.socket.on('ping', () => {
        if (++pings === 4) resolve();
      });
    });
    service.say('Are you there?');
    expect((await service.nextOfType('speak')).text).toBe('Yes, still here.');
    expect(h.registry.size).toBe(1);
  });
});

describe('client address behind a proxy', () => {
  test('X-Forwarded-For is read from the right, as far as TRUST_PROXY trusts it', async () => {
    const settings = {
      off: compileProxyTrust(false),
      loopback: compileProxyTrust(['loopback']),
      loopbackAndEdge: compileProxyTrust(['loopback', '203.0.113.0/24']),
      everyHopTrusted: compileProxyTrust(['loopback', '203.0.113.0/24', '10.0.0.0/8']),
    };
    const server = createServer((req, res) => {
      res.end(JSON.stringify(Object.fromEntries(Object.entries(settings).map(([name, trust]) => [name, clientAddressOf(req, trust)]))));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-forwarded-for': '6.6.6.6, 10.0.0.5, 203.0.113.7' } });
    expect(await res.json()).toEqual({
      off: '127.0.0.1',
      loopback: '203.0.113.7',
      loopbackAndEdge: '10.0.0.5',
      everyHopTrusted: '6.6.6.6',
    });
  });

  test('an address proxy-addr cannot read stops the start with a ConfigError naming TRUST_PROXY', () => {
    expect(() => compileProxyTrust(['10.0.0.1', '999.1.1.1'])).toThrow(ConfigError);
    expect(() => compileProxyTrust(['999.1.1.1'])).toThrow(/^TRUST_PROXY: .*999\.1\.1\.1/);
  });

  test('TRUST_PROXY=loopback: a varied leftmost X-Forwarded-For does not escape the webhook limit; the proxy-appended entry is the key', async () => {
    await hotline({ TRUST_PROXY: 'loopback', RATE_LIMIT_WEBHOOK_PER_MINUTE: '2' });
    // What a proxy forwards: whatever the client wrote, then the address the proxy saw.
    const spoofed = (i: number) => ({ 'x-forwarded-for': `10.9.9.${i}, 203.0.113.7` });
    expect(await statuses(4, async (i) => (await post('/webhook', nothingPending(), spoofed(i))).status)).toEqual([204, 204, 429, 429]);
    // Another client behind the same proxy has a budget of its own.
    expect((await post('/webhook', nothingPending(), { 'x-forwarded-for': '10.9.9.1, 203.0.113.8' })).status).toBe(204);
  });

  test('TRUST_PROXY=loopback: the same for WebSocket upgrades', async () => {
    const { hotline: h } = await hotline({ TRUST_PROXY: 'loopback', RATE_LIMIT_WS_PER_MINUTE: '1' });
    const spoofed = (i: number) => ({ 'x-forwarded-for': `10.9.9.${i}, 203.0.113.7` });
    expect(await statuses(3, (i) => upgradeStatus(h.wsUrl, spoofed(i)))).toEqual([101, 429, 429]);
    expect(await upgradeStatus(h.wsUrl, { 'x-forwarded-for': '10.9.9.1, 203.0.113.8' })).toBe(101);
  });
});

describe('failed authentication is counted apart', () => {
  // Behind a proxy on loopback (TRUST_PROXY=loopback): the address it appends is the client. The outsider guesses from one,
  // the service talks from another (the same address for both: test/auth-failures.test.ts).
  const outsider = { 'x-forwarded-for': '198.51.100.66' };
  const service = { 'x-forwarded-for': '203.0.113.7' };

  test('webhook: outsiders get 401 then 429, even with the right secret; the service still gets answers', async () => {
    await hotline({ TRUST_PROXY: 'loopback', WEBHOOK_SECRET: 'hook-secret', RATE_LIMIT_WEBHOOK_PER_MINUTE: '5', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' });
    const guesses = await statuses(12, async (i) => (await post('/webhook', nothingPending(), i % 2 ? { ...outsider, 'x-api-token': 'guess' } : outsider)).status);
    expect(guesses).toEqual([401, 401, 401, ...Array<number>(9).fill(429)]);
    expect((await post('/webhook', nothingPending(), { ...outsider, 'x-api-token': 'hook-secret' })).status).toBe(429);
    const authenticated = { ...service, 'x-api-token': 'hook-secret' };
    expect(await statuses(5, async () => (await post('/webhook', nothingPending(), authenticated)).status)).toEqual([204, 204, 204, 204, 204]);
    // The service's own budget still applies to the service.
    expect(await post('/webhook', nothingPending(), authenticated)).toEqual({ status: 429, body: { error: 'too many requests' } });
  });

  test('WebSocket: outsiders get 401 then 429, even with the right token; the service still connects', async () => {
    const { hotline: h } = await hotline({ TRUST_PROXY: 'loopback', WS_TOKEN: 'ws-secret', RATE_LIMIT_WS_PER_MINUTE: '2', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' });
    const guesses = await statuses(8, (i) => upgradeStatus(i % 2 ? `${h.wsUrl}?token=guess` : h.wsUrl, outsider));
    expect(guesses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    expect(await upgradeStatus(h.wsUrl, { ...outsider, authorization: 'Bearer ws-secret' })).toBe(429);
    const authenticated = { ...service, authorization: 'Bearer ws-secret' };
    expect(await statuses(3, () => upgradeStatus(h.wsUrl, authenticated))).toEqual([101, 101, 429]);
  });
});

describe('GET /metrics', () => {
  test('METRICS_TOKEN set: Authorization: Bearer <token> required, else 401 {error}', async () => {
    const { hotline: h } = await hotline({ METRICS_TOKEN: 'scrape-me' });
    const wrong: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: 'scrape-me' }, { 'x-api-token': 'scrape-me' }];
    for (const headers of wrong) {
      const res = await fetch(`${h.url}/metrics`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
    const res = await fetch(`${h.url}/metrics`, { headers: { authorization: 'Bearer scrape-me' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^hotline_active_calls 0$/m);
  });

  test('METRICS_TOKEN unset: open', async () => {
    const { hotline: h } = await hotline({});
    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^hotline_active_calls 0$/m);
  });
});

describe('TRANSPORTS', () => {
  test('websocket only: POST /webhook is a 404 like any unknown path; calls come over the WebSocket', async () => {
    const { hotline: h } = await hotline({ TRANSPORTS: 'websocket' });
    const start = { type: 'session_start', session: { id: randomUUID(), direction: 'inbound' } };
    expect(await post('/webhook', start)).toEqual({ status: 404, body: { error: 'not found' } });
    expect(h.registry.size).toBe(0);
    const service = await connect(h.wsUrl);
    service.start();
    expect(await service.nextOfType('speak')).toMatchObject({ type: 'speak' });
  });

  test('webhook only: an upgrade to /ws is refused with 404 {error}; calls come over the webhook', async () => {
    const { hotline: h } = await hotline({ TRANSPORTS: 'webhook' });
    expect(await upgrade(h.wsUrl)).toEqual({ status: 404, body: { error: 'not found' } });
    const start = { type: 'session_start', session: { id: randomUUID(), direction: 'inbound' } };
    expect(await post('/webhook', start)).toMatchObject({ status: 200, body: { type: 'speak' } });
  });
});
