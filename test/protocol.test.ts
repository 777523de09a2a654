import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { freezeStyle } from '../src/prompts/speak-style.js';
import { checkAction } from '../src/protocol/action-check.js';
import { ActionSchema, type Action } from '../src/protocol/actions.js';
import { describeIssues, parseEvent } from '../src/protocol/parse-event.js';
import { textFrame } from '../src/transport/ws-frame.js';

const session = { id: 'abc-123' };

describe('parseEvent', () => {
  test('accepts every event of the spec, keeping unknown extra fields', () => {
    const start = parseEvent(
      JSON.stringify({
        type: 'session_start',
        session: { ...session, account_id: 'a', phone_number: '49301', direction: 'outbound', from_phone_number: 4930, to_phone_number: '4915' },
        future_field: { nested: true },
      }),
    );
    expect(start).toMatchObject({
      kind: 'event',
      event: { type: 'session_start', future_field: { nested: true }, session: { from_phone_number: '4930' } },
    });
    for (const event of [
      { type: 'assistant_speak', session, text: 'Hi', duration_ms: 800, speech_started_at: 1700000000 },
      { type: 'assistant_speech_ended', session },
      { type: 'session_end', session, reason: 'hangup' },
      { type: 'session_end', session },
    ]) {
      expect(parseEvent(JSON.stringify(event)).kind).toBe('event');
    }
  });

  test('user_speak: transcript stands in for text, a missing barged_in is false', () => {
    expect(parseEvent({ type: 'user_speak', session, transcript: 'hello' })).toMatchObject({
      kind: 'event',
      event: { text: 'hello', barged_in: false },
    });
    expect(parseEvent({ type: 'user_speak', session, text: 'hi', barged_in: null })).toMatchObject({
      event: { text: 'hi', barged_in: false },
    });
    expect(parseEvent({ type: 'user_speak', session, text: 'hi', barged_in: true })).toMatchObject({
      event: { barged_in: true },
    });
  });

  test('user_speak without any text (a bare barge-in) is accepted with text ""', () => {
    expect(parseEvent({ type: 'user_speak', session, barged_in: true })).toMatchObject({
      kind: 'event',
      event: { type: 'user_speak', text: '', barged_in: true },
    });
    expect(parseEvent({ type: 'user_speak', session })).toMatchObject({ kind: 'event', event: { text: '', barged_in: false } });
  });

  test('unknown event types are recognised as such, not as errors', () => {
    expect(parseEvent({ type: 'call_recording_ready', session })).toEqual({
      kind: 'unknown',
      type: 'call_recording_ready',
      sessionId: 'abc-123',
    });
    expect(parseEvent({ type: 'user_speak with barged_in flag', session, text: 'Wait' })).toEqual({
      kind: 'unknown',
      type: 'user_speak with barged_in flag',
      sessionId: 'abc-123',
    });
  });

  test('an event that names no type but a session is unknown, not invalid', () => {
    expect(parseEvent({ session })).toEqual({ kind: 'unknown', type: '(none)', sessionId: 'abc-123' });
    expect(parseEvent('{"session":{"id":"abc-123"},"extra":1}')).toEqual({ kind: 'unknown', type: '(none)', sessionId: 'abc-123' });
  });

  test('an n8n body wrapper is unwrapped; eventType stands in for a missing type', () => {
    expect(parseEvent({ body: { type: 'session_start', session } })).toMatchObject({
      kind: 'event',
      event: { type: 'session_start', session: { id: 'abc-123' } },
    });
    expect(parseEvent({ body: { type: 'call_recording_ready', session } })).toEqual({
      kind: 'unknown',
      type: 'call_recording_ready',
      sessionId: 'abc-123',
    });
    expect(parseEvent({ eventType: 'user_speak', session, text: 'hi' })).toMatchObject({
      kind: 'event',
      event: { type: 'user_speak', text: 'hi' },
    });
    expect(parseEvent({ body: { eventType: 'session_end', session } })).toMatchObject({ kind: 'event', event: { type: 'session_end' } });
    // A top-level type wins: nothing is unwrapped then, and eventType is just another field.
    expect(parseEvent({ type: 'session_end', eventType: 'user_speak', session, body: { type: 'session_start', session } })).toMatchObject({
      kind: 'event',
      event: { type: 'session_end', eventType: 'user_speak' },
    });
    // A body that is no event does not hide the session beside it.
    expect(parseEvent({ session, body: { note: 'x' } })).toEqual({ kind: 'unknown', type: '(none)', sessionId: 'abc-123' });
    expect(parseEvent({ body: 'text' })).toMatchObject({ kind: 'invalid' });
    expect(parseEvent({ body: [{ type: 'session_start', session }] })).toMatchObject({ kind: 'invalid' });
  });

  test('user_input_timeout and sms_failed are events, keeping their fields', () => {
    expect(parseEvent({ type: 'user_input_timeout', session })).toEqual({
      kind: 'event',
      event: { type: 'user_input_timeout', session },
    });
    expect(parseEvent({ type: 'sms_failed', session, error: 'not enabled', phone_number: '4915' })).toEqual({
      kind: 'event',
      event: { type: 'sms_failed', session, error: 'not enabled', phone_number: '4915' },
    });
  });

  test('dtmf_received: one keypad key, as a string', () => {
    for (const [digit, key] of [
      ['5', '5'],
      [7, '7'],
      [0, '0'],
      ['*', '*'],
      ['#', '#'],
      ['a', 'A'],
      ['D', 'D'],
      [' 9 ', '9'],
    ] as const) {
      expect(parseEvent({ type: 'dtmf_received', session, digit })).toEqual({
        kind: 'event',
        event: { type: 'dtmf_received', session, digit: key },
      });
    }
    for (const digit of ['55', 'x', '', 'E', 12, 1.5, -1, null, true, ['5']]) {
      expect(parseEvent({ type: 'dtmf_received', session, digit }), JSON.stringify(digit)).toMatchObject({
        kind: 'invalid',
        sessionId: 'abc-123',
        reason: expect.stringMatching(/^dtmf_received: digit: .*digit/),
      });
    }
    expect(parseEvent({ type: 'dtmf_received', session })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/digit/) });
  });

  test('user_barge_in: text (or transcript), trimmed, is what the caller said; "" when absent', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, ''],
      [{ text: '  Wait  ' }, 'Wait'],
      [{ text: '' }, ''],
      [{ text: null }, ''],
      [{ transcript: 'stop' }, 'stop'],
      [{ text: 'hold on', transcript: 'ignored' }, 'hold on'],
    ];
    for (const [fields, said] of cases) {
      expect(parseEvent({ type: 'user_barge_in', session, ...fields, extra: 1 })).toMatchObject({
        kind: 'event',
        event: { type: 'user_barge_in', session, text: said, extra: 1 },
      });
    }
    expect(parseEvent({ type: 'user_barge_in', session, text: 5 })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/text/) });
  });

  test('malformed input gives a clear reason and never throws', () => {
    expect(parseEvent('{nope')).toEqual({ kind: 'invalid', reason: 'not valid JSON' });
    expect(parseEvent('[]')).toMatchObject({ kind: 'invalid' });
    expect(parseEvent({ note: 'no session' })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/type/) });
    expect(parseEvent({ session: { id: ' ' } })).toMatchObject({ kind: 'invalid' });
    expect(parseEvent({ type: 42, session })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/type/) });
    expect(parseEvent({ type: 'user_speak' })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/session/) });
    expect(parseEvent({ type: 'user_speak', session, text: 42 })).toMatchObject({
      kind: 'invalid',
      sessionId: 'abc-123',
      reason: expect.stringMatching(/text/),
    });
    expect(parseEvent({ type: 'user_speak', session, text: 'x'.repeat(10_001) })).toMatchObject({ kind: 'invalid' });
  });

  test('__proto__ keys are dropped, never merged into a prototype', () => {
    const parsed = parseEvent('{"type":"user_speak","session":{"id":"s"},"text":"hi","__proto__":{"polluted":1}}');
    expect(parsed.kind).toBe('event');
    expect(Object.getPrototypeOf(parsed.kind === 'event' ? parsed.event : {})).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('a __proto__ key spelled with escapes is dropped too', () => {
    for (const key of ['\\u005f_proto__', '__\\u0070roto__', '\\u005F\\u005Fproto\\u005f\\u005f']) {
      const parsed = parseEvent(`{"type":"user_speak","session":{"id":"s","${key}":{"polluted":1}},"text":"hi","${key}":{"polluted":1}}`);
      if (parsed.kind !== 'event') throw new Error(`not parsed: ${JSON.stringify(parsed)}`);
      expect(Object.hasOwn(parsed.event, '__proto__')).toBe(false);
      expect(Object.hasOwn(parsed.event.session, '__proto__')).toBe(false);
      expect(Object.getPrototypeOf(parsed.event)).toBe(Object.prototype);
      expect((parsed.event as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});

describe('ActionSchema', () => {
  test('exactly the fields of the spec leave Hotline', () => {
    expect(ActionSchema.safeParse({ type: 'speak', session_id: 's', text: 'Hi' }).success).toBe(true);
    expect(ActionSchema.safeParse({ type: 'speak', session_id: 's', text: '' }).success).toBe(false);
    expect(ActionSchema.safeParse({ type: 'speak', session_id: 's', text: 'Hi', txt: 'typo' }).success).toBe(false);
    expect(ActionSchema.safeParse({ type: 'transfer', session_id: 's', target: '4930' }).success).toBe(true);
    expect(ActionSchema.safeParse({ type: 'transfer', session_id: 's' }).success).toBe(false);
    expect(ActionSchema.safeParse({ type: 'hangup', session_id: 's' }).success).toBe(true);
  });
});

describe('checkAction: the transport\'s check, zod kept off the way of every streamed sentence', () => {
  const style = freezeStyle({ tts: { provider: 'azure', voice: 'de-DE-KatjaNeural' }, barge_in: { strategy: 'minimum_characters', minimum_characters: 3 }, vad: { end_of_turn_silence_ms: 500 } });
  const speak = (fields: Record<string, unknown>): Record<string, unknown> => ({ type: 'speak', session_id: 's', ...fields });

  test('says what ActionSchema says of speaks right and wrong, and of every other action', () => {
    const cases: Record<string, unknown>[] = [
      speak({ text: 'Hi' }),
      speak({ ssml: '<speak>Hi</speak>' }),
      speak({ text: 'Hi', ...style, user_input_timeout_seconds: 8 }),
      speak({ text: 'Hi', ssml: '<speak>Hi</speak>' }),
      speak({}),
      speak({ text: '' }),
      speak({ text: 'Hi', txt: 'typo' }),
      speak({ text: 'Hi', session_id: '' }),
      speak({ text: 'Hi', user_input_timeout_seconds: 0 }),
      speak({ text: 'Hi', user_input_timeout_seconds: 3601 }),
      speak({ text: 'Hi', user_input_timeout_seconds: Number.NaN }),
      speak({ text: 42 }),
      // Options not frozen, or wrong: the schema itself judges them, every time.
      speak({ text: 'Hi', barge_in: { strategy: 'sometimes' } }),
      speak({ text: 'Hi', barge_in: Object.freeze({ strategy: 'sometimes' }) }),
      speak({ text: 'Hi', vad: { end_of_turn_silence_ms: 500 } }),
      speak({ text: 'Hi', tts: Object.freeze({ provider: 'eleven_labs', voice: Object.freeze({ name: 'Rachel' }) }) }),
      { type: 'hangup', session_id: 's' },
      { type: 'transfer', session_id: 's' },
      { type: 'audio', session_id: 's', audio: 'UklGR' },
    ];
    for (const action of cases) {
      // Twice: the second time, frozen options the schema passed are known.
      for (let i = 0; i < 2; i++) expect(checkAction(action as Action).success, JSON.stringify(action)).toBe(ActionSchema.safeParse(action).success);
    }
  });

  test('a passed speak goes out as it is; a refused one says why as zod does', () => {
    const action = speak({ text: 'Hi', ...style }) as Action;
    expect(checkAction(action)).toEqual({ success: true, data: action });
    const refused = checkAction(speak({ text: 'Hi', txt: 'typo' }) as Action);
    expect(refused.success).toBe(false);
    if (!refused.success) expect(describeIssues(refused.error)).toMatch(/txt/);
  });
});

describe('textFrame: a frame in one write', () => {
  test('a ws client reads it as the text sent, at every length class and in UTF-8', async () => {
    const texts = ['Hi', 'é'.repeat(100), 'x'.repeat(125), 'y'.repeat(126), 'ü€'.repeat(20_000), 'z'.repeat(65_536)];
    const server = createServer();
    const wss = new WebSocketServer({ server });
    // Written past ws to the socket itself, as the transport writes them.
    wss.on('connection', (_ws, request) => {
      for (const text of texts) request.socket.write(textFrame(text));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = new WebSocket(`ws://127.0.0.1:${port}`);
    const received: { text: string; binary: boolean }[] = [];
    await new Promise<void>((resolve, reject) => {
      client.on('message', (data: Buffer, binary: boolean) => {
        received.push({ text: data.toString('utf8'), binary });
        if (received.length === texts.length) resolve();
      });
      client.once('error', reject);
    });
    client.close();
    wss.close();
    await new Promise((resolve) => server.close(resolve));
    expect(received).toEqual(texts.map((text) => ({ text, binary: false })));
  });
});
