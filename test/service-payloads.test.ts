/**
 * The production voice service's own payloads (sipgate AI Flow: its code, SDK,
 * n8n nodes and documentation; see fixtures/service-payloads/README.md):
 * every event it sends is understood or knowingly ignored, and every action
 * its SDK accepts passes Hotline's action schema.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { AnswerSchema } from '../src/protocol/actions.js';
import { parseEvent } from '../src/protocol/parse-event.js';

const DIR = path.join(import.meta.dirname, 'fixtures', 'service-payloads');
const EVENTS_DIR = path.join(DIR, 'events');
const ACTIONS_DIR = path.join(DIR, 'actions');

const jsonFiles = (dir: string): string[] =>
  fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort();
const eventFiles = jsonFiles(EVENTS_DIR);
const actionFiles = jsonFiles(ACTIONS_DIR);
const readText = (dir: string, name: string): string => fs.readFileSync(path.join(dir, name), 'utf8');

/** What the interesting payloads must come out as; every other one is a known event of its own type. */
const EXPECTED: Record<string, unknown> = {
  'n8n-test-L299-no-type.json': { kind: 'unknown', type: '(none)', sessionId: '123' },
  'n8n-test-L223-unknown_event.json': { kind: 'unknown', type: 'unknown_event', sessionId: '123' },
  'docs-eventflow-user_barge_in.json': { kind: 'unknown', type: 'user_speak with barged_in flag', sessionId: 'session-123' },
  'n8n-test-L320-nested-body.json': { kind: 'event', event: { type: 'session_start', session: { id: '123' } } },
  'n8n-test-L138-user_speak-transcript.json': { kind: 'event', event: { type: 'user_speak', text: 'hello', barged_in: false } },
  'n8n-readme-user_speak-transcript.json': { kind: 'event', event: { type: 'user_speak', text: 'Hello', barged_in: false } },
  'n8n-test-L336-user_speak-confidence.json': {
    kind: 'event',
    event: { type: 'user_speak', text: 'hello world', barged_in: false, confidence: 0.95, session: { id: '123', caller_id: '+1234567890' } },
  },
  'n8n-test-L265-user_speak-barged_in-no-text.json': { kind: 'event', event: { type: 'user_speak', text: '', barged_in: true } },
  'derived-fio-dtmf_received.json': { kind: 'event', event: { type: 'dtmf_received', digit: '5' } },
  'derived-fio-user_barge_in-no-text.json': { kind: 'event', event: { type: 'user_barge_in', text: '' } },
  'fio-ref-user_barge_in.json': { kind: 'event', event: { type: 'user_barge_in', text: 'Wait' } },
  'derived-fio-user_input_timeout.json': { kind: 'event', event: { type: 'user_input_timeout' } },
  'n8n-test-L189-user_input_timeout.json': { kind: 'event', event: { type: 'user_input_timeout', session: { id: '123' } } },
  'derived-fio-session_end-reason.json': { kind: 'event', event: { type: 'session_end', reason: 'hangup' } },
  'n8n-trigger-readme-user_speak-eventType.json': {
    kind: 'event',
    event: { type: 'user_speak', text: 'Benutzer hat gesagt...', barged_in: false, session: { id: 'uuid' } },
  },
};

describe('service payloads: the fixture folder', () => {
  test('holds every payload (32 events, 38 actions)', () => {
    expect(eventFiles).toHaveLength(32);
    expect(actionFiles).toHaveLength(38);
    expect(fs.existsSync(path.join(DIR, 'README.md'))).toBe(true);
  });

  test('every expectation names a file that exists', () => {
    expect(Object.keys(EXPECTED).filter((name) => !eventFiles.includes(name))).toEqual([]);
  });
});

describe('service payloads: events', () => {
  test.each(eventFiles)('%s is understood or knowingly ignored', (name) => {
    const raw = readText(EVENTS_DIR, name);
    const parsed = parseEvent(raw);
    expect(parsed.kind, JSON.stringify(parsed)).not.toBe('invalid');
    const expected = EXPECTED[name];
    if (expected !== undefined) {
      expect(parsed).toMatchObject(expected as object);
    } else {
      const { type } = JSON.parse(raw) as { type: string };
      expect(parsed).toMatchObject({ kind: 'event', event: { type } });
    }
  });

  test('eventType stands in for a missing type', () => {
    const raw = JSON.parse(readText(EVENTS_DIR, 'n8n-trigger-readme-user_speak-eventType.json')) as Record<string, unknown>;
    delete raw.type;
    expect(parseEvent(JSON.stringify(raw))).toMatchObject({
      kind: 'event',
      event: { type: 'user_speak', text: 'Benutzer hat gesagt...', session: { id: 'uuid' } },
    });
  });

  test('a wrapped body is unwrapped with eventType too', () => {
    const inner = JSON.parse(readText(EVENTS_DIR, 'derived-fio-dtmf_received.json')) as Record<string, unknown>;
    const { type, ...rest } = inner;
    expect(parseEvent(JSON.stringify({ body: { ...rest, eventType: type } }))).toMatchObject({
      kind: 'event',
      event: { type: 'dtmf_received', digit: '5' },
    });
  });
});

describe('service payloads: actions', () => {
  test.each(actionFiles)('%s passes AnswerSchema', (name) => {
    const action: unknown = JSON.parse(readText(ACTIONS_DIR, name));
    const checked = AnswerSchema.safeParse(action);
    expect(checked.success, checked.error?.message).toBe(true);
    if (name.includes('-array-')) expect(Array.isArray(action)).toBe(true);
  });

  const speak = { type: 'speak', session_id: 's1', text: 'Hello' };
  const transfer = { type: 'transfer', session_id: 's1', target_phone_number: '491234567890', caller_id_name: 'Support', caller_id_number: '49301234' };
  const refused: [string, unknown][] = [
    ['speak with both text and ssml', { ...speak, ssml: '<speak>Hello</speak>' }],
    ['speak with neither text nor ssml', { type: 'speak', session_id: 's1' }],
    ['speak with a misspelt field', { ...speak, user_input_timeout_second: 8 }],
    ['speak with a misspelt barge_in', { ...speak, bargein: { strategy: 'none' } }],
    ['vad end_of_turn_silence_ms 100', { ...speak, vad: { end_of_turn_silence_ms: 100 } }],
    ['vad end_of_turn_silence_ms 3000', { ...speak, vad: { end_of_turn_silence_ms: 3000 } }],
    ['barge_in strategy "sometimes"', { ...speak, barge_in: { strategy: 'sometimes' } }],
    ['transfer with target_phone_number but no caller id', { type: 'transfer', session_id: 's1', target_phone_number: '491234567890' }],
    ['transfer with a ring timeout of 200 s', { ...transfer, timeout: 200 }],
    ['audio without audio', { type: 'audio', session_id: 's1' }],
    ['an array holding one bad action', [{ type: 'barge_in', session_id: 's1' }, { ...speak, ssml: '<speak/>' }]],
    ['an empty array', []],
  ];
  test.each(refused)('refused: %s', (_label, action) => {
    expect(AnswerSchema.safeParse(action).success).toBe(false);
  });

  test('the valid bases of those refusals pass', () => {
    expect(AnswerSchema.safeParse(speak).success).toBe(true);
    expect(AnswerSchema.safeParse({ ...transfer, timeout: 30 }).success).toBe(true);
  });
});
