import { afterEach, describe, expect, test } from 'vitest';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';

let env: TestHotline | undefined;
let service: FakeVoiceService | undefined;

afterEach(async () => {
  await service?.close();
  await env?.close();
  env = undefined;
  service = undefined;
});

async function call(): Promise<FakeVoiceService> {
  service = await FakeVoiceService.connect(env!.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.5 } });
  service.start();
  await service.nextOfType('speak');
  return service;
}

describe('LLM faults', () => {
  test('429 or 5xx before anything was said: one quick retry, and the caller hears the answer', async () => {
    env = await startTestHotline((_request, { index }) => (index === 0 ? { status: 429 } : { content: 'Here you go.' }));
    const s = await call();
    s.say('Hello');
    expect((await s.nextOfType('speak')).text).toBe('Here you go.');
    expect(env.llm.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  test('a second failure is not retried again: the apology, and the call goes on', async () => {
    env = await startTestHotline((request) => (lastUserText(request) === 'Again' ? { content: 'Fine now.' } : { status: 503 }));
    const s = await call();
    s.say('Hello');
    expect((await s.nextOfType('speak')).text).toMatch(/^I'm sorry/);
    expect(env.llm.requests).toHaveLength(2);
    s.say('Again');
    expect((await s.nextOfType('speak')).text).toBe('Fine now.');
  });

  test('a stream that never ends is cut at LLM_TOTAL_TIMEOUT_MS: complete sentences, then the apology', async () => {
    env = await startTestHotline(() => ({ content: 'This sentence is complete. This one never ends because it goes on and on and on and on and on and on', tokenDelayMs: 60 }), {
      LLM_TOTAL_TIMEOUT_MS: '400',
    });
    const s = await call();
    s.say('Talk');
    expect((await s.nextOfType('speak')).text).toBe('This sentence is complete.');
    expect((await s.nextOfType('speak')).text).toMatch(/^I'm sorry/);
    expect(await env.llm.requests[0]!.ended).toBe('aborted');
  });

  test('LLM_MAX_FAILURES failures in a row: the call goes to TRANSFER_TARGET after the apology has played', async () => {
    env = await startTestHotline(() => ({ status: 400 }), { LLM_MAX_FAILURES: '2' });
    const s = await call();
    s.say('One');
    expect((await s.nextOfType('speak')).text).toMatch(/^I'm sorry/);
    s.say('Two');
    expect((await s.nextOfType('speak')).text).toMatch(/connect you with a colleague/);
    expect(await s.nextOfType('transfer')).toMatchObject({ target: '4930999999' });
  });

  test('without TRANSFER_TARGET it apologises and hangs up after the goodbye', async () => {
    env = await startTestHotline(() => ({ status: 400 }), { LLM_MAX_FAILURES: '1', TRANSFER_TARGET: '' });
    const s = await call();
    s.say('One');
    const goodbye = await s.nextOfType('speak');
    expect(goodbye.text).toMatch(/Goodbye\.$/);
    await s.nextOfType('hangup');
  });
});
