import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { INTERRUPTED_MARK } from '../src/call/speech/reply.js';
import { tokenize } from '../src/llm/scripted-server.js';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { FakeVoiceService, type ReceivedAction } from '../src/testing/voice-service-client.js';

const GREETING = 'Hello, thanks for calling! How can I help you today?';
const LONG_REPLY =
  'We are open from 9 a.m. to 6 p.m. on weekdays. On Saturdays we open at 10. ' +
  'A visit costs $49.50, or 1.000 € for the year. Write to info@example.com for details. ' +
  'Our website is www.example.com/hours. Is there anything else?';

let env: TestHotline | undefined;
let clients: FakeVoiceService[] = [];

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
  if (env) {
    // Every request Hotline made was a valid Chat Completions request.
    expect(env.llm.requests.map((r) => r.validationError).filter(Boolean)).toEqual([]);
    await env.close();
  }
  env = undefined;
});

async function connect(options: Parameters<typeof FakeVoiceService.connect>[1] = {}): Promise<FakeVoiceService> {
  const client = await FakeVoiceService.connect(env!.hotline.wsUrl, options);
  clients.push(client);
  return client;
}

function speaksOf(actions: ReceivedAction[]): string[] {
  return actions.filter((a) => a.type === 'speak').map((a) => a.text ?? '');
}

/** A client's text frame, masked with a zero key (so its bytes are the text's): several can go in one write. */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([head, Buffer.alloc(4), payload]);
}

