import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import type { CallRegistry } from '../src/call/call-registry.js';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { Metrics } from '../src/telemetry/metrics.js';
import { createHttpApp } from '../src/transport/http-app.js';
import { compileProxyTrust } from '../src/transport/auth.js';
import { AccessLimits, FailureBudget, RateLimit } from '../src/transport/rate-limit.js';
import type { WebhookCalls } from '../src/transport/webhook-calls.js';
import { webhookRouter } from '../src/transport/webhook.js';
import { upgradeStatus } from './helpers/upgrade-status.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText, userTexts } from './helpers/scripts.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';

const GREETING = 'Hello, thanks for calling! How can I help you today?';

let env: TestHotline | undefined;

afterEach(async () => {
  if (env) {
    expect(env.llm.requests.map((r) => r.validationError).filter(Boolean)).toEqual([]);
    await env.close();
  }
  env = undefined;
});

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
  text: string;
}

async function post(event: unknown, headers: Record<string, string> = {}, url = `${env!.hotline.url}/webhook`): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof event === 'string' ? event : JSON.stringify(event),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

function caller(id = randomUUID()) {
  const session = { id };
  return {
    id,
    start: () => post({ type: 'session_start', session: { ...session, direction: 'inbound', from_phone_number: '4915112345678', to_phone_number: '4930123456' } }),
    say: (text: string, bargedIn = false) => post({ type: 'user_speak', session, text, barged_in: bargedIn }),
    spoke: (text: string) => post({ type: 'assistant_speak', session, text, duration_ms: 500, speech_started_at: Date.now() }),
    ended: () => post({ type: 'assistant_speech_ended', session }),
    end: () => post({ type: 'session_end', session, reason: 'hangup' }),
  };
}

const twoSentences = 'We open at nine. We close at six.';

