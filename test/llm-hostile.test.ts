/**
 * Broken, hostile and merely unusual LLM output over the real SDK path: one
 * bad chunk must never freeze the process or reach into shared objects, a
 * looping model must never talk for minutes, and the shapes real servers send
 * must reach the caller as speech.
 */
import { describe, expect, test } from 'vitest';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { Script } from '../src/llm/scripted-server.js';
import type { TestHotline } from './helpers/hotline.js';
import { testCalls, type ConnectOptions } from './helpers/test-calls.js';
import { lastUserText } from './helpers/scripts.js';
import { chunk, sseOf } from './helpers/sse.js';

const APOLOGY = /^I'm sorry, I'm having a little trouble/;

const calls = testCalls({ playback: { kind: 'auto', msPerChar: 0.1 } });
let env: TestHotline;

async function call(options: ConnectOptions = {}): Promise<FakeVoiceService> {
  const client = await calls.connect(options);
  client.start();
  await client.nextOfType('speak');
  return client;
}

/** Every speak after `from`, until the one that matches `last`. */
async function speaksUntil(service: FakeVoiceService, last: (text: string) => boolean): Promise<string[]> {
  const texts: string[] = [];
  for (;;) {
    const text = (await service.nextOfType('speak')).text ?? '';
    texts.push(text);
    if (last(text)) return texts;
  }
}

const toolCall = (index: unknown, name: string, args: string, id?: string): Record<string, unknown> =>
  chunk({ tool_calls: [{ ...(index === undefined ? {} : { index }), ...(id ? { id } : {}), type: 'function', function: { name, arguments: args } }] });

describe('tool-call indexes are the server’s word, not array positions', () => {
  test('an index of 4294967294 neither freezes the process nor loses the reply', async () => {
    env = await calls.start(() => ({
      sse: sseOf([chunk({ content: 'Fine, thanks.' }), toolCall(4294967294, 'speak', '{"text":"x"}', 'call_1')]),
    }));
    const service = await call();
    service.say('How are you?');
    expect((await service.nextOfType('speak')).text).toBe('Fine, thanks.');
    expect((await fetch(`${env.hotline.url}/healthz`)).status).toBe(200);
  });

  test('an index of "__proto__" writes nothing onto Array.prototype', async () => {
    env = await calls.start(() => ({
      sse: sseOf([chunk({ content: 'All good.' }), toolCall('__proto__', 'hangup', '{}', 'call_1'), toolCall('__proto__', 'x', '{"a":1}')]),
    }));
    const service = await call();
    service.say('Hi');
    expect((await service.nextOfType('speak')).text).toBe('All good.');
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating).toBe(false);
    for (const key of ['name', 'args', 'id', 'spoken']) expect(Object.hasOwn(Array.prototype, key)).toBe(false);
    expect(service.actions.some((a) => a.type === 'hangup')).toBe(false);
  });

  test('a hangup without an index (Mistral) is carried out after the goodbye', async () => {
    env = await calls.start(() => ({
      sse: sseOf([chunk({ content: 'Goodbye!' }), toolCall(undefined, 'hangup', '{}', 'gSIMJiOkT')]),
    }));
    const service = await call();
    service.say('Bye');
    expect((await service.nextOfType('speak')).text).toBe('Goodbye!');
    await service.nextOfType('hangup');
    expect(service.actions.some((a) => a.type === 'speak' && APOLOGY.test(a.text ?? ''))).toBe(false);
  });
});