async function readTranscript(sessionId: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(env!.transcriptsDir, transcriptFileName(sessionId)), 'utf8');
  return text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('greeting and turns', () => {
  test('session_start is answered at once with the greeting, without an LLM request', async () => {
    env = await startTestHotline(scriptByUserText({}));
    const service = await connect();
    service.start();
    const greeting = await service.next();
    expect(greeting).toMatchObject({ type: 'speak', session_id: service.sessionId, text: GREETING });
    expect(env.llm.requests).toHaveLength(0);
  });

  test('a reply streams out sentence by sentence, in order, complete, before the LLM finishes', async () => {
    env = await startTestHotline(scriptByUserText({ 'When are you open?': { content: LONG_REPLY, tokenDelayMs: 8 } }));
    const service = await connect();
    service.start();
    await service.next();
    service.say('When are you open?');
    const first = await service.nextOfType('speak');
    const request = env.llm.requests[0]!;
    // The first sentence left as soon as the token after it (the boundary's lookahead) arrived, not at the end.
    const firstSentenceTokens = tokenize('We are open from 9 a.m. to 6 p.m. on weekdays.').length;
    expect(request.tokens.length).toBeLessThanOrEqual(firstSentenceTokens + 2);
    expect(request.tokens.length).toBeLessThan(tokenize(LONG_REPLY).length);
    expect(first.text).toBe('We are open from 9 a.m. to 6 p.m. on weekdays.');
    expect(await request.ended).toBe('completed');
    const rest = [first];
    while (rest.at(-1)?.text !== 'Is there anything else?') rest.push(await service.nextOfType('speak'));
    expect(rest.map((a) => a.text)).toEqual([
      'We are open from 9 a.m. to 6 p.m. on weekdays.',
      'On Saturdays we open at 10.',
      'A visit costs $49.50, or 1.000 € for the year.',
      'Write to info@example.com for details.',
      'Our website is www.example.com/hours.',
      'Is there anything else?',
    ]);
    expect(rest.map((a) => a.text).join(' ')).toBe(LONG_REPLY);
    // The request carried the system prompt, the greeting and the caller's words, and the tools.
    expect(request.body.messages.map((m) => m.role)).toEqual(['system', 'assistant', 'user']);
    expect(request.body.stream).toBe(true);
    expect(request.body.model).toBe('test-model');
    expect((request.body.tools ?? []).map((t) => t.function.name)).toEqual(['speak', 'transfer', 'hangup']);
  });

  test('the speak tool streams: its text is spoken before the tool call arguments are complete', async () => {
    const text = 'Sure! Our address is 12 Market Street. Parking is behind the building.';
    env = await startTestHotline(
      scriptByUserText({
        'Where are you?': { toolCalls: [{ name: 'speak', arguments: JSON.stringify({ text }) }], tokenDelayMs: 8 },
      }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('Where are you?');
    const first = await service.nextOfType('speak');
    expect(first.text).toBe('Sure!');
    const request = env.llm.requests[0]!;
    const argumentsSoFar = request.tokens.map((t) => t.text).join('');
    expect(argumentsSoFar).not.toContain('building');
    const second = await service.nextOfType('speak');
    const third = await service.nextOfType('speak');
    expect([second.text, third.text]).toEqual(['Our address is 12 Market Street.', 'Parking is behind the building.']);
    // The next request shows the speak call answered by a tool result.
    service.say('Thanks');
    await service.nextOfType('speak');
    const messages = env.llm.requests[1]!.body.messages;
    const roles = messages.map((m) => m.role);
    expect(roles).toEqual(['system', 'assistant', 'user', 'assistant', 'tool', 'user']);
  });

  test('markdown and emoji are not spoken; plain content and speak tool text are both said', async () => {
    env = await startTestHotline(
      scriptByUserText({
        Hi: {
          content: '**Great** to hear from you 😀! Here is `the plan`:\n- first item\n',
          toolCalls: [{ name: 'speak', arguments: '{"text":"And one more thing."}' }],
        },
      }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('Hi');
    const said: string[] = [];
    for (let i = 0; i < 4; i++) said.push((await service.nextOfType('speak')).text ?? '');
    expect(said).toEqual(['Great to hear from you!', 'Here is the plan:', 'first item', 'And one more thing.']);
  });
});

describe('barge-in', () => {
  test('aborts the LLM stream at once, sends nothing stale, and keeps only what was heard', async () => {
    const long = 'First sentence is here. Second sentence follows now. Third sentence is long and never heard. Fourth one.';
    env = await startTestHotline(
      scriptByUserText({
        'Tell me everything': { content: long, tokenDelayMs: 30 },
        'Stop, I have a question': { content: 'Sure, go ahead.' },
      }),
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.next();
    service.finishSpeech(); // the greeting has played
    service.say('Tell me everything');
    const first = await service.nextOfType('speak');
    expect(first.text).toBe('First sentence is here.');
    expect((await service.nextOfType('speak')).text).toBe('Second sentence follows now.');
    service.finishSpeech(); // the first sentence has been heard; the second starts playing
    const request = env.llm.requests[0]!;
    service.say('Stop, I have a question', { bargedIn: true });
    expect(await request.ended).toBe('aborted');
    const answer = await service.nextOfType('speak');
    expect(answer.text).toBe('Sure, go ahead.');
    // Nothing of the old reply arrived after the barge-in.
    const afterBargeIn = service.actions.slice(service.actions.indexOf(answer));
    expect(speaksOf(afterBargeIn)).toEqual(['Sure, go ahead.']);
    expect(speaksOf(service.actions)).not.toContain('Third sentence is long and never heard.');

    const messages = env.llm.requests[1]!.body.messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'assistant', 'user', 'assistant', 'user']);
    const cut = String(messages[3]!.content);
    // Heard: the first sentence, at most part of the second (it was playing), nothing after.
    expect(cut.startsWith('First sentence is here.')).toBe(true);
    expect(cut.endsWith(INTERRUPTED_MARK)).toBe(true);
    expect(cut).not.toContain('Second sentence follows now.');
    expect(cut).not.toContain('Third');
    expect(messages[4]).toMatchObject({ role: 'user', content: 'Stop, I have a question' });
  });

  test('a user_speak during generation supersedes the reply and the new turn sees all of the words', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'I would like': { content: 'Let me think about this for a good while.', ttftMs: 200 },
        'a table for two': { content: 'A table for two, noted.' },
      }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('I would like');
    const first = await env.llm.nextRequest();
    service.say('a table for two');
    expect(await first.ended).toBe('aborted');
    expect((await service.nextOfType('speak')).text).toBe('A table for two, noted.');
    const messages = env.llm.requests[1]!.body.messages;
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['I would like', 'a table for two']);
    expect(speaksOf(service.actions)).toEqual([GREETING, 'A table for two, noted.']);
  });

  test('no playback events: the history falls back to what was sent, marked interrupted', async () => {
    env = await startTestHotline(
      scriptByUserText({
        Go: { content: 'One. Two three four. Five six seven eight nine.', tokenDelayMs: 40 },
        Wait: { content: 'Okay.' },
      }),
    );
    const service = await connect({ playback: { kind: 'none' } });
    service.start();
    await service.next();
    service.say('Go');
    await service.nextOfType('speak');
    service.say('Wait', { bargedIn: true });
    await service.next((a) => a.text === 'Okay.');
    const cut = env.llm.requests[1]!.body.messages[3]!;
    expect(cut.content).toBe(`One. ${INTERRUPTED_MARK}`);
  });
});

