import { describe, expect, test } from 'vitest';
import { ActionSchema } from '../src/protocol/actions.js';
import { parseEvent } from '../src/protocol/parse-event.js';

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

  test('unknown event types are recognised as such, not as errors', () => {
    expect(parseEvent({ type: 'dtmf_received', session, digit: '5' })).toEqual({
      kind: 'unknown',
      type: 'dtmf_received',
      sessionId: 'abc-123',
    });
  });

  test('malformed input gives a clear reason and never throws', () => {
    expect(parseEvent('{nope')).toEqual({ kind: 'invalid', reason: 'not valid JSON' });
    expect(parseEvent('[]')).toMatchObject({ kind: 'invalid' });
    expect(parseEvent({ session })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/type/) });
    expect(parseEvent({ type: 'user_speak' })).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/session/) });
    expect(parseEvent({ type: 'user_speak', session })).toMatchObject({
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