describe('a reply has a length limit', () => {
  const looping: Script = () => ({
    content: Array.from({ length: 400 }, (_, i) => `This is sentence number ${i + 1} of my answer.`).join(' '),
    tokenDelayMs: 1,
  });

  test('a looping model over the WebSocket: speech stops at REPLY_MAX_CHARS, the stream is closed, max_tokens is asked for', async () => {
    env = await calls.start(looping, { REPLY_MAX_CHARS: '300', LLM_MAX_TOKENS: '500' });
    const service = await call();
    service.say('Tell me everything');
    await service.nextOfType('speak');
    const request = env.llm.requests[0]!;
    expect(await request.ended).toBe('aborted');
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating).toBe(false);
    const spoken = service.actions.filter((a) => a.type === 'speak').slice(1).map((a) => a.text ?? '');
    expect(spoken.join(' ').length).toBeLessThanOrEqual(300);
    expect(spoken.join(' ').length).toBeGreaterThan(200);
    // Any server but OpenAI's own knows max_tokens.
    expect(request.rawBody).toMatchObject({ max_tokens: 500 });
  });

  test('over the webhook the one speak is capped too', async () => {
    env = await calls.start(looping, { REPLY_MAX_CHARS: '300' });
    const post = async (body: unknown): Promise<Record<string, unknown>> =>
      (await (await fetch(`${env.hotline.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
    await post({ type: 'session_start', session: { id: 'loop-1' } });
    const answer = await post({ type: 'user_speak', session: { id: 'loop-1' }, text: 'Tell me everything' });
    expect(String(answer.text).length).toBeLessThanOrEqual(300);
    expect(String(answer.text)).toMatch(/^This is sentence number 1 of my answer\./);
  });

  test('an endless reply without a single space is cut, not kept growing', async () => {
    env = await calls.start(() => ({ content: 'x'.repeat(200_000), tokenDelayMs: 1 }), { REPLY_MAX_CHARS: '1000' });
    const service = await call();
    service.say('Go');
    await service.nextOfType('speak');
    expect(await env.llm.requests[0]!.ended).toBe('aborted');
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating).toBe(false);
    const spoken = service.actions.filter((a) => a.type === 'speak').slice(1).map((a) => a.text ?? '');
    expect(spoken.join('').length).toBeLessThanOrEqual(1000);
  });
});

describe('reasoning models', () => {
  const thinking = (events: number, answer?: string): string =>
    sseOf([
      chunk({ role: 'assistant', content: '' }),
      ...Array.from({ length: events }, () => chunk({ reasoning_content: 'Let me consider the options. ' })),
      ...(answer ? [chunk({ content: answer })] : []),
    ]);

  test('reasoning is a sign of life: it keeps the first-token timer from firing', async () => {
    env = await calls.start(() => ({ sse: thinking(12, 'The answer is 42.'), tokenDelayMs: 50 }), { LLM_TIMEOUT_MS: '200', THINKING_FILLER_MS: '0' });
    const service = await call();
    service.say('What is the answer?');
    expect((await service.nextOfType('speak')).text).toBe('The answer is 42.');
  });

  test('but a model that only thinks meets a ceiling: the apology, and the stream is closed', async () => {
    env = await calls.start(() => ({ sse: thinking(200), tokenDelayMs: 20 }), { LLM_THINKING_TIMEOUT_MS: '300', THINKING_FILLER_MS: '0' });
    const service = await call();
    service.say('What is the answer?');
    expect((await service.nextOfType('speak')).text).toMatch(APOLOGY);
    expect(await env.llm.requests[0]!.ended).toBe('aborted');
  });

  test('over the WebSocket the caller hears a short line while the model thinks, once', async () => {
    env = await calls.start(() => ({ sse: thinking(20, 'The answer is 42.'), tokenDelayMs: 40 }), { THINKING_FILLER_MS: '300' });
    const service = await call();
    service.say('What is the answer?');
    expect(await speaksUntil(service, (t) => t === 'The answer is 42.')).toEqual([
      'Let me think about that for a moment.',
      'The answer is 42.',
    ]);
    // The model sees what the caller heard.
    service.say('Thanks');
    await service.nextOfType('speak');
    const history = env.llm.requests[1]!.body.messages.at(-2);
    expect(history).toMatchObject({ role: 'assistant', content: 'Let me think about that for a moment. The answer is 42.' });
  });
});

describe('tools Hotline does not have', () => {
  test('are answered as an error to the model, which carries on in the same turn', async () => {
    env = await calls.start((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? { content: "I can't look orders up, but a colleague can." }
        : { content: 'Let me check.', toolCalls: [{ name: 'lookup_order', arguments: '{"order":"42"}' }] },
    );
    const service = await call();
    service.say('Where is order 42?');
    expect(await speaksUntil(service, (t) => t.startsWith('I can'))).toEqual(['Let me check.', "I can't look orders up, but a colleague can."]);
    const second = env.llm.requests[1]!;
    expect(second.validationError).toBeUndefined();
    expect(second.body.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringMatching(/no tool named "lookup_order"/) });
  });

  test('for a bounded number of rounds, then the apology', async () => {
    env = await calls.start(() => ({ toolCalls: [{ name: 'lookup_order', arguments: '{}' }] }), { LLM_MAX_TOOL_ROUNDS: '3' });
    const service = await call();
    service.say('Where is my order?');
    expect((await service.nextOfType('speak')).text).toMatch(APOLOGY);
    expect(env.llm.requests).toHaveLength(3);
  });
});

describe('429 with Retry-After', () => {
  test('is honoured when the wait fits within the time limit', async () => {
    env = await calls.start((_request, { index }) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { content: 'Here you go.' },
    );
    const service = await call();
    service.say('Hello');
    expect((await service.nextOfType('speak')).text).toBe('Here you go.');
    const [first, second] = env.llm.requests;
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(950);
  });

  test('a wait longer than the time limit: the apology at once, no retry', async () => {
    env = await calls.start(() => ({ status: 429, headers: { 'retry-after': '30' } }));
    const service = await call();
    service.say('Hello');
    expect((await service.nextOfType('speak')).text).toMatch(APOLOGY);
    expect(env.llm.requests).toHaveLength(1);
  });
});

describe('citations', () => {
  test('markers such as [1][5] are not spoken', async () => {
    env = await calls.start((request) =>
      lastUserText(request) === 'Population?' ? { content: 'About 3.7 million people live there [1][5]. It grew in 2024 [2].' } : { content: 'Hm.' },
    );
    const service = await call();
    service.say('Population?');
    expect(await speaksUntil(service, (t) => t.startsWith('It grew'))).toEqual(['About 3.7 million people live there.', 'It grew in 2024.']);
  });
});
