/**
 * A person running Hotline steps into a call in progress — over the admin API
 * and on the dashboard: the call is handed to a colleague or ended, with a
 * line the caller hears first, over a real WebSocket.
 */
import { describe, expect, test } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import type { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';
import { testCalls } from './helpers/test-calls.js';

const ADMIN = 'operator-admin-token';
const STORY = 'Once upon a time there was a phone agent. It talked and talked. It never seemed to stop. On and on it went.';
const TRANSFER_LINE = "One moment please, I'll connect you with a colleague now.";
const GOODBYE_LINE = "I'm sorry, I have to end this call now. Thank you for calling. Goodbye.";

function script(request: ChatRequestBody): ScriptedReply {
  if (lastUserText(request) === 'Tell me a story') return { content: STORY, tokenDelayMs: 30 };
  return { content: 'Sure.' };
}

// Manual playback: a test says when a line has played.
const calls = testCalls({ playback: { kind: 'manual' } });
let env: TestHotline | undefined;

async function start(vars: Record<string, string> = {}): Promise<TestHotline> {
  env = await calls.start(script, { ADMIN_TOKEN: ADMIN, ...vars });
  return env;
}

/** A call in the middle of a long reply: its first sentence is playing (manual playback), the model still writing. */
async function talkingCall(): Promise<FakeVoiceService> {
  const service = await calls.connect();
  service.start({ from_phone_number: '4915112345678' });
  await service.nextOfType('speak');
  service.finishSpeech();
  service.say('Tell me a story');
  await service.next((a) => a.type === 'speak' && a.text === 'Once upon a time there was a phone agent.');
  return service;
}

async function api(path: string, body?: unknown, token = ADMIN): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${env!.hotline.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as unknown };
}

