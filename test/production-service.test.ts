/**
 * What the production voice service offers beyond the spec, over the real
 * transports: transfers with caller id, silence, keypad, user_barge_in, speak
 * options from prompt files, SSML, adopted calls and fast webhook answers.
 */
import { readdirSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { AnswerSchema } from '../src/protocol/actions.js';
import { FakeVoiceService, type ReceivedAction } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText, scriptByUserText, userTexts } from './helpers/scripts.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hotline(...args: Parameters<typeof startTestHotline>): Promise<TestHotline> {
  const env = await startTestHotline(...args);
  cleanups.push(() => env.close());
  return env;
}

async function connect(env: TestHotline, options: Parameters<typeof FakeVoiceService.connect>[1] = {}): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, options);
  cleanups.push(async () => {
    await service.close();
  });
  return service;
}

/** The shipped prompts with system.md's front matter replaced, and other files as given. */
async function promptsWith(frontMatter: string, files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prompts-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await cp(path.resolve('prompts'), dir, { recursive: true });
  const system = await readFile(path.join(dir, 'system.md'), 'utf8');
  const body = system.replace(/^---\n[\s\S]*?\n---\n/, '');
  await writeFile(path.join(dir, 'system.md'), `---\n${frontMatter}\n---\n${body}`);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

/** Every action Hotline sent is one the production service accepts. */
function expectProductionShapes(actions: readonly ReceivedAction[]): void {
  for (const { receivedAt: _at, ...action } of actions) {
    const checked = AnswerSchema.safeParse(action);
    expect(checked.success, JSON.stringify(action)).toBe(true);
  }
}

async function post(env: TestHotline, event: unknown): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${env.hotline.url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined, ms: performance.now() - started };
}

