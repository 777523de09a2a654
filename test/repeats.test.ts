/**
 * A caller may say the same thing twice; the service may deliver the same
 * event twice. Only the second is a duplicate: the same event again with
 * nothing else having happened in the call since.
 */
import { describe, expect, test } from 'vitest';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { testCalls, type ConnectOptions } from './helpers/test-calls.js';
import { lastUserText, userTexts } from './helpers/scripts.js';

const calls = testCalls({ playback: { kind: 'auto', msPerChar: 0.2 } });
let env: TestHotline;

async function connect(options: ConnectOptions = {}): Promise<FakeVoiceService> {
  const client = await calls.connect(options);
  client.start();
  await client.nextOfType('speak');
  return client;
}

describe('repetitions are words, redeliveries are not', () => {
  test('"yes" to two quick questions: both answers count', async () => {
    let turn = 0;
    env = await calls.start(() => ({ content: ['Shall I book Monday?', 'Shall I send a receipt?', 'Done.'][turn++] ?? 'Done.' }));
    const service = await connect();
    service.say('book me in');
    expect((await service.nextOfType('speak')).text).toBe('Shall I book Monday?');
    service.say('yes');
    expect((await service.nextOfType('speak')).text).toBe('Shall I send a receipt?');
    service.say('yes');
    expect((await service.nextOfType('speak')).text).toBe('Done.');
    expect(userTexts(env.llm.requests[2]!.body)).toEqual(['book me in', 'yes', 'yes']);
  });

  test('a barge-in that repeats an earlier one still stops the reply: nothing stale is spoken', async () => {
    const long = 'First point here. Second point here. Third point here. Fourth point here. Fifth point here.';
    env = await calls.start((request) =>
      lastUserText(request) === 'stop please' ? { content: 'Okay.' } : { content: long, tokenDelayMs: 15 },
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.say('tell me');
    await service.next((a) => a.text === 'First point here.');
    service.say('stop please', { bargedIn: true });
    await service.next((a) => a.text === 'Okay.');
    service.say('tell me more');
    await service.next((a) => a.text === 'First point here.');
    const before = service.actions.length;
    // Within a second of the first "stop please", with the same payload: a repetition, not a redelivery.
    service.say('stop please', { bargedIn: true });
    await service.next((a) => a.text === 'Okay.');
    expect(await env.llm.requests[2]!.ended).toBe('aborted');
    const after = service.actions.slice(before).map((a) => a.text);
    expect(after).toEqual(['Okay.']);
    expect(env.llm.requests).toHaveLength(4);
  });

  test('the same event again with nothing in between is a redelivery: handled once', async () => {
    env = await calls.start(() => ({ content: 'We open at nine.', ttftMs: 100 }));
    const service = await connect();
    service.say('When do you open?');
    service.say('When do you open?');
    expect((await service.nextOfType('speak')).text).toBe('We open at nine.');
    expect(env.llm.requests).toHaveLength(1);
    expect(await env.llm.requests[0]!.ended).toBe('completed');
  });

  test('session_start again: ignored unless a transfer went out, then the call is back from it', async () => {
    env = await calls.start((request) =>
      lastUserText(request) === 'a person please'
        ? { content: 'One moment.', toolCalls: [{ name: 'transfer', arguments: '{}' }] }
        : { content: 'Sure.' },
    );
    const service = await connect({ playback: { kind: 'auto', msPerChar: 0.1 } });
    service.say('hello');
    await service.nextOfType('speak');
    const before = service.actions.length;
    // The start again, long after the greeting: no transfer was sent, so it is a redelivery.
    service.start();
    service.say('still there?');
    expect((await service.nextOfType('speak')).text).toBe('Sure.');
    expect(service.actions.slice(before).map((a) => a.text)).toEqual(['Sure.']);

    service.say('a person please');
    await service.nextOfType('transfer');
    service.start();
    expect((await service.nextOfType('speak')).text).toMatch(/nobody is available/);
  });
});