describe('the admin API', () => {
  test('transfer: playback stops, the caller hears operator-transfer.md, then the transfer; their words meanwhile do not call it off', async () => {
    await start();
    const service = await talkingCall();
    const seen: string[] = [];
    service.onAction((a) => seen.push(a.type === 'speak' ? `speak ${a.text}` : a.type));

    expect(await api(`/api/calls/${service.sessionId}/transfer`)).toEqual({ status: 202, json: { status: 'transferring' } });
    await service.next((a) => a.type === 'speak' && a.text === TRANSFER_LINE);
    // The story stops at once: the service is told to stop playing, and nothing more of it is sent.
    expect(seen).toEqual(['barge_in', `speak ${TRANSFER_LINE}`]);
    expect(await api(`/api/calls/${service.sessionId}/transfer`)).toMatchObject({ status: 409 });

    // The caller says something while the line plays: the operator's transfer still happens.
    service.say('Wait, what?');
    service.finishSpeech();
    const transfer = await service.nextOfType('transfer');
    expect(transfer).toMatchObject({ target: '4930999999' });
    expect(seen.filter((s) => s.startsWith('speak'))).toEqual([`speak ${TRANSFER_LINE}`]);

    // Connected: the service ends the session. The record says an operator handed the call over.
    service.end('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env!.hotline.registry.whenRecorded();
    await env!.hotline.reports.whenIdle();
    expect((await env!.hotline.reports.getCall(service.sessionId))?.call.endReason).toBe('operator_transferred');
  });

  test('a named target; a transfer nobody answers brings the call back, and it goes on', async () => {
    await start();
    const service = await talkingCall();
    expect(await api(`/api/calls/${service.sessionId}/transfer`, { target: 'nobody' })).toEqual({
      status: 409,
      json: {
        error:
          'no transfer target named "nobody": the named ones are sales, support (TRANSFER_TARGETS, or transfer_targets in system.md); ' +
          'without "target" the call goes to TRANSFER_TARGET',
      },
    });
    expect(await api(`/api/calls/${service.sessionId}/transfer`, { target: 'support' })).toEqual({ status: 202, json: { status: 'transferring' } });
    await service.next((a) => a.text === TRANSFER_LINE);
    service.finishSpeech();
    expect(await service.nextOfType('transfer')).toMatchObject({ target: '4930222222' });

    service.start();
    expect((await service.nextOfType('speak')).text).toMatch(/nobody is available/i);
    service.finishSpeech();
    service.say('Thanks anyway');
    expect((await service.nextOfType('speak')).text).toBe('Sure.');
  });

  test('hangup: playback stops, the caller hears operator-goodbye.md, then the hangup and the line closes', async () => {
    await start();
    const service = await talkingCall();
    expect(await api(`/api/calls/${service.sessionId}/hangup`)).toEqual({ status: 202, json: { status: 'ending' } });
    expect(await service.nextOfType('barge_in')).toBeDefined();
    expect((await service.nextOfType('speak')).text).toBe(GOODBYE_LINE);
    service.finishSpeech();
    await service.nextOfType('hangup');
    await service.closed;
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env!.hotline.registry.whenRecorded();
    await env!.hotline.reports.whenIdle();
    expect((await env!.hotline.reports.getCall(service.sessionId))?.call.endReason).toBe('operator_hung_up');
    expect(await api(`/api/calls/${service.sessionId}/hangup`)).toMatchObject({ status: 404 });
  });

  test('wrong token 401, no such call 404, a body that is not the schema 400, no TRANSFER_TARGET 409', async () => {
    await start({ TRANSFER_TARGET: '', TRANSFER_TARGETS: '' });
    // Reports sent again need somewhere to go.
    expect(await api('/api/reports/redeliver')).toMatchObject({ status: 409, json: { error: 'reports are not delivered anywhere: set REPORT_WEBHOOK_URL' } });
    expect((await api('/api/calls/x/hangup', undefined, 'wrong')).status).toBe(401);
    expect(await api('/api/calls/no-such-call/hangup')).toMatchObject({ status: 404, json: { error: 'no call in progress with this session id' } });
    const service = await talkingCall();
    expect((await api(`/api/calls/${service.sessionId}/transfer`, { target: 5 })).status).toBe(400);
    expect((await api(`/api/calls/${service.sessionId}/transfer`, { where: 'x' })).status).toBe(400);
    expect(await api(`/api/calls/${service.sessionId}/transfer`)).toEqual({
      status: 409,
      json: { error: 'no transfer target: TRANSFER_TARGET is not set; set it, or name one of the targets in "target" (none is named)' },
    });
    expect(await api(`/api/calls/${service.sessionId}/transfer`, { target: 'support' })).toMatchObject({ status: 409, json: { error: expect.stringMatching(/^no transfer target named "support": none is named/) } });
    // Nothing happened to the call: the story goes on.
    service.finishSpeech();
    await service.next((a) => a.text === 'It talked and talked.');
  });
});

describe('GET /api/calls', () => {
  test('lists the calls in progress with the session id to act on, numbers masked; an ended call is gone; the token is required', async () => {
    await start({ REPLICA_ID: 'hotline-1' });
    const list = async (token = ADMIN): Promise<{ status: number; json: unknown }> => {
      const res = await fetch(`${env!.hotline.url}/api/calls`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, json: (await res.json()) as unknown };
    };
    expect(await list()).toEqual({ status: 200, json: { calls: [] } });
    const service = await talkingCall();
    const { json } = await list();
    expect(json).toEqual({
      calls: [
        {
          sessionId: service.sessionId,
          direction: 'inbound',
          from: '4915•••••••78',
          to: expect.any(String),
          startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          phase: expect.stringMatching(/^(greeting|listening|thinking|speaking)$/),
          replica: 'hotline-1',
        },
      ],
    });
    expect(JSON.stringify(json)).not.toContain('4915112345678');
    // What it lists is what the other routes act on.
    expect(await api(`/api/calls/${service.sessionId}/hangup`)).toEqual({ status: 202, json: { status: 'ending' } });
    service.finishSpeech();
    await service.nextOfType('hangup');
    service.end('hangup');
    await expect.poll(async () => (await list()).json).toEqual({ calls: [] });
    expect((await list('wrong')).status).toBe(401);
  });

  test('is off, as the rest of the admin API, without ADMIN_TOKEN', async () => {
    env = await calls.start(script, {});
    const res = await fetch(`${env.hotline.url}/api/calls`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/^the admin API is off: this Hotline was started without ADMIN_TOKEN/) });
  });
});

