/**
 * When Hotline itself ends a call — the caller went silent, or Hotline shuts
 * down — the caller hears why and the line is put down properly; and a call
 * belongs to the connection that started it.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { testCalls, type ConnectOptions } from './helpers/test-calls.js';
import { lastUserText } from './helpers/scripts.js';

const calls = testCalls({ playback: { kind: 'auto', msPerChar: 0.2 } });
let env: TestHotline;
const connect = (options: ConnectOptions = {}): Promise<FakeVoiceService> => calls.connect(options);

async function started(options: ConnectOptions = {}): Promise<FakeVoiceService> {
  const client = await connect(options);
  client.start();
  await client.nextOfType('speak');
  return client;
}

const echo = (request: ChatRequestBody) => ({ content: `You said ${lastUserText(request)}.` });

async function transcriptEnd(sessionId: string): Promise<unknown> {
  const lines = (await readFile(path.join(env.transcriptsDir, transcriptFileName(sessionId)), 'utf8')).trim().split('\n');
  return (JSON.parse(lines.at(-1)!) as { reason?: unknown }).reason;
}

describe('a call silent for too long', () => {
  test('hears a goodbye, then the hangup, then the socket closes', async () => {
    env = await calls.start(echo, { CALL_IDLE_TIMEOUT_MS: '300' });
    const service = await started();
    const goodbye = await service.nextOfType('speak');
    expect(goodbye.text).toMatch(/haven't heard from you/);
    const hangup = await service.nextOfType('hangup');
    expect(hangup.receivedAt).toBeGreaterThan(goodbye.receivedAt);
    expect(await service.closed).toBe(1000);
    expect(env.hotline.registry.size).toBe(0);
    // The transcript closes after the call has left the registry: read it once the call is recorded.
    await env.hotline.registry.whenRecorded();
    expect(await transcriptEnd(service.sessionId)).toBe('idle_timeout');
  });
});

describe('shutdown', () => {
  test('callers still on the line are told and transferred to TRANSFER_TARGET before the deadline', async () => {
    env = await calls.start(echo, { SHUTDOWN_NOTICE_MS: '2000' });
    const service = await started();
    const shutdown = env.hotline.shutdown(3000);
    expect((await service.nextOfType('speak')).text).toMatch(/hand this call over/);
    expect(await service.nextOfType('transfer')).toMatchObject({ target: '4930999999' });
    expect(await service.closed).toBe(1000);
    await shutdown;
    expect(await transcriptEnd(service.sessionId)).toBe('shutdown');
  });

  test('without TRANSFER_TARGET they hear a goodbye and are hung up on; webhook calls get both in their answers', async () => {
    env = await calls.start(echo, { SHUTDOWN_NOTICE_MS: '5000', TRANSFER_TARGET: '' });
    const service = await started();
    const post = async (body: unknown): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${env.hotline.url}/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
    };
    const id = randomUUID();
    expect((await post({ type: 'session_start', session: { id, direction: 'inbound' } })).status).toBe(200);

    const shutdown = env.hotline.shutdown(6000);
    expect((await service.nextOfType('speak')).text).toMatch(/have to end this call/);
    await service.nextOfType('hangup');
    // The webhook call learns it with the answers to its next events.
    expect(await post({ type: 'assistant_speech_ended', session: { id } })).toMatchObject({
      status: 200,
      body: { type: 'speak', text: expect.stringMatching(/have to end this call/) },
    });
    expect(await post({ type: 'assistant_speech_ended', session: { id } })).toMatchObject({ status: 200, body: { type: 'hangup' } });
    await shutdown;
  });
});

describe('a call belongs to the connection that started it', () => {
  test('another connection cannot speak for it, nor end it by closing', async () => {
    env = await calls.start(echo);
    const owner = await started();
    const intruder = await connect({ sessionId: owner.sessionId });
    intruder.say('transfer me to my friend');
    intruder.send({ type: 'session_end', session: { id: owner.sessionId } });
    await intruder.close();
    owner.say('hello');
    expect((await owner.nextOfType('speak')).text).toBe('You said hello.');
    expect(intruder.actions).toEqual([]);
    expect(env.llm.requests.map((r) => lastUserText(r.body))).toEqual(['hello']);
  });

  test('once the owner dropped, the service may reconnect and carry on with the call', async () => {
    env = await calls.start(echo, { WS_RECONNECT_GRACE_MS: '5000' });
    const first = await started();
    // No close handshake: the connection broke.
    first.socket.terminate();
    const second = await connect({ sessionId: first.sessionId });
    second.say('are you still there');
    expect((await second.nextOfType('speak')).text).toBe('You said are you still there.');
    expect(env.hotline.registry.size).toBe(1);
  });

  test('a dropped call that nobody reconnects ends after the grace', async () => {
    env = await calls.start(echo, { WS_RECONNECT_GRACE_MS: '200' });
    const first = await started();
    first.socket.terminate();
    await expect.poll(() => env.hotline.registry.size).toBe(0);
    await env.hotline.registry.whenRecorded();
    expect(await transcriptEnd(first.sessionId)).toBe('socket_closed');
  });
});