describe('voice activity before the words (user_speech_started)', () => {
  test('holds back sentences not yet sent; the user_speak that follows starts the new turn', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'Tell me a lot': { content: 'One is here. Two is here. Three is here. Four is here. Five.', tokenDelayMs: 25 },
        'Actually, stop': { content: 'Okay, stopping.' },
      }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('Tell me a lot');
    expect((await service.nextOfType('speak')).text).toBe('One is here.');
    service.send({ type: 'user_speech_started', session: { id: service.sessionId } });
    const heldFrom = service.actions.length;
    // Generation goes on meanwhile; wait until the LLM has written the whole reply.
    await env.llm.requests[0]!.ended;
    service.say('Actually, stop', { bargedIn: true });
    expect((await service.nextOfType('speak')).text).toBe('Okay, stopping.');
    expect(speaksOf(service.actions.slice(heldFrom))).toEqual(['Okay, stopping.']);
  });

  test('voice activity with no words after it: the held sentences follow after a short wait', async () => {
    env = await startTestHotline(
      scriptByUserText({ Go: { content: 'First part is here. Second part comes later.', tokenDelayMs: 30 } }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('Go');
    await service.nextOfType('speak');
    service.send({ type: 'user_speech_started', session: { id: service.sessionId } });
    const heldAt = performance.now();
    const second = await service.nextOfType('speak');
    expect(second.text).toBe('Second part comes later.');
    expect(second.receivedAt - heldAt).toBeGreaterThanOrEqual(1000);
  });
});