describe('transfers that work on the production service', () => {
  test('a transfer carries target, target_phone_number and the caller id (the caller’s number by default), and the ring timeout', async () => {
    const env = await hotline(
      scriptByUserText({ 'A person please': { content: 'One moment, I will connect you.', toolCalls: [{ name: 'transfer', arguments: '{}' }] } }),
      { TRANSFER_TARGET: '+49 30 999999', TRANSFER_TIMEOUT_SECONDS: '25' },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('A person please');
    const transfer = await service.nextOfType('transfer');
    expect(transfer).toMatchObject({
      type: 'transfer',
      session_id: service.sessionId,
      target: '+49 30 999999',
      target_phone_number: '4930999999',
      caller_id_name: 'Hotline',
      caller_id_number: '4915112345678',
      timeout: 25,
    });
    // Nobody answered: the service starts the session again and the caller hears so.
    service.start();
    expect((await service.nextOfType('speak')).text).toMatch(/nobody is available/i);
    expectProductionShapes(service.actions);
  });

  test('a named target from front matter brings its own caller id; the announcement before it is not interruptible', async () => {
    const prompts = await promptsWith(
      [
        'transfer: { caller_id_name: Front desk }',
        'transfer_targets:',
        '  billing: { number: "+49 30 777", caller_id_name: Billing line, caller_id_number: "4930123000", timeout_seconds: 40 }',
      ].join('\n'),
    );
    const env = await hotline(
      scriptByUserText({ Billing: { content: 'Connecting you to billing.', toolCalls: [{ name: 'transfer', arguments: '{"target":"billing"}' }] } }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Billing');
    const announcement = await service.nextOfType('speak');
    expect(announcement).toMatchObject({ text: 'Connecting you to billing.', barge_in: { strategy: 'none' } });
    expect(await service.nextOfType('transfer')).toMatchObject({
      target: '+49 30 777',
      target_phone_number: '4930777',
      caller_id_name: 'Billing line',
      caller_id_number: '4930123000',
      timeout: 40,
    });
    expectProductionShapes(service.actions);
  });
});

describe('silence', () => {
  test('the greeting asks for silence reports; two silences are re-prompted, the third gets a goodbye that cannot be cut, then the hangup', async () => {
    const env = await hotline(scriptByUserText({}));
    const service = await connect(env, { playback: { kind: 'auto', msPerChar: 0.2 } });
    service.start();
    expect(await service.nextOfType('speak')).toMatchObject({ user_input_timeout_seconds: 8 });
    service.inputTimeout();
    const first = await service.nextOfType('speak');
    expect(first).toMatchObject({ user_input_timeout_seconds: 8 });
    expect(first.text).toMatch(/still there/i);
    service.inputTimeout();
    expect(await service.nextOfType('speak')).toMatchObject({ text: first.text, user_input_timeout_seconds: 8 });
    service.inputTimeout();
    const goodbye = await service.nextOfType('speak');
    expect(goodbye).toMatchObject({ barge_in: { strategy: 'none' } });
    expect(goodbye.text).toMatch(/goodbye/i);
    expect(goodbye.user_input_timeout_seconds).toBeUndefined();
    await service.nextOfType('hangup');
    expect(env.llm.requests).toHaveLength(0);
    expectProductionShapes(service.actions);
  });

  test('speaking resets the count; a silence report while Hotline still generates is ignored', async () => {
    const env = await hotline(scriptByUserText({ 'Tell me more': { content: 'Sure. Here is more.', ttftMs: 300 } }));
    const service = await connect(env, { playback: { kind: 'auto', msPerChar: 0.2 } });
    service.start();
    await service.nextOfType('speak');
    service.inputTimeout();
    await service.next((a) => /still there/i.test(a.text ?? ''));
    service.inputTimeout();
    await service.next((a) => /still there/i.test(a.text ?? ''));
    service.say('Tell me more');
    await env.llm.nextRequest();
    // Stale: reported while the model is still thinking.
    service.inputTimeout();
    expect(await service.nextOfType('speak')).toMatchObject({ text: 'Sure.' });
    // The reply's last speak asks for the caller's answer, and the count starts again.
    expect(await service.nextOfType('speak')).toMatchObject({ text: 'Here is more.', user_input_timeout_seconds: 8 });
    service.inputTimeout();
    expect((await service.nextOfType('speak')).text).toMatch(/still there/i);
    service.inputTimeout();
    expect((await service.nextOfType('speak')).text).toMatch(/still there/i);
    expect(service.actions.filter((a) => a.type === 'hangup')).toHaveLength(0);
  });
});

describe('keypad', () => {
  test('a customer number typed on the keypad reaches the model marked as typed, and is answered', async () => {
    const env = await hotline(
      scriptByUserText({}, { content: 'Thank you.' }),
    );
    env.llm.requests.length;
    const service = await connect(env, { playback: { kind: 'auto', msPerChar: 0.2 } });
    service.start();
    await service.nextOfType('speak');
    service.dtmf('4711#');
    const request = await env.llm.nextRequest();
    expect(lastUserText(request.body)).toBe('[keypad] 4711');
    expect((await service.nextOfType('speak')).text).toBe('Thank you.');
    const transcript = await readFile(path.join(env.transcriptsDir, `${service.sessionId}.jsonl`), 'utf8');
    expect(transcript).toContain('"text":"[keypad] 4711","keypad":true');
  });

  test('a key while Hotline speaks interrupts like speech: generation stops and the playback is stopped with barge_in', async () => {
    const env = await hotline(
      scriptByUserText({ 'Read the terms': { content: 'Term one applies. Term two applies. Term three applies. Term four applies.', tokenDelayMs: 60 } }),
    );
    const service = await connect(env, { playback: { kind: 'manual' } });
    service.start();
    await service.nextOfType('speak');
    service.finishSpeech();
    service.say('Read the terms');
    const request = await env.llm.nextRequest();
    await service.next((a) => a.text === 'Term one applies.');
    service.dtmf('1');
    expect(await service.nextOfType('barge_in')).toMatchObject({ session_id: service.sessionId });
    expect(await request.ended).toBe('aborted');
    const afterKey = service.actions.length;
    service.dtmf('#');
    const next = await env.llm.nextRequest();
    expect(lastUserText(next.body)).toBe('[keypad] 1');
    expect(service.actions.slice(afterKey - 1).filter((a) => /Term (three|four)/.test(a.text ?? ''))).toEqual([]);
  });
});

describe('user_barge_in', () => {
  test('stops a streaming reply within one event; with text it is the caller’s words', async () => {
    const env = await hotline(
      scriptByUserText({
        'Tell me everything': { content: 'First part. Second part. Third part. Fourth part. Fifth part.', tokenDelayMs: 60 },
        'Wait': { content: 'Sure, go ahead.' },
      }),
    );
    const service = await connect(env, { playback: { kind: 'manual' } });
    service.start();
    await service.nextOfType('speak');
    service.finishSpeech();
    service.say('Tell me everything');
    const request = await env.llm.nextRequest();
    await service.next((a) => a.text === 'First part.');
    service.bargeIn();
    expect(await request.ended).toBe('aborted');
    const stopped = service.actions.length;
    service.bargeIn('Wait');
    const next = await env.llm.nextRequest();
    expect(lastUserText(next.body)).toBe('Wait');
    expect((await service.next((a) => a.text === 'Sure, go ahead.')).type).toBe('speak');
    expect(service.actions.slice(0, stopped).some((a) => /Fifth/.test(a.text ?? ''))).toBe(false);
  });
});

describe('how speech is played', () => {
  test('voice, barge-in rules and end-of-turn silence from front matter go on every speak; a line’s own header wins', async () => {
    const prompts = await promptsWith(
      [
        'tts: { provider: azure, language: de-DE, voice: de-DE-KatjaNeural }',
        'barge_in: { strategy: minimum_characters, minimum_characters: 3 }',
        'vad: { end_of_turn_silence_ms: 800 }',
      ].join('\n'),
      { 'greeting.md': '---\nbarge_in: { strategy: none }\n---\nThis call may be recorded. How can I help?\n' },
    );
    const env = await hotline(scriptByUserText({ Hello: { content: 'Hi there.' } }), { PROMPTS_DIR: prompts });
    const service = await connect(env);
    service.start();
    const greeting = await service.nextOfType('speak');
    expect(greeting).toEqual({
      type: 'speak',
      session_id: service.sessionId,
      text: 'This call may be recorded. How can I help?',
      tts: { provider: 'azure', language: 'de-DE', voice: 'de-DE-KatjaNeural' },
      barge_in: { strategy: 'none' },
      vad: { end_of_turn_silence_ms: 800 },
      receivedAt: greeting.receivedAt,
    });
    service.say('Hello');
    expect(await service.nextOfType('speak')).toMatchObject({
      text: 'Hi there.',
      tts: { voice: 'de-DE-KatjaNeural' },
      barge_in: { strategy: 'minimum_characters', minimum_characters: 3 },
      vad: { end_of_turn_silence_ms: 800 },
    });
    expectProductionShapes(service.actions);
  });

  test('the model’s goodbye before a hangup is not interruptible, and the hangup waits for it', async () => {
    const env = await hotline(
      scriptByUserText({ 'That is all': { content: 'Thanks for calling, goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] } }),
    );
    const service = await connect(env, { playback: { kind: 'manual' } });
    service.start();
    await service.nextOfType('speak');
    service.finishSpeech();
    service.say('That is all');
    const goodbye = await service.nextOfType('speak');
    expect(goodbye).toMatchObject({ text: 'Thanks for calling, goodbye!', barge_in: { strategy: 'none' } });
    expect(goodbye.user_input_timeout_seconds).toBeUndefined();
    // The caller talking over it does not cut it: a hangup follows once it has played.
    service.finishSpeech();
    await service.nextOfType('hangup');
  });

  test('SSML from the model goes out in ssml with a <speak> root; with SSML off the tags are stripped from text', async () => {
    const script = scriptByUserText({ Balance: { content: 'Your balance is <say-as interpret-as="currency">$42.50</say-as>. <break time="300ms"/>Anything else?' } });
    const on = await hotline(script, { PROMPTS_DIR: await promptsWith('ssml: true') });
    const withSsml = await connect(on);
    withSsml.start();
    await withSsml.nextOfType('speak');
    withSsml.say('Balance');
    const first = await withSsml.nextOfType('speak');
    expect(first.text).toBeUndefined();
    expect(first.ssml).toBe('<speak>Your balance is <say-as interpret-as="currency">$42.50</say-as>.</speak>');
    const second = await withSsml.nextOfType('speak');
    expect(second.ssml).toBe('<speak><break time="300ms"/>Anything else?</speak>');
    expectProductionShapes(withSsml.actions);

    const off = await hotline(script);
    const plain = await connect(off);
    plain.start();
    await plain.nextOfType('speak');
    plain.say('Balance');
    expect((await plain.nextOfType('speak')).text).toBe('Your balance is $42.50.');
    expect(await plain.nextOfType('speak')).toMatchObject({ text: 'Anything else?' });
    expect(plain.actions.some((a) => a.ssml !== undefined || /</.test(a.text ?? ''))).toBe(false);
  });

  test('a transfer chime from the prompt set plays after the announcement, before the transfer', async () => {
    const prompts = await promptsWith('audio: { transfer: audio/transfer-chime.wav }');
    const env = await hotline(
      scriptByUserText({ Sales: { content: 'Connecting you now.', toolCalls: [{ name: 'transfer', arguments: '{"target":"sales"}' }] } }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env, { playback: { kind: 'auto', msPerChar: 0.2 } });
    service.start();
    await service.nextOfType('speak');
    service.say('Sales');
    await service.nextOfType('transfer');
    const types = service.actions.map((a) => a.type);
    expect(types.slice(-3)).toEqual(['speak', 'audio', 'transfer']);
    const clip = service.actions.at(-2)!;
    expect(Buffer.from(String(clip.audio), 'base64').subarray(0, 4).toString()).toBe('RIFF');
    expectProductionShapes(service.actions);
  });
});

describe('calls Hotline does not know are adopted', () => {
  test('a restarted Hotline answers the next user_speak of a call it never saw start, knowing what was said', async () => {
    const script = scriptByUserText({
      'My name is Anna': { content: 'Nice to meet you, Anna.' },
      'What is my name?': (request) => ({ content: userTexts(request).includes('My name is Anna') ? 'Your name is Anna.' : 'I do not know.' }),
    });
    const first = await startTestHotline(script);
    const service = await FakeVoiceService.connect(first.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.2 } });
    service.start();
    await service.nextOfType('speak');
    service.say('My name is Anna');
    await service.next((a) => a.text === 'Nice to meet you, Anna.');
    // The process dies with the call in progress; a new one starts on the same transcripts folder.
    await first.hotline.close();
    await service.closed;
    const second = await hotline(script, { TRANSCRIPTS_DIR: first.transcriptsDir });
    cleanups.push(() => first.llm.close());
    const again = await connect(second, { sessionId: service.sessionId });
    again.say('What is my name?');
    expect((await again.nextOfType('speak')).text).toBe('Your name is Anna.');
    const transcript = await readFile(path.join(first.transcriptsDir, `${service.sessionId}.jsonl`), 'utf8');
    expect(transcript).toMatch(/"text":"session_adopted","restored":\d/);
    // No greeting: the caller is mid-call.
    expect(again.actions.map((a) => a.text)).not.toContain('Hello, thanks for calling! How can I help you today?');
  });

  test('over the webhook, a user_speak for an unknown session is answered, not left in silence', async () => {
    const env = await hotline(scriptByUserText({ 'Are you there?': { content: 'Yes, I am here.' } }));
    const answer = await post(env, { type: 'user_speak', session: { id: 'from-another-instance' }, text: 'Are you there?' });
    expect(answer).toMatchObject({ status: 200, body: { type: 'speak', text: 'Yes, I am here.' } });
  });
});

describe('fast webhook answers', () => {
  test('a user_speak is answered within 1.5 s when the model takes 10 s: the hold line, the reply on a following assistant_speech_ended', async () => {
    const env = await hotline(
      scriptByUserText({ 'Check my order': { content: 'Your order has shipped.', ttftMs: 10_000 }, Quick: { content: 'Quick answer.', ttftMs: 1500 } }),
      { LLM_TIMEOUT_MS: '15000' },
    );
    const session = { id: 'slow-model' };
    expect((await post(env, { type: 'session_start', session })).status).toBe(200);
    await post(env, { type: 'assistant_speech_ended', session });
    const answer = await post(env, { type: 'user_speak', session, text: 'Check my order' });
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(1500);
    expect(answer.body).toMatchObject({ type: 'speak', text: 'Let me think about that for a moment.' });
  });

  test('the hold line plays while the model works; its assistant_speech_ended carries the reply', async () => {
    const env = await hotline(scriptByUserText({ Quick: { content: 'Here is the answer.', ttftMs: 1300 } }), { WEBHOOK_HOLD_MS: '300' });
    const session = { id: 'held' };
    await post(env, { type: 'session_start', session });
    await post(env, { type: 'assistant_speech_ended', session });
    const hold = await post(env, { type: 'user_speak', session, text: 'Quick' });
    expect(hold.body).toMatchObject({ type: 'speak', text: 'Let me think about that for a moment.' });
    // Played; the model is still at work, so the next wait is held too, until the reply is there.
    let reply = await post(env, { type: 'assistant_speech_ended', session });
    while ((reply.body as { text?: string } | undefined)?.text === 'Let me think about that for a moment.') {
      reply = await post(env, { type: 'assistant_speech_ended', session });
    }
    expect(reply.body).toMatchObject({ type: 'speak', text: 'Here is the answer.' });
  });

  test('WEBHOOK_REPLY defaults to sentences: the first sentence is the answer as soon as it is complete', async () => {
    const env = await hotline(scriptByUserText({ Hours: { content: 'We open at nine. We close at six.', tokenDelayMs: 30 } }));
    const session = { id: 'sentences' };
    await post(env, { type: 'session_start', session });
    await post(env, { type: 'assistant_speech_ended', session });
    expect((await post(env, { type: 'user_speak', session, text: 'Hours' })).body).toMatchObject({ text: 'We open at nine.' });
    expect((await post(env, { type: 'assistant_speech_ended', session })).body).toMatchObject({
      text: 'We close at six.',
      user_input_timeout_seconds: 8,
    });
  });

  test('ACTION_ARRAYS=webhook: a key that interrupts a reply is answered with [barge_in, speak] in one answer', async () => {
    const env = await hotline(
      scriptByUserText({ 'Read it': { content: 'Line one. Line two. Line three.', tokenDelayMs: 40 } }, { content: 'Got your number.' }),
      { ACTION_ARRAYS: 'webhook', WEBHOOK_REPLY: 'sentences' },
    );
    const session = { id: 'arrays' };
    await post(env, { type: 'session_start', session });
    await post(env, { type: 'assistant_speech_ended', session });
    expect((await post(env, { type: 'user_speak', session, text: 'Read it' })).body).toMatchObject({ text: 'Line one.' });
    // The hash key alone is an entry ("press hash to confirm"): it stops the reply and is answered.
    const answer = await post(env, { type: 'dtmf_received', session, digit: '#' });
    expect(answer.body).toEqual([
      { type: 'barge_in', session_id: 'arrays' },
      expect.objectContaining({ type: 'speak', text: 'Got your number.' }),
    ]);
  });
});

describe('every real event payload of the production service', () => {
  const dir = path.resolve('test/fixtures/service-payloads/events');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

  test('is accepted over the webhook: answered 200 or 204, never 400 or 5xx', async () => {
    const env = await hotline(scriptByUserText({}, { content: 'Noted.' }));
    for (const file of files) {
      const answer = await post(env, JSON.parse(await readFile(path.join(dir, file), 'utf8')) as unknown);
      expect([200, 204], `${file}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
      if (answer.body !== undefined) expect(AnswerSchema.safeParse(answer.body).success, file).toBe(true);
    }
  });

  test('is accepted over the WebSocket: the socket stays open and its call still answers', async () => {
    const env = await hotline(scriptByUserText({ 'Still there?': { content: 'Yes.' } }, { content: 'Noted.' }));
    const service = await connect(env, { playback: { kind: 'none' } });
    service.start();
    await service.nextOfType('speak');
    for (const file of files) service.send(await readFile(path.join(dir, file), 'utf8'));
    service.say('Still there?');
    await service.next((a) => a.text === 'Yes.');
    expect(service.socket.readyState).toBe(service.socket.OPEN);
    expectProductionShapes(service.actions);
  });
});

describe('configuration of the extras', () => {
  test('defaults: sentences over the webhook, a hold after 1 s, no arrays; bad values are one line each', () => {
    const defaults = loadConfig({});
    expect(defaults.webhookReply).toBe('sentences');
    expect(defaults.webhookHoldMs).toBe(1000);
    expect([...defaults.actionArrays]).toEqual([]);
    expect([...loadConfig({ ACTION_ARRAYS: 'webhook, websocket' }).actionArrays].sort()).toEqual(['webhook', 'websocket']);
    expect(loadConfig({ TRANSFER_TIMEOUT_SECONDS: '30', TRANSFER_CALLER_ID_NUMBER: '+49 30 123456' }).transfer).toMatchObject({
      timeoutSeconds: 30,
      callerIdNumber: '+49 30 123456',
    });
    expect(() => loadConfig({ ACTION_ARRAYS: 'sometimes' })).toThrow(/^ACTION_ARRAYS must name websocket, webhook or both/);
    expect(() => loadConfig({ TRANSFER_TIMEOUT_SECONDS: '200' })).toThrow(/^TRANSFER_TIMEOUT_SECONDS must be a whole number of seconds, 5–120$/);
    expect(() => loadConfig({ TRANSFER_CALLER_ID_NUMBER: 'reception' })).toThrow(/^TRANSFER_CALLER_ID_NUMBER must be a phone number/);
  });
});