describe('webhook conversation', () => {
  test('WEBHOOK_REPLY=whole: greeting, a whole reply in one speak, 204 with nothing pending, 204 after session_end but for a new start', async () => {
    env = await startTestHotline(scriptByUserText({ 'When are you open?': { content: twoSentences } }), { WEBHOOK_REPLY: 'whole' });
    const c = caller();
    expect(await c.start()).toMatchObject({ status: 200, body: { type: 'speak', session_id: c.id, text: GREETING } });
    expect(await c.ended()).toMatchObject({ status: 204, text: '' });
    expect(await c.say('When are you open?')).toMatchObject({ status: 200, body: { type: 'speak', text: twoSentences } });
    expect((await c.spoke(twoSentences)).status).toBe(204);
    expect((await c.ended()).status).toBe(204);
    expect((await c.end()).status).toBe(204);
    expect((await c.say('Hello?')).status).toBe(204);
    expect(env.llm.requests).toHaveLength(1);
    // The service used the id again: a new call, greeted, which the old one's late events never reach.
    expect(await c.start()).toMatchObject({ status: 200, body: { type: 'speak', text: GREETING } });
  });

  test('a hangup after speech is the answer to the assistant_speech_ended that follows', async () => {
    env = await startTestHotline(
      scriptByUserText({ Bye: { content: 'Thanks for calling. Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] } }),
      { WEBHOOK_REPLY: 'whole' },
    );
    const c = caller();
    await c.start();
    await c.ended();
    expect(await c.say('Bye')).toMatchObject({ status: 200, body: { type: 'speak', text: 'Thanks for calling. Goodbye!' } });
    expect((await c.spoke('Thanks for calling. Goodbye!')).status).toBe(204);
    expect(await c.ended()).toMatchObject({ status: 200, body: { type: 'hangup', session_id: c.id } });
  });

  test('a transfer chosen without speaking is the answer to the user_speak itself', async () => {
    env = await startTestHotline(scriptByUserText({ Sales: { toolCalls: [{ name: 'transfer', arguments: '{"target":"sales"}' }] } }));
    const c = caller();
    await c.start();
    await c.ended();
    expect(await c.say('Sales')).toMatchObject({ status: 200, body: { type: 'transfer', target: '4930111111' } });
  });

  test('a newer user_speak supersedes one still generating: the older stream is aborted and answered 204', async () => {
    env = await startTestHotline(
      scriptByUserText({ 'I need': { content: 'Thinking hard about that.', ttftMs: 300 }, 'a taxi': { content: 'A taxi, sure.' } }),
    );
    const c = caller();
    await c.start();
    const older = c.say('I need');
    const firstRequest = await env.llm.nextRequest();
    const newer = c.say('a taxi');
    expect(await older).toMatchObject({ status: 204 });
    expect(await newer).toMatchObject({ status: 200, body: { text: 'A taxi, sure.' } });
    expect(await firstRequest.ended).toBe('aborted');
  });

  test('a retry of an unanswered event starts no second turn; both copies get the answer', async () => {
    env = await startTestHotline(scriptByUserText({ Hello: { content: 'Hi there.', ttftMs: 100 } }));
    const c = caller();
    expect(await c.start()).toMatchObject({ status: 200, body: { type: 'speak' } });
    // The start again after its greeting went out, with no transfer sent: a redelivery, not a new greeting.
    expect(await c.start()).toMatchObject({ status: 204 });
    const event = { type: 'user_speak', session: { id: c.id }, text: 'Hello' };
    const [a, b] = await Promise.all([post(event), post(event)]);
    expect(a).toMatchObject({ status: 200, body: { text: 'Hi there.' } });
    expect(b).toMatchObject({ status: 200, body: { text: 'Hi there.' } });
    expect(env.llm.requests).toHaveLength(1);
  });

  test('the same words again after the answer went out are a new turn, answered anew', async () => {
    let turn = 0;
    env = await startTestHotline(() => ({ content: turn++ === 0 ? 'Shall I book it?' : 'Booked for Monday.' }));
    const c = caller();
    await c.start();
    expect(await c.say('yes')).toMatchObject({ status: 200, body: { text: 'Shall I book it?' } });
    // No playback events in between: the answer itself is what happened.
    expect(await c.say('yes')).toMatchObject({ status: 200, body: { text: 'Booked for Monday.' } });
    expect(env.llm.requests).toHaveLength(2);
    expect(userTexts(env.llm.requests[1]!.body)).toEqual(['yes', 'yes']);
  });

  test('WEBHOOK_REPLY=sentences: the first sentence at once, the rest with the next assistant_speech_ended', async () => {
    const reply = 'First things first. Then the second part. And a third one.';
    env = await startTestHotline(
      scriptByUserText({ Go: { content: reply, tokenDelayMs: 20 } }),
      { WEBHOOK_REPLY: 'sentences' },
    );
    const c = caller();
    await c.start();
    await c.ended();
    expect(await c.say('Go')).toMatchObject({ status: 200, body: { text: 'First things first.' } });
    const request = env.llm.requests[0]!;
    // Answered while the LLM was still streaming.
    expect(request.tokens.length).toBeLessThan(8);
    await c.spoke('First things first.');
    const rest: string[] = [];
    for (;;) {
      const next = await c.ended();
      if (next.status === 204) break;
      rest.push(String(next.body?.text));
    }
    expect(['First things first.', ...rest].join(' ')).toBe(reply);
  });
});

describe('shared secret, errors and limits', () => {
  test('WEBHOOK_SECRET: requests without the right X-API-TOKEN get 401 {error}', async () => {
    env = await startTestHotline(scriptByUserText({}), { WEBHOOK_SECRET: 's3cret-value' });
    const event = { type: 'session_start', session: { id: 'auth-1' } };
    expect(await post(event)).toMatchObject({ status: 401, body: { error: expect.any(String) } });
    expect(await post(event, { 'X-API-TOKEN': 'wrong' })).toMatchObject({ status: 401 });
    expect(await post(event, { 'X-API-Key': 's3cret-value' })).toMatchObject({ status: 401 });
    expect(await post(event, { 'X-Api-Token': 's3cret-value' })).toMatchObject({ status: 200, body: { text: GREETING } });
  });

  test('the error contract: 400, 204, 413, 415, 405 — JSON bodies, never a stack trace', async () => {
    env = await startTestHotline(scriptByUserText({}), { WEBHOOK_MAX_BYTES: '2048' });
    const cases: [unknown, number][] = [
      ['{not json', 400],
      [{ type: 'user_speak' }, 400],
      [{ type: 'user_speak', session: {} }, 400],
      [{ type: 'user_speak', session: { id: 'x' }, text: 42 }, 400],
      [{ type: 'dtmf_received', session: { id: 'x' }, digit: '55' }, 400],
      // No type, or one this version does not know: ignored, as newer services add events.
      [{ session: { id: 'x' } }, 204],
      [{ type: 'call_recording_ready', session: { id: 'x' } }, 204],
      [{ type: 'user_speak', session: { id: 'x' }, text: 'x'.repeat(3000) }, 413],
    ];
    for (const [event, status] of cases) {
      const answer = await post(event);
      expect(answer.status, JSON.stringify(event).slice(0, 60)).toBe(status);
      if (status >= 400) {
        expect(Object.keys(answer.body ?? {})).toEqual(['error']);
        expect(answer.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
      }
    }
    const plain = await fetch(`${env.hotline.url}/webhook`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(plain.status).toBe(415);
    expect(await plain.json()).toEqual({ error: expect.any(String) });
    expect((await fetch(`${env.hotline.url}/webhook`)).status).toBe(405);
  });

  test('anything unexpected is a 500 with a fixed message, logged under the session id', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const failing = { answer: () => { throw new Error('boom at secret place'); } } as unknown as WebhookCalls;
    const registry = { size: 0, canAccept: true, isAccepting: true, get: () => undefined, isLate: () => false } as unknown as CallRegistry;
    const metrics = new Metrics();
    const app = createHttpApp({
      registry,
      metrics,
      logger,
      llm: { mode: 'remote', model: 'm' },
      routers: [
        webhookRouter({
          registry,
          metrics,
          calls: failing,
          logger,
          secret: undefined,
          maxBytes: 1024,
          limits: new AccessLimits(new RateLimit(0), new FailureBudget(0)),
          proxyTrust: compileProxyTrust(false),
        }),
      ],
      proxyTrust: compileProxyTrust(false),
      metricsToken: undefined,
      gate: { failures: new FailureBudget(0), proxyTrust: compileProxyTrust(false) },
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const answer = await post({ type: 'session_start', session: { id: 'sess-500' } }, {}, `http://127.0.0.1:${port}/webhook`);
    server.close();
    expect(answer).toEqual({ status: 500, body: { error: 'internal error' }, text: '{"error":"internal error"}' });
    expect(lines.join('')).toMatch(/"sessionId":"sess-500"/);
    expect(lines.join('')).toMatch(/boom at secret place/);
  });

  test('rate limits per address: webhook requests and WebSocket upgrades get 429', async () => {
    env = await startTestHotline(scriptByUserText({}), { RATE_LIMIT_WEBHOOK_PER_MINUTE: '2', RATE_LIMIT_WS_PER_MINUTE: '1' });
    const event = { type: 'assistant_speech_ended', session: { id: 'rl' } };
    expect((await post(event)).status).toBe(204);
    expect((await post(event)).status).toBe(204);
    expect(await post(event)).toMatchObject({ status: 429, body: { error: expect.any(String) } });
    const first = await FakeVoiceService.connect(env.hotline.wsUrl);
    expect(await upgradeStatus(env.hotline.wsUrl)).toBe(429);
    await first.close();
  });
});

describe('WebSocket authentication', () => {
  test('WS_TOKEN: ?token=, X-API-TOKEN or Authorization: Bearer; anything else is refused with 401', async () => {
    env = await startTestHotline(scriptByUserText({}), { WS_TOKEN: 'tok-123' });
    const url = env.hotline.wsUrl;
    expect(await upgradeStatus(url)).toBe(401);
    expect(await upgradeStatus(`${url}?token=nope`)).toBe(401);
    expect(await upgradeStatus(url, { authorization: 'Basic tok-123' })).toBe(401);
    expect(await upgradeStatus(`${url}?token=tok-123`)).toBe(101);
    expect(await upgradeStatus(url, { 'X-API-TOKEN': 'tok-123' })).toBe(101);
    expect(await upgradeStatus(url, { Authorization: 'Bearer tok-123' })).toBe(101);
    expect(env.hotline.registry.size).toBe(0);
  });
});

describe('one core, two transports', () => {
  test('the same conversation over webhook and over WebSocket leaves the same transcript', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'Do you deliver?': { content: 'Yes, we deliver. It takes two days.' },
        'Great, bye': { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] },
      }),
    );
    const c = caller();
    await c.start();
    await c.ended();
    await c.say('Do you deliver?');
    await c.ended();
    await c.say('Great, bye');
    expect(await c.ended()).toMatchObject({ body: { type: 'hangup' } });
    await c.end();

    const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.1 } });
    service.start();
    await service.nextOfType('speak');
    service.say('Do you deliver?');
    await service.next((a) => a.text === 'It takes two days.');
    service.say('Great, bye');
    await service.nextOfType('hangup');
    service.end('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.endAll('flush');
    await service.close();

    const read = async (id: string) =>
      (await readFile(path.join(env!.transcriptsDir, transcriptFileName(id)), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => {
          const { ts: _ts, session_id: sessionId, call_id: callId, ...rest } = JSON.parse(line) as Record<string, unknown>;
          // Every line says whose call it is; a call's start its call id too (one of its own for each call).
          expect(sessionId).toBe(id);
          if (rest.text === 'session_start') expect(callId).toMatch(/^[0-9a-f-]{36}$/);
          return rest;
        });
    const overWebhook = await read(c.id);
    expect(overWebhook.map((l) => l.role)).toEqual(['event', 'assistant', 'user', 'assistant', 'user', 'assistant', 'tool', 'event']);
    expect(await read(service.sessionId)).toEqual(overWebhook);
  });
});