describe('transfer and hangup', () => {
  test('transfer waits until the sentence before it has played, and uses the named target', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'Sales please': {
          content: "One moment, I'll connect you.",
          toolCalls: [{ name: 'transfer', arguments: '{"target":"sales"}' }],
        },
      }),
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.next();
    service.finishSpeech();
    service.say('Sales please');
    await service.nextOfType('speak');
    await env.llm.requests[0]!.ended;
    // Not before the speech has ended.
    expect(service.actions.some((a) => a.type === 'transfer')).toBe(false);
    service.finishSpeech();
    const transfer = await service.nextOfType('transfer');
    expect(transfer).toMatchObject({ type: 'transfer', session_id: service.sessionId, target: '4930111111' });
  });

  test('an unknown target falls back to TRANSFER_TARGET; a transfer without speech goes at once', async () => {
    env = await startTestHotline(
      scriptByUserText({ Human: { toolCalls: [{ name: 'transfer', arguments: '{"target":"the boss"}' }] } }),
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.next();
    service.finishSpeech();
    service.say('Human');
    expect(await service.nextOfType('transfer')).toMatchObject({ target: '4930999999' });
  });

  test('hangup comes after the goodbye has played, and no further LLM call is made', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'Bye then': { content: 'Thanks for calling. Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] },
      }),
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.next();
    service.finishSpeech();
    service.say('Bye then');
    expect((await service.nextOfType('speak')).text).toBe('Thanks for calling.');
    expect((await service.nextOfType('speak')).text).toBe('Goodbye!');
    await env.llm.requests[0]!.ended;
    service.finishSpeech();
    expect(service.actions.some((a) => a.type === 'hangup')).toBe(false);
    service.finishSpeech();
    expect(await service.nextOfType('hangup')).toMatchObject({ session_id: service.sessionId });
    expect(env.llm.requests).toHaveLength(1);
    // The caller's words after the hangup start no new turn.
    service.say('Wait!');
    service.end();
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    expect(env.llm.requests).toHaveLength(1);
  });

  test('a barge-in on the goodbye cancels the hangup and the new turn is handled', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'That is all': { content: 'Goodbye and take care!', toolCalls: [{ name: 'hangup', arguments: '{}' }] },
        'Oh wait, one more thing': { content: 'Of course, what is it?' },
      }),
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.next();
    service.finishSpeech();
    service.say('That is all');
    await service.nextOfType('speak');
    await env.llm.requests[0]!.ended;
    service.say('Oh wait, one more thing', { bargedIn: true });
    expect((await service.nextOfType('speak')).text).toBe('Of course, what is it?');
    const history = env.llm.requests[1]!.body.messages;
    const toolResult = history.find((m) => m.role === 'tool');
    expect(toolResult?.content).toMatch(/not done/);
    service.finishSpeech();
    await service.close();
    expect(service.actions.some((a) => a.type === 'hangup')).toBe(false);
  });

  test('without assistant_speech_ended the hangup still goes, after the estimated playback time', async () => {
    env = await startTestHotline(
      scriptByUserText({ Bye: { content: 'Bye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] } }),
      { PLAYBACK_GRACE_MS: '50' },
    );
    const service = await connect({ playback: { kind: 'none' } });
    service.start();
    await service.next();
    service.say('Bye');
    const bye = await service.nextOfType('speak');
    const hangup = await service.nextOfType('hangup');
    // At least the estimated time to say "Bye!" passed between the two.
    expect(hangup.receivedAt - bye.receivedAt).toBeGreaterThanOrEqual(500);
  });
});

describe('robustness', () => {
  test('duplicate events are handled once', async () => {
    env = await startTestHotline(scriptByUserText({ Hello: { content: 'Hi there.' } }));
    const service = await connect();
    service.start();
    service.start();
    await service.next();
    service.say('Hello');
    service.say('Hello');
    await service.nextOfType('speak');
    await env.llm.requests[0]!.ended;
    // One more event makes sure both duplicates were processed before counting.
    service.say('Something else');
    await service.next((a) => a.text === 'I did not understand that.');
    expect(speaksOf(service.actions).filter((t) => t === GREETING)).toHaveLength(1);
    expect(env.llm.requests).toHaveLength(2);
  });

  test('an LLM error is answered with the apology and the call goes on', async () => {
    env = await startTestHotline(
      scriptByUserText({ Break: { status: 500 }, 'Try again': { content: 'Working again.' } }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('Break');
    expect((await service.nextOfType('speak')).text).toMatch(/^I'm sorry/);
    service.say('Try again');
    expect((await service.nextOfType('speak')).text).toBe('Working again.');
  });

  test('no first token within LLM_TIMEOUT_MS: the request is aborted and the caller hears the apology', async () => {
    env = await startTestHotline(scriptByUserText({ Hang: { hang: true } }), { LLM_TIMEOUT_MS: '100' });
    const service = await connect();
    service.start();
    await service.next();
    service.say('Hang');
    expect((await service.nextOfType('speak')).text).toMatch(/^I'm sorry/);
    expect(await env.llm.requests[0]!.ended).toBe('aborted');
  });

  test('LLM_TIMEOUT_MS bounds the wait for the first token only, not a long answer', async () => {
    const text = 'This answer takes longer than the timeout. But its first token came quickly. So it is fine.';
    env = await startTestHotline(scriptByUserText({ Slow: { content: text, ttftMs: 10, tokenDelayMs: 15 } }), {
      LLM_TIMEOUT_MS: '100',
    });
    const service = await connect();
    service.start();
    await service.next();
    service.say('Slow');
    const said = [];
    for (let i = 0; i < 3; i++) said.push((await service.nextOfType('speak')).text);
    expect(said.join(' ')).toBe(text);
    expect(await env.llm.requests[0]!.ended).toBe('completed');
  });

  test('a stream that breaks mid-sentence: complete sentences are spoken, the fragment dropped, then the apology', async () => {
    env = await startTestHotline(
      scriptByUserText({ Go: { content: 'This part is complete. This part is cut off in the mid', breakAfterTokens: 9 } }),
    );
    const service = await connect();
    service.start();
    await service.next();
    service.say('Go');
    expect((await service.nextOfType('speak')).text).toBe('This part is complete.');
    expect((await service.nextOfType('speak')).text).toMatch(/^I'm sorry/);
  });

  test('malformed frames are dropped and the socket and the call survive', async () => {
    env = await startTestHotline(scriptByUserText({ 'Still there?': { content: 'Yes, still here.' } }));
    const service = await connect();
    service.start();
    await service.next();
    service.send('this is not json');
    service.send('[1,2,3]');
    service.send({ type: 'user_speak' });
    service.send({ type: 'user_speak', session: { id: service.sessionId }, text: 42 });
    service.send({ type: 'user_speak', session: { id: 'nobody-knows-me' }, text: 'hello' });
    service.send({ type: 'user_speak', session: { id: service.sessionId }, text: 'x'.repeat(20_000) });
    service.send({ type: 'user_speech_started', session: { id: service.sessionId } });
    service.send({ type: 'user_speak', session: { id: service.sessionId }, text: 'hi', __proto__: { polluted: true } });
    service.socket.send(Buffer.from([0xff, 0xfe, 0x00]));
    service.say('Still there?');
    expect((await service.nextOfType('speak')).text).toBe('Yes, still here.');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('older services: transcript instead of text, only session.id, no barged_in', async () => {
    env = await startTestHotline(scriptByUserText({ 'Old style': { content: 'Understood.' } }));
    const service = await connect();
    service.start();
    await service.next();
    service.send({ type: 'user_speak', session: { id: service.sessionId }, transcript: 'Old style' });
    expect((await service.nextOfType('speak')).text).toBe('Understood.');
  });
});

describe('transcripts', () => {
  test('each call is appended to TRANSCRIPTS_DIR/<session id>.jsonl and closed with the reason', async () => {
    env = await startTestHotline(
      scriptByUserText({
        'Tell me a story': { content: 'Once upon a time. There was a phone agent. It never talked over anyone.', tokenDelayMs: 30 },
        'Enough': { content: 'Alright.' },
      }),
    );
    const service = await connect({ playback: { kind: 'manual' } });
    service.start();
    await service.next();
    service.finishSpeech();
    service.say('Tell me a story');
    await service.nextOfType('speak');
    service.say('Enough', { bargedIn: true });
    await service.next((a) => a.text === 'Alright.');
    service.end('caller_hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.endAll('flush');
    const lines = await readTranscript(service.sessionId);
    expect(lines.map((l) => [l.role, l.text])).toEqual([
      ['event', 'session_start'],
      ['assistant', GREETING],
      ['user', 'Tell me a story'],
      ['assistant', expect.any(String)],
      ['user', 'Enough'],
      ['assistant', 'Alright.'],
      ['event', 'session_end'],
    ]);
    expect(lines[3]).toMatchObject({ interrupted: true });
    expect(lines[6]).toMatchObject({ reason: 'caller_hangup' });
    for (const line of lines) expect(typeof line.ts).toBe('string');
  });

  test('the caller’s words and the call’s end read in one tick: the words are on record before the end', async () => {
    // Hotline records a turn's start only once its request is on the wire; an event read in the same
    // tick (ws emits a chunk's messages at once) must find that done.
    env = await startTestHotline(scriptByUserText({ 'Goodbye then': { content: 'Bye now.' } }));
    const service = await connect();
    service.start();
    await service.next();
    const words = { type: 'user_speak', session: { id: service.sessionId }, text: 'Goodbye then', barged_in: false };
    const end = { type: 'session_end', session: { id: service.sessionId }, reason: 'caller_hangup' };
    // Both frames in one write, so the server reads them in one chunk.
    (Reflect.get(service.socket, '_socket') as Socket).write(Buffer.concat([clientFrame(JSON.stringify(words)), clientFrame(JSON.stringify(end))]));
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.endAll('flush');
    const lines = await readTranscript(service.sessionId);
    expect(lines.map((l) => [l.role, l.text])).toEqual([
      ['event', 'session_start'],
      ['assistant', GREETING],
      ['user', 'Goodbye then'],
      ['event', 'session_end'],
    ]);
  });

  test('a closed socket ends the call and closes its transcript', async () => {
    env = await startTestHotline(scriptByUserText({}));
    const service = await connect();
    service.start();
    await service.next();
    expect(env.hotline.registry.size).toBe(1);
    await service.close();
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.endAll('flush');
    const lines = await readTranscript(service.sessionId);
    expect(lines.at(-1)).toMatchObject({ role: 'event', text: 'session_end', reason: 'socket_closed' });
  });
});