describe('over the webhook', () => {
  test('the goodbye goes out with the answer to the service\'s next request, the hangup with the one after', async () => {
    await start();
    const post = async (body: unknown): Promise<unknown> => {
      const res = await fetch(`${env!.hotline.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return res.status === 204 ? undefined : ((await res.json()) as unknown);
    };
    const session = { id: 'webhook-operator-1' };
    expect(await post({ type: 'session_start', session })).toMatchObject({ type: 'speak' });
    const hangingUp = api(`/api/calls/${session.id}/hangup`);
    expect(await hangingUp).toEqual({ status: 202, json: { status: 'ending' } });
    const answers: unknown[] = [await post({ type: 'assistant_speech_ended', session })];
    while (!JSON.stringify(answers.at(-1) ?? {}).includes('"hangup"')) answers.push(await post({ type: 'assistant_speech_ended', session }));
    const actions = answers.flatMap((a) => (a === undefined ? [] : Array.isArray(a) ? a : [a])) as { type: string; text?: string }[];
    expect(actions.filter((a) => a.type === 'speak').map((a) => a.text)).toEqual([GOODBYE_LINE]);
    expect(actions.at(-1)?.type).toBe('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
  });
});

describe('the dashboard', () => {
  test('a call in progress can be handed over or ended from its page; the forms post to relative addresses', async () => {
    await start();
    const login = await fetch(`${env!.hotline.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const post = (path: string, form: Record<string, string> = {}) =>
      fetch(`${env!.hotline.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });

    const service = await talkingCall();
    const address = `/dashboard/calls/${encodeURIComponent(service.sessionId)}`;
    const page = await (await fetch(`${env!.hotline.url}${address}`, { headers: { cookie } })).text();
    expect(page).toContain(`action="${service.sessionId}/transfer"`);
    expect(page).toContain(`action="${service.sessionId}/hangup"`);
    // The default target and the named ones to choose from.
    expect(page).toContain('<option value="sales">sales</option>');

    // Without the cookie nothing happens to the call.
    const anonymous = await fetch(`${env!.hotline.url}${address}/hangup`, { method: 'POST', redirect: 'manual' });
    expect(anonymous.status).toBe(401);

    const handed = await post(`${address}/transfer`, { target: 'sales' });
    expect(handed.status).toBe(303);
    expect(handed.headers.get('location')).toBe(`../${encodeURIComponent(service.sessionId)}`);
    await service.next((a) => a.text === TRANSFER_LINE);
    const again = await post(`${address}/hangup`);
    // A hangup while the call is handed over is still a hangup: it was asked for.
    expect(again.status).toBe(303);
    await service.next((a) => a.text === GOODBYE_LINE);
    // The transfer's announcement cannot be cut; the goodbye plays after it, whole, then the hangup.
    service.finishSpeech();
    service.finishSpeech();
    await service.nextOfType('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    // Pressed as the call ended: back to the call's page, which says so (and shows the story once stored).
    const gone = await post(`${address}/transfer`);
    expect(gone.status).toBe(303);
    expect(gone.headers.get('location')).toBe(`../${encodeURIComponent(service.sessionId)}?was=ended`);
    const landed = await (await fetch(`${env!.hotline.url}${address}?was=ended`, { headers: { cookie } })).text();
    expect(landed).toContain('The call had already ended when you pressed the button');
    // An id that was never a call is still not done.
    const never = await post('/dashboard/calls/no-such-call/hangup');
    expect(never.status).toBe(404);
    expect(await never.text()).toContain('No call with this id');
  });
});
