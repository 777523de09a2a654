/**
 * Property-based fuzzing of both transports against one real Hotline per describe block.
 *
 * Every property run sends random and mutated events (wrong types, deleted fields, unknown types,
 * missing session ids, huge strings, 1000+ levels of nesting, `__proto__` / `constructor` /
 * `prototype` keys written into the raw JSON text, invalid UTF-8, binary frames, empty bodies,
 * non-JSON content types, `fc.json()` noise, `fc.record` + `fc.anything()` event shapes), then checks:
 *
 * - the webhook's answer contract (no 5xx, `{error}`-only 4xx bodies, no stack traces),
 * - no prototype pollution (sentinels on `{}` and the own keys of the built-in prototypes),
 * - no unhandled rejection / uncaught exception in this process (Hotline runs in-process),
 * - a call still works afterwards: over WebSocket the SAME session on the SAME socket answers a
 *   `user_speak` (a new connection only when the socket was closed by design: 1009 for an oversize
 *   frame), over webhook a new session is greeted and answered.
 *
 * Found by this file and fixed: an otherwise valid event carrying ~2200–2650 levels of nested arrays
 * passed JSON.parse and the schema, then overflowed the stack in the duplicate filter (a webhook 500,
 * and over WebSocket a call created but never greeted nor ended). Events nested deeper than
 * MAX_EVENT_DEPTH are now refused by the parser; the two "deeply nested arrays" sweeps guard it.
 *
 * A TEXT frame that is not valid UTF-8 would, by RFC 6455, close the socket (1007) and end its calls;
 * Hotline decodes it leniently instead and drops it like any malformed frame, so the call survives.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import type { Script } from '../src/llm/scripted-server.js';
import { FakeVoiceService, type ReceivedAction } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';

const GREETING = 'Hello, thanks for calling! How can I help you today?';
/** WEBHOOK_MAX_BYTES: the webhook's 413 limit and the WebSocket's maxPayload (close 1009). */
const MAX_BYTES = 64 * 1024;
const HOTLINE_ENV = {
  WEBHOOK_MAX_BYTES: String(MAX_BYTES),
  // Thousands of requests in a few seconds from one address: the limiter is not what is fuzzed here.
  RATE_LIMIT_WEBHOOK_PER_MINUTE: '0',
  RATE_LIMIT_WS_PER_MINUTE: '0',
};
const WEBHOOK_RUNS = 100;
const WS_RUNS = 120;

/** The LLM answers `ping-<tag>` with a sentence carrying the tag, anything else with a short line. */
const script: Script = (request) => {
  const tag = /ping-([a-z0-9]+)/.exec(lastUserText(request))?.[1];
  return { content: tag ? `Pong ${tag} received.` : 'Fuzz reply.' };
};

// ---------------------------------------------------------------------------------------------
// Process health: crashes, unhandled rejections, prototype pollution
// ---------------------------------------------------------------------------------------------

const faults: string[] = [];
function onUnhandledRejection(reason: unknown): void {
  faults.push(`unhandledRejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
}
function onUncaughtException(error: Error): void {
  faults.push(`uncaughtException: ${error.stack ?? error.message}`);
}

const SENTINELS = ['polluted', 'fuzzPolluted', 'isAdmin', 'type', 'session', 'id', 'text'];
const PROTOTYPES: ReadonlyArray<readonly [string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
];
type OwnSnapshot = Map<string | symbol, unknown>;
const prototypeSnapshots = new Map<string, OwnSnapshot>();

function ownSnapshot(target: object): OwnSnapshot {
  const snapshot: OwnSnapshot = new Map();
  for (const key of Reflect.ownKeys(target)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
    snapshot.set(key, descriptor && 'value' in descriptor ? descriptor.value : descriptor?.get);
  }
  return snapshot;
}

function expectNoPollution(): void {
  const probe: Record<string, unknown> = {};
  for (const key of SENTINELS) expect(probe[key], `({}).${key} after fuzzing`).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(
    [...(prototypeSnapshots.get('Object.prototype')?.keys() ?? [])].filter((k): k is string => typeof k === 'string'),
  );
  for (const [name, proto] of PROTOTYPES) {
    const before = prototypeSnapshots.get(name);
    const now = ownSnapshot(proto);
    expect([...now.keys()].map(String), `own keys of ${name}`).toEqual([...(before?.keys() ?? [])].map(String));
    for (const [key, value] of before ?? []) {
      expect(now.get(key) === value, `${name}.${String(key)} was replaced`).toBe(true);
    }
  }
}

function expectHealthy(): void {
  expect(faults, 'unhandled rejections / uncaught exceptions').toEqual([]);
  expectNoPollution();
}

beforeAll(() => {
  for (const [name, proto] of PROTOTYPES) prototypeSnapshots.set(name, ownSnapshot(proto));
  process.on('unhandledRejection', onUnhandledRejection);
  process.on('uncaughtException', onUncaughtException);
});

afterAll(() => {
  process.off('unhandledRejection', onUnhandledRejection);
  process.off('uncaughtException', onUncaughtException);
});

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function bytesOf(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

function preview(bytes: Uint8Array): string {
  return `${JSON.stringify(Buffer.from(bytes.subarray(0, 160)).toString('utf8'))} (${bytes.length} bytes)`;
}

/** Makes fast-check print a generated value as a short line instead of every byte. */
function printable<T extends object>(value: T, text: string): T {
  Object.defineProperty(value, fc.toStringMethod, { value: () => text, enumerable: false });
  return value;
}

/** A stack trace or an internal path in a response body. */
const LEAK_PATTERNS = [
  /\bat\s+[^\s(]*\s*\(?[^\s()]+\.(?:[cm]?[jt]sx?):\d+/,
  /\(\S+:\d+:\d+\)/,
  /\b\w*Error:.*[/\\]\S+/,
  /node_modules/,
  /file:\/\//,
];

function expectNoLeak(text: string, context: string): void {
  for (const pattern of LEAK_PATTERNS) expect(text, `${context}: body leaks internals (${pattern})`).not.toMatch(pattern);
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const KNOWN_TYPES = [
  'session_start',
  'user_speak',
  'assistant_speak',
  'assistant_speech_ended',
  'session_end',
  'user_speech_started',
  'dtmf_received',
  'user_input_timeout',
  'user_barge_in',
  'sms_failed',
] as const;
type KnownType = (typeof KNOWN_TYPES)[number];
const KNOWN_TYPE_SET: ReadonlySet<string> = new Set(KNOWN_TYPES);
const UNKNOWN_TYPES = [
  'call_recording_ready',
  'Session_Start',
  'session_start ',
  'user-speak',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'x'.repeat(100),
];
const WEIRD_IDS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '../../etc/passwd',
  '..',
  '.',
  ' padded ',
  'a/b\\c',
  'nul\u0000byte',
  'line\nbreak',
  '😀😀😀',
  'x'.repeat(200),
  'x'.repeat(201),
  ' ',
  '',
];

/** `user_speak` texts, valid and not. */
const textArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('Hello?', 'What are your opening hours?', '', ' ', '**bold** 😀', '\u0000\u0007', '\ud800', 'x'.repeat(10_001)),
);

function template(type: KnownType, id: string, text: string, direction: string): Record<string, unknown> {
  const session = { id };
  switch (type) {
    case 'session_start':
      return {
        type,
        session: {
          id,
          account_id: 'acc-fuzz',
          phone_number: '4930123456',
          direction,
          from_phone_number: '4915112345678',
          to_phone_number: '4930123456',
        },
      };
    case 'user_speak':
      return { type, session, text, barged_in: false };
    case 'assistant_speak':
      return { type, session, text, duration_ms: 500, speech_started_at: 1_700_000_000_000 };
    case 'assistant_speech_ended':
    case 'user_speech_started':
    case 'user_input_timeout':
    case 'sms_failed':
      return { type, session };
    case 'dtmf_received':
      return { type, session, digit: text.slice(0, 1) || '5' };
    case 'user_barge_in':
      return { type, session, text };
    case 'session_end':
      return { type, session, reason: 'hangup' };
  }
}

const MUTABLE_PATHS: ReadonlyArray<readonly string[]> = [
  ['type'],
  ['session'],
  ['session', 'id'],
  ['text'],
  ['transcript'],
  ['barged_in'],
  ['duration_ms'],
  ['speech_started_at'],
  ['reason'],
  ['session', 'direction'],
  ['session', 'from_phone_number'],
  ['session', 'to_phone_number'],
  ['session', 'account_id'],
  ['extra'],
  ['session', 'extra'],
];

/** Values of the wrong type (or wrong content) for any field. */
const wrongValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', ' ', '0', 'true', 'null', '[]', '{}', 'x'.repeat(101), ...KNOWN_TYPES, ...UNKNOWN_TYPES),
  fc.anything({ maxDepth: 2, maxKeys: 3 }),
);

type Mutation = { op: 'delete'; path: readonly string[] } | { op: 'set'; path: readonly string[]; value: unknown };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...MUTABLE_PATHS) }),
  fc.record({ op: fc.constant('set' as const), path: fc.constantFrom(...MUTABLE_PATHS), value: wrongValueArb }),
);

function applyMutation(event: Record<string, unknown>, mutation: Mutation): void {
  let node: unknown = event;
  for (const key of mutation.path.slice(0, -1)) {
    if (!isRecord(node)) return;
    node = node[key];
  }
  const last = mutation.path.at(-1);
  if (!isRecord(node) || last === undefined) return;
  if (mutation.op === 'delete') delete node[last];
  else node[last] = mutation.value;
}

interface Payload {
  label: string;
  data: string | Uint8Array;
  /** Nested so deeply that Hotline's parser may give up (400) where the test's does not. */
  deep?: boolean;
}

/** Raw JSON text, with `members` (e.g. `"__proto__":{…}`) written into every object. */
function rawJson(value: unknown, members: readonly string[], where: 'before' | 'after'): string {
  if (Array.isArray(value)) return `[${value.map((v) => rawJson(v, members, where)).join(',')}]`;
  if (isRecord(value)) {
    const own = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${rawJson(v, members, where)}`);
    return `{${(where === 'before' ? [...members, ...own] : [...own, ...members]).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const PROTO_MEMBERS = [
  '"__proto__":{"polluted":"yes","fuzzPolluted":true}',
  '"__proto__":{"toString":"pwned","valueOf":1,"hasOwnProperty":null}',
  '"constructor":{"prototype":{"polluted":"yes","isAdmin":true}}',
  '"prototype":{"polluted":"yes"}',
  '"__proto__":{"__proto__":{"polluted":"yes"}}',
  '"__proto__":null',
  '"__proto__":[{"polluted":"yes"}]',
  '"__proto__":"polluted"',
  '"constructor":{"name":"Polluted","prototype":null}',
  '"__proto__":{"type":"assistant_speech_ended","session":{"id":"x"},"text":"injected","id":"x"}',
];

interface DeepPattern {
  name: string;
  open: string;
  close: string;
  leaf: string;
}
const DEEP_PATTERNS: DeepPattern[] = [
  { name: 'objects', open: '{"a":', close: '}', leaf: '1' },
  { name: '__proto__ objects', open: '{"__proto__":', close: '}', leaf: '{"polluted":"yes"}' },
  { name: 'constructor.prototype', open: '{"constructor":{"prototype":', close: '}}', leaf: '{"polluted":"yes"}' },
  { name: 'arrays of objects', open: '[{"k":', close: '}]', leaf: 'null' },
];
const PURE_ARRAYS: DeepPattern = { name: 'arrays', open: '[', close: ']', leaf: '' };

function nested(pattern: DeepPattern, depth: number): string {
  return pattern.open.repeat(depth) + pattern.leaf + pattern.close.repeat(depth);
}

/** Byte sequences that are not UTF-8: BOM-like garbage, a lone surrogate (ED A0 80), overlongs, truncations. */
const INVALID_UTF8: ReadonlyArray<readonly number[]> = [
  [0xff, 0xfe],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
  [0xc3],
  [0xf4, 0x90, 0x80, 0x80],
];

interface PayloadOptions {
  /** Session ids to aim events at. */
  ids: fc.Arbitrary<string>;
  /** Largest huge string, in bytes. */
  maxHuge: number;
  /** Largest deeply nested body, in bytes. */
  maxDeepBytes: number;
}

function payloadArb(options: PayloadOptions): fc.Arbitrary<Payload> {
  const { ids } = options;
  const directionArb = fc.constantFrom('inbound', 'outbound', 'sideways');
  const baseEvent = fc
    .record({ type: fc.constantFrom(...KNOWN_TYPES), id: ids, text: textArb, direction: directionArb })
    .map(({ type, id, text, direction }) => template(type, id, text, direction));

  const mutated = fc
    .record({ event: baseEvent, mutations: fc.array(mutationArb, { maxLength: 3 }) })
    .map(({ event, mutations }): Payload => {
      for (const mutation of mutations) applyMutation(event, mutation);
      const steps = mutations.map((m) => `${m.op} ${m.path.join('.')}`).join(', ');
      return { label: `mutated event (${steps || 'valid'})`, data: JSON.stringify(event) };
    });

  const unknownType = fc
    .record({
      type: fc.oneof(
        fc.constantFrom(...UNKNOWN_TYPES),
        fc.string({ minLength: 1, maxLength: 30 }).filter((t) => !KNOWN_TYPE_SET.has(t)),
      ),
      id: ids,
      extra: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    })
    .map(({ type, id, extra }): Payload => ({ label: `unknown type ${JSON.stringify(type)}`, data: JSON.stringify({ ...extra, type, session: { id } }) }));

  const missingSession = fc
    .record({
      type: fc.constantFrom(...KNOWN_TYPES, ...UNKNOWN_TYPES),
      variant: fc.constantFrom('no session', 'no id', 'null session', 'array session', 'string session', 'empty id', 'blank id', 'long id', 'number id', 'null id'),
    })
    .map(({ type, variant }): Payload => {
      const sessions: Record<string, unknown> = {
        'no session': undefined,
        'no id': { direction: 'inbound' },
        'null session': null,
        'array session': [{ id: 'x' }],
        'string session': 'x',
        'empty id': { id: '' },
        'blank id': { id: ' \t\n ' },
        'long id': { id: 'y'.repeat(201) },
        'number id': { id: 42 },
        'null id': { id: null },
      };
      return { label: `${variant} (${type})`, data: JSON.stringify({ type, session: sessions[variant], text: 'hello' }) };
    });

  const jsonNoise = fc.oneof(
    fc.jsonValue().map((value): Payload => ({ label: 'fc.jsonValue()', data: JSON.stringify(value) })),
    fc.json().map((text): Payload => ({ label: 'fc.json()', data: text })),
  );

  const anyShape = { maxDepth: 2, maxKeys: 3 };
  const recordAnything = fc
    .record(
      {
        type: fc.oneof(fc.constantFrom(...KNOWN_TYPES, ...UNKNOWN_TYPES), fc.anything(anyShape)),
        session: fc.oneof(
          fc.record(
            { id: fc.oneof(ids, fc.anything(anyShape)), direction: fc.anything(anyShape), from_phone_number: fc.anything(anyShape) },
            { requiredKeys: ['id'] },
          ),
          fc.anything(anyShape),
        ),
        text: fc.anything(anyShape),
        transcript: fc.anything(anyShape),
        barged_in: fc.anything(anyShape),
        duration_ms: fc.anything(anyShape),
        reason: fc.anything(anyShape),
      },
      { requiredKeys: [] },
    )
    .map((event): Payload => ({ label: 'fc.record + fc.anything()', data: JSON.stringify(event) }));

  const protoKeys = fc
    .record({
      event: baseEvent,
      id: fc.oneof(ids, fc.constantFrom('__proto__', 'constructor', 'prototype')),
      members: fc.subarray(PROTO_MEMBERS, { minLength: 1, maxLength: 3 }),
      where: fc.constantFrom('before' as const, 'after' as const),
    })
    .map(({ event, id, members, where }): Payload => {
      const withNesting = { ...event, session: { ...(isRecord(event.session) ? event.session : {}), id }, meta: { a: { b: { c: {} } }, list: [{}, { k: {} }] } };
      return { label: `__proto__/constructor/prototype keys at every level (${where})`, data: rawJson(withNesting, members, where) };
    });

  const deepPatternAndDepth = fc.oneof(
    fc.record({ pattern: fc.constantFrom(...DEEP_PATTERNS), depth: fc.integer({ min: 1000, max: 6000 }) }),
    // Pure arrays stay out of the 1900–3400 window of the known stableStringify overflow (see the header).
    fc.record({
      pattern: fc.constant(PURE_ARRAYS),
      depth: fc.oneof(fc.integer({ min: 1000, max: 1800 }), fc.integer({ min: 3500, max: 8000 })),
    }),
  );
  const deep = fc
    .record({
      shape: deepPatternAndDepth,
      where: fc.constantFrom('extra field', 'session extra field', 'session', 'text', 'whole body'),
      type: fc.constantFrom(...KNOWN_TYPES),
      id: ids,
    })
    .map(({ shape: { pattern, depth: wanted }, where, type, id }): Payload => {
      const perLevel = pattern.open.length + pattern.close.length;
      const depth = Math.max(1000, Math.min(wanted, Math.floor((options.maxDeepBytes - 300) / perLevel)));
      const value = nested(pattern, depth);
      const idJson = JSON.stringify(id);
      let data: string;
      switch (where) {
        case 'extra field':
          data = `${JSON.stringify(template(type, id, 'hello', 'inbound')).slice(0, -1)},"x":${value}}`;
          break;
        case 'session extra field':
          data = `{"type":"${type}","session":{"id":${idJson},"x":${value}},"text":"hello"}`;
          break;
        case 'session':
          data = `{"type":"${type}","session":${value}}`;
          break;
        case 'text':
          data = `{"type":"user_speak","session":{"id":${idJson}},"text":${value}}`;
          break;
        case 'whole body':
          data = value;
          break;
      }
      return { label: `${depth} levels of ${pattern.name} in the ${where}`, data, deep: true };
    });

  const huge = fc
    .record({
      event: baseEvent,
      unit: fc.constantFrom('x', 'é', '€', '😀', ' ', '"', '\\', '\u0000'),
      size: fc.integer({ min: 1, max: options.maxHuge }),
      where: fc.constantFrom('text', 'extra', 'session extra', 'session id', 'type', 'padding'),
    })
    .map(({ event, unit, size, where }): Payload => {
      const unitBytes = Buffer.byteLength(JSON.stringify(unit)) - 2;
      const big = unit.repeat(Math.max(1, Math.ceil(size / unitBytes)));
      const session = isRecord(event.session) ? event.session : {};
      let data: string;
      switch (where) {
        case 'text':
          data = JSON.stringify({ ...event, text: big });
          break;
        case 'extra':
          data = JSON.stringify({ ...event, extra: big });
          break;
        case 'session extra':
          data = JSON.stringify({ ...event, session: { ...session, extra: big } });
          break;
        case 'session id':
          data = JSON.stringify({ ...event, session: { ...session, id: big } });
          break;
        case 'type':
          data = JSON.stringify({ ...event, type: big });
          break;
        case 'padding':
          data = `${' '.repeat(Math.floor(size / 2))}${JSON.stringify(event)}${'\n'.repeat(Math.ceil(size / 2))}`;
          break;
      }
      return { label: `huge string (${size} bytes of ${JSON.stringify(unit)}) in ${where}`, data };
    });

  const eventText = baseEvent.map((event) => JSON.stringify(event));
  const badBytes = fc.constantFrom(...INVALID_UTF8);
  const invalidUtf8 = fc.oneof(
    fc.record({ text: eventText, bad: badBytes, at: fc.nat() }).map(({ text, bad, at }): Payload => {
      const bytes = Buffer.from(text, 'utf8');
      const index = at % (bytes.length + 1);
      return {
        label: `bytes ${bad.map((b) => b.toString(16)).join(' ')} spliced into an event at ${index}`,
        data: Buffer.concat([bytes.subarray(0, index), Buffer.from(bad), bytes.subarray(index)]),
      };
    }),
    fc.record({ type: fc.constantFrom(...KNOWN_TYPES), bad: badBytes }).map(({ type, bad }): Payload => ({
      label: `bytes ${bad.map((b) => b.toString(16)).join(' ')} inside the session id of ${type}`,
      data: Buffer.concat([Buffer.from(`{"type":"${type}","session":{"id":"fz-`), Buffer.from(bad), Buffer.from('-id"},"text":"hi"}')]),
    })),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((rest): Payload => ({
      label: 'ff fe + random bytes',
      data: Buffer.concat([Buffer.from([0xff, 0xfe]), rest]),
    })),
    eventText.map((text): Payload => ({
      label: 'UTF-16LE with a BOM',
      data: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    })),
  );

  const edge = fc
    .constantFrom(
      '',
      ' ',
      '\n',
      'null',
      'true',
      '0',
      '""',
      '[]',
      '{}',
      '{"type":"session_start"}',
      '\uFEFF{"type":"session_start","session":{"id":"bom"}}',
      '{"type":"session_start","session":{"id":"trailing"}} garbage',
      '{"type":"session_start","session":{"id":"dup-type"},"type":"nope"}',
      '{"type":"session_start","session":{"id":"dup-session"},"session":null}',
      '{"type":"session_start","session":{"id":"unterminated"',
    )
    .map((data): Payload => ({ label: `edge body ${JSON.stringify(data)}`, data }));

  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: unknownType },
    { weight: 2, arbitrary: missingSession },
    { weight: 2, arbitrary: jsonNoise },
    { weight: 3, arbitrary: recordAnything },
    { weight: 3, arbitrary: protoKeys },
    { weight: 2, arbitrary: deep },
    { weight: 2, arbitrary: huge },
    { weight: 2, arbitrary: invalidUtf8 },
    { weight: 1, arbitrary: edge },
  );
}

const freshIdArb = fc.uuid().map((u) => `fuzz-${u}`);
const weirdIdArb = fc.oneof(fc.constantFrom(...WEIRD_IDS), fc.string({ unit: 'binary', maxLength: 40 }));

// ---------------------------------------------------------------------------------------------
// The webhook's oracle: what a body may be answered with, decided independently of Hotline
// ---------------------------------------------------------------------------------------------

const S = (...statuses: number[]): ReadonlySet<number> => new Set(statuses);

/** From the envelope rules alone: 400 for a bad type / no session.id, 204 for unknown types, else 200/204/400. */
function envelopeOracle(value: unknown): ReadonlySet<number> {
  if (!isRecord(value)) return S(400);
  // No type: an `eventType`, an n8n `{body}` wrapper, or a bare session (ignored) may still make it an event.
  if (value.type === undefined) return S(200, 204, 400);
  const { type, session } = value;
  if (typeof type !== 'string' || type.length < 1 || type.length > 100) return S(400);
  if (!isRecord(session) || typeof session.id !== 'string') return S(400);
  const id = session.id.trim();
  if (id.length < 1 || id.length > 200) return S(400);
  if (!KNOWN_TYPE_SET.has(type)) return S(204);
  return S(200, 204, 400);
}

function bodyOracle(bytes: Uint8Array, deep: boolean): ReadonlySet<number> {
  if (bytes.length > MAX_BYTES) return S(413);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return S(400);
  }
  const allowed = envelopeOracle(value);
  // Hotline's parser (with a reviver) gives up earlier on deep nesting: "not valid JSON".
  return deep ? new Set([...allowed, 400]) : allowed;
}

interface ContentType {
  /** null: no Content-Type header at all. */
  value: string | null;
  json: 'yes' | 'no' | 'maybe';
}
const contentTypeArb: fc.Arbitrary<ContentType> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .constantFrom('application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/cloudevents+json', 'application/vnd.voice.event+json')
      .map((value): ContentType => ({ value, json: 'yes' })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(null, 'text/plain', 'text/json', 'text/html', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=fuzz', 'application/octet-stream', 'image/png')
      .map((value): ContentType => ({ value, json: 'no' })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('application/json; charset=utf-16', 'Application/JSON', 'application/json;;', 'json', '*/*', 'application/*', 'application/json, text/plain', 'application/json; foo')
      .map((value): ContentType => ({ value, json: 'maybe' })),
  },
);

interface WebhookCase {
  label: string;
  body: Uint8Array;
  contentType: string | null;
  allowed: ReadonlySet<number>;
}

function webhookCaseArb(options: PayloadOptions): fc.Arbitrary<WebhookCase> {
  return fc.record({ payload: payloadArb(options), contentType: contentTypeArb }).map(({ payload, contentType }) => {
    const body = bytesOf(payload.data);
    const content = bodyOracle(body, payload.deep ?? false);
    const allowed = contentType.json === 'no' ? S(415) : contentType.json === 'maybe' ? new Set([415, ...content]) : content;
    const label = `${payload.label} as ${contentType.value ?? '(no content type)'}`;
    return printable({ label, body, contentType: contentType.value, allowed }, `${label}: ${preview(body)} → one of [${[...allowed].join(', ')}]`);
  });
}

// ---------------------------------------------------------------------------------------------
// Webhook
// ---------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  text: string;
}

const ACTION_TYPES = new Set(['speak', 'transfer', 'hangup', 'audio']);

describe('webhook fuzzing (one Hotline)', () => {
  let env: TestHotline;
  const LIVE_ID = `fuzz-live-${randomUUID()}`;

  beforeAll(async () => {
    env = await startTestHotline(script, HOTLINE_ENV);
    const started = await post(JSON.stringify({ type: 'session_start', session: { id: LIVE_ID, direction: 'inbound' } }));
    expect(started.status).toBe(200);
  });

  afterAll(async () => {
    // Whatever was fuzzed in, every request Hotline made to the LLM was a valid one.
    expect(env.llm.requests.map((r) => r.validationError).filter(Boolean)).toEqual([]);
    await env.close();
  });

  /** `contentType: null` sends no Content-Type header. */
  async function post(body: string | Uint8Array, contentType: string | null = 'application/json', headers: Record<string, string> = {}): Promise<Answer> {
    const all: Record<string, string> = { ...headers };
    if (contentType !== null) all['content-type'] = contentType;
    const res = await fetch(`${env.hotline.url}/webhook`, {
      method: 'POST',
      headers: all,
      body: bytesOf(body),
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, text: await res.text() };
  }

  /** The answer contract, whatever was sent. */
  function expectContract(answer: Answer, context: string): void {
    expect(answer.status, `${context}: no 5xx, got ${answer.status} ${answer.text.slice(0, 200)}`).toBeLessThan(500);
    if (answer.status === 204) {
      expect(answer.text, `${context}: 204 has no body`).toBe('');
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      throw new Error(`${context}: ${answer.status} body is not JSON: ${answer.text.slice(0, 200)}`);
    }
    if (answer.status === 200) {
      expect(isRecord(body) && ACTION_TYPES.has(String(body.type)) && typeof body.session_id === 'string', `${context}: 200 is one action, got ${answer.text.slice(0, 200)}`).toBe(true);
      return;
    }
    expect(isRecord(body) ? Object.keys(body) : body, `${context}: a ${answer.status} body is exactly {error}`).toEqual(['error']);
    expect(isRecord(body) && typeof body.error === 'string', `${context}: error is a string`).toBe(true);
    expectNoLeak(answer.text, context);
  }

  /** A new call is greeted and answered. */
  async function expectWebhookCallWorks(): Promise<void> {
    const id = `fuzz-check-${randomUUID()}`;
    const start = await post(JSON.stringify({ type: 'session_start', session: { id, direction: 'inbound' } }));
    expect(start.status, `session_start after fuzzing: ${start.text}`).toBe(200);
    expect(JSON.parse(start.text)).toMatchObject({ type: 'speak', session_id: id, text: GREETING });
    const tag = `w${randomUUID().slice(0, 8)}`;
    const reply = await post(JSON.stringify({ type: 'user_speak', session: { id }, text: `ping-${tag}` }));
    expect(reply.status, `user_speak after fuzzing: ${reply.text}`).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ type: 'speak', session_id: id, text: expect.stringContaining(tag) });
    await post(JSON.stringify({ type: 'session_end', session: { id }, reason: 'hangup' }));
  }

  const options: PayloadOptions = {
    ids: fc.oneof({ weight: 2, arbitrary: fc.constant(LIVE_ID) }, { weight: 3, arbitrary: freshIdArb }, { weight: 2, arbitrary: weirdIdArb }),
    maxHuge: 200_000,
    maxDeepBytes: 3 * MAX_BYTES,
  };

  test('deep nesting: 10 levels in an extra field are greeted; 1000 and 10 000 levels are a 400; 100 000 levels a 413', async () => {
    for (const pattern of [...DEEP_PATTERNS, PURE_ARRAYS]) {
      const id = `deep-${randomUUID()}`;
      const shallow = await post(`{"type":"session_start","session":{"id":"${id}"},"x":${nested(pattern, 10)}}`);
      expect(shallow.status, `${pattern.name}: ${shallow.text}`).toBe(200);
      expect(JSON.parse(shallow.text)).toMatchObject({ type: 'speak', session_id: id, text: GREETING });
      const deep = await post(`{"type":"session_start","session":{"id":"deep-${randomUUID()}"},"x":${nested(pattern, 1000)}}`);
      // `__proto__` keys are dropped while parsing, and with them the whole nested chain: then it is shallow.
      expect(deep.status, `${pattern.name}: ${deep.text}`).toBe(pattern.name === '__proto__ objects' ? 200 : 400);
      if (deep.status === 400) expectContract(deep, `${pattern.name} 1000 levels`);
    }
    const tooDeep = await post(`{"type":"session_start","session":{"id":"too-deep"},"x":${nested(PURE_ARRAYS, 10_000)}}`);
    expect(tooDeep.status).toBe(400);
    expectContract(tooDeep, '10 000 levels');
    const wholeBody = await post(nested(DEEP_PATTERNS[0]!, 10_000));
    expect(wholeBody.status).toBe(400);
    expectContract(wholeBody, '10 000 levels as the whole body');
    const huge = await post(nested(PURE_ARRAYS, 100_000));
    expect(huge.status).toBe(413);
    expectContract(huge, '100 000 levels');
    expectHealthy();
    await expectWebhookCallWorks();
  });

  // Regression: arrays nested ~2200–2600 deep once passed JSON.parse and the schema and then overflowed
  // the stack in the duplicate filter (a 500). The parser now refuses events nested too deeply.
  // Expected: 200 (greeting) or 400, never 5xx. Remove `.fails` once fixed.
  test('deeply nested arrays (sweep 1000–4000 levels) in a valid session_start never give a 5xx', async () => {
    const failures: string[] = [];
    for (let depth = 1000; depth <= 4000; depth += 50) {
      const answer = await post(`{"type":"session_start","session":{"id":"deep-sweep-${depth}"},"x":${nested(PURE_ARRAYS, depth)}}`);
      if (answer.status >= 500) failures.push(`${depth} levels → ${answer.status} ${answer.text}`);
    }
    expect(failures).toEqual([]);
  });

  test('__proto__ / constructor / prototype keys at every level: accepted as data, nothing polluted', async () => {
    const members = PROTO_MEMBERS.slice(0, 5);
    for (const where of ['before', 'after'] as const) {
      const id = `proto-${where}-${randomUUID()}`;
      const start = await post(rawJson({ type: 'session_start', session: { id, direction: 'inbound' }, meta: { a: { b: {} } } }, members, where));
      expect(start.status, start.text).toBe(200);
      expect(JSON.parse(start.text)).toMatchObject({ type: 'speak', session_id: id, text: GREETING });
      const reply = await post(rawJson({ type: 'user_speak', session: { id }, text: 'ping-proto' + where }, members, where));
      expect(reply.status, reply.text).toBe(200);
      expect(JSON.parse(reply.text)).toMatchObject({ type: 'speak', text: `Pong proto${where} received.` });
    }
    for (const id of ['__proto__', 'constructor', 'prototype', 'toString']) {
      const answer = await post(JSON.stringify({ type: 'session_start', session: { id } }));
      expect(answer.status, `${id}: ${answer.text}`).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ session_id: id, text: GREETING });
      const unknown = await post(JSON.stringify({ type: id, session: { id } }));
      expect(unknown.status, `type ${id}`).toBe(204);
    }
    expectHealthy();
  });

  test('invalid UTF-8 body: garbage bytes and UTF-16 are a 400 {error}; a bad sequence inside a string becomes U+FFFD', async () => {
    const garbage = await post(new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]));
    expect(garbage.status).toBe(400);
    expectContract(garbage, 'ff fe {}');
    const utf16 = await post(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"type":"session_start","session":{"id":"u16"}}', 'utf16le')]));
    expect(utf16.status).toBe(400);
    expectContract(utf16, 'UTF-16LE');
    const surrogate = await post(
      Buffer.concat([Buffer.from('{"type":"session_start","session":{"id":"sur-'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}}')]),
    );
    expect(surrogate.status, surrogate.text).toBe(200);
    expect(JSON.parse(surrogate.text)).toMatchObject({ session_id: expect.stringMatching(/^sur-\uFFFD+$/), text: GREETING });
    for (const bad of INVALID_UTF8) {
      const answer = await post(Buffer.concat([Buffer.from(bad), Buffer.from('{"type":"session_start","session":{"id":"x"}}')]));
      expect(answer.status, bad.join(' ')).toBe(400);
      expectContract(answer, bad.join(' '));
    }
    expectHealthy();
  });

  test('empty body: 400 {error} with a JSON content type, 415 without one', async () => {
    const empty = await post('');
    expect(empty.status).toBe(400);
    expectContract(empty, 'empty body');
    const whitespace = await post('  \n ');
    expect(whitespace.status).toBe(400);
    const untyped = await post('', null);
    expect(untyped.status).toBe(415);
    expectContract(untyped, 'empty body without a content type');
  });

  test('size limit: exactly WEBHOOK_MAX_BYTES is accepted, one byte more and 200 KB are a 413 {error}', async () => {
    const id = `size-${randomUUID()}`;
    const event = JSON.stringify({ type: 'session_start', session: { id } });
    const exact = await post(event + ' '.repeat(MAX_BYTES - Buffer.byteLength(event)));
    expect(exact.status, exact.text).toBe(200);
    const over = await post(event + ' '.repeat(MAX_BYTES + 1 - Buffer.byteLength(event)));
    expect(over.status).toBe(413);
    expectContract(over, 'MAX + 1 bytes');
    const huge = await post(JSON.stringify({ type: 'user_speak', session: { id }, text: '€'.repeat(70_000) }));
    expect(huge.status).toBe(413);
    expectContract(huge, '200 KB');
  });

  test('non-JSON content types are a 415 {error}; a broken content encoding is a 4xx {error}', async () => {
    const event = JSON.stringify({ type: 'session_start', session: { id: 'ct' } });
    for (const contentType of [null, 'text/plain', 'text/json', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const answer = await post(event, contentType);
      expect(answer.status, String(contentType)).toBe(415);
      expectContract(answer, String(contentType));
    }
    for (const encoding of ['gzip', 'deflate', 'br', 'x-unknown']) {
      const answer = await post(event, 'application/json', { 'content-encoding': encoding });
      expect(answer.status, encoding).toBeGreaterThanOrEqual(400);
      expectContract(answer, `content-encoding ${encoding}`);
    }
  });

  test('property: every answer keeps the contract (no 5xx, {error}-only 4xx, no stack trace), and calls keep working', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(webhookCaseArb(options), { minLength: 1, maxLength: 3 }), async (cases) => {
        for (const c of cases) {
          const answer = await post(c.body, c.contentType);
          const context = `${c.label}: ${preview(c.body)}`;
          expectContract(answer, context);
          expect([...c.allowed], `${context}: status ${answer.status} (${answer.text.slice(0, 160)})`).toContain(answer.status);
        }
        expectHealthy();
        await expectWebhookCallWorks();
      }),
      { numRuns: WEBHOOK_RUNS },
    );
    expectHealthy();
  });
});

// ---------------------------------------------------------------------------------------------
// WebSocket
// ---------------------------------------------------------------------------------------------

/** Stands for the carrier connection's own session id in generated frames; replaced when sent. */
const CARRIER = 'carrier-session-placeholder';

type Frame = { kind: 'text'; data: string } | { kind: 'binary'; data: Uint8Array } | { kind: 'text-bytes'; data: Uint8Array };

/** A frame must never end the carrier's own session: that would be a legitimate session_end. */
function endsCarrier(data: string | Uint8Array): boolean {
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
  return text.includes('session_end') && text.includes(CARRIER);
}

function wsFrameArb(options: PayloadOptions): fc.Arbitrary<Frame> {
  const payload = payloadArb(options).filter((p) => !endsCarrier(p.data));
  const invalid = fc
    .record({ bad: fc.constantFrom(...INVALID_UTF8), text: fc.constantFrom('', '{"type":"user_speak","session":{"id":"x"},"text":"', 'hello') })
    .map(({ bad, text }) => Buffer.concat([Buffer.from(text), Buffer.from(bad), Buffer.from('"}')]));
  const frames: fc.Arbitrary<Frame> = fc.oneof(
    // Byte payloads (invalid UTF-8) go out as binary frames here; as text frames they close the socket (1007).
    { weight: 10, arbitrary: payload.map((p): Frame => (typeof p.data === 'string' ? { kind: 'text', data: p.data } : { kind: 'binary', data: p.data })) },
    { weight: 3, arbitrary: payload.map((p): Frame => ({ kind: 'binary', data: bytesOf(p.data) })) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 512 }).map((data): Frame => ({ kind: 'binary', data })) },
    { weight: 2, arbitrary: invalid.map((data): Frame => ({ kind: 'binary', data })) },
    { weight: 1, arbitrary: invalid.map((data): Frame => ({ kind: 'text-bytes', data })) },
    { weight: 1, arbitrary: fc.constantFrom<Frame>({ kind: 'text', data: '' }, { kind: 'binary', data: new Uint8Array(0) }) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: MAX_BYTES + 1, max: MAX_BYTES + 16_384 }).map((size): Frame => ({ kind: 'text', data: `{"type":"user_speak","text":"${'x'.repeat(size)}"}` })),
    },
  );
  return frames.map((frame) => printable({ ...frame }, describeFrame(frame)));
}

/** The bytes as they go on the wire, the carrier placeholder replaced by the real session id. */
function finalFrame(frame: Frame, carrierId: string): Frame {
  if (frame.kind === 'text') return { kind: 'text', data: frame.data.replaceAll(CARRIER, carrierId) };
  const text = Buffer.from(frame.data).toString('latin1');
  if (!text.includes(CARRIER)) return frame;
  return { ...frame, data: Buffer.from(text.replaceAll(CARRIER, carrierId), 'latin1') };
}

/** 1009 for the first frame over maxPayload. */
function expectedCloseCode(frames: readonly Frame[]): number | undefined {
  for (const frame of frames) {
    const bytes = bytesOf(frame.data);
    if (bytes.length > MAX_BYTES) return 1009;
  }
  return undefined;
}

function sendFrame(socket: WebSocket, frame: Frame): void {
  if (frame.kind === 'text') socket.send(frame.data);
  else socket.send(Buffer.from(frame.data), { binary: frame.kind === 'binary' });
}

function describeFrame(frame: Frame): string {
  return `${frame.kind} ${preview(bytesOf(frame.data))}`;
}

describe('WebSocket fuzzing (one Hotline)', () => {
  let env: TestHotline;
  const clients: FakeVoiceService[] = [];
  let pings = 0;

  beforeAll(async () => {
    env = await startTestHotline(script, HOTLINE_ENV);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => (c.socket.readyState === WebSocket.OPEN ? c.close() : Promise.resolve(0))));
    expect(env.llm.requests.map((r) => r.validationError).filter(Boolean)).toEqual([]);
    await env.close();
  });

  /** A new connection whose session is started and greeted. */
  async function openCarrier(): Promise<FakeVoiceService> {
    const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: { kind: 'none' }, sessionId: `carrier-${randomUUID()}` });
    // A close by the server (1007/1009) is expected here; the client must not throw on it.
    service.socket.on('error', () => undefined);
    clients.push(service);
    service.start();
    const greeting = await within(service.next((a) => a.session_id === service.sessionId && a.type === 'speak'), 3000, 'greeting');
    expect(greeting.text).toBe(GREETING);
    return service;
  }

  function failOnClose(service: FakeVoiceService): Promise<never> {
    return service.closed.then((code) => {
      throw new Error(`the socket was closed (${code}) although no frame called for it`);
    });
  }

  /** The session answers a user_speak on this socket. */
  async function expectAnswers(service: FakeVoiceService, sessionId = service.sessionId): Promise<ReceivedAction> {
    const tag = `p${++pings}`;
    service.send({ type: 'user_speak', session: { id: sessionId }, text: `ping-${tag}`, barged_in: false });
    const waiting = service.next((a) => a.session_id === sessionId && a.type === 'speak' && (a.text ?? '').includes(`Pong ${tag}`));
    return within(Promise.race([waiting, failOnClose(service)]), 3000, `the reply to ping-${tag} in ${sessionId}`);
  }

  /** A new session on the same socket is greeted (and ended again). */
  async function expectNewSessionGreeted(service: FakeVoiceService): Promise<void> {
    const id = `fresh-${randomUUID()}`;
    service.send({ type: 'session_start', session: { id, direction: 'inbound' } });
    const greeting = await within(
      Promise.race([service.next((a) => a.session_id === id && a.type === 'speak'), failOnClose(service)]),
      3000,
      `the greeting of ${id}`,
    );
    expect(greeting.text).toBe(GREETING);
    service.send({ type: 'session_end', session: { id }, reason: 'hangup' });
  }

  const options: PayloadOptions = {
    ids: fc.oneof({ weight: 3, arbitrary: fc.constant(CARRIER) }, { weight: 3, arbitrary: freshIdArb }, { weight: 2, arbitrary: weirdIdArb }),
    maxHuge: 6000,
    maxDeepBytes: MAX_BYTES,
  };

  test('binary frames: garbage and invalid UTF-8 are dropped; the socket and the call survive', async () => {
    const service = await openCarrier();
    for (const data of [new Uint8Array([0, 1, 2, 0xff]), new Uint8Array(0), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), randomBytes(2048)]) {
      service.socket.send(data, { binary: true });
    }
    await expectAnswers(service);
    expect(service.socket.readyState).toBe(WebSocket.OPEN);
    await service.close();
    expectHealthy();
  });

  test('invalid UTF-8 in a text frame is dropped; the socket and the call survive', async () => {
    const service = await openCarrier();
    service.socket.send(Buffer.concat([Buffer.from('{"type":"user_speak","session":{"id":"x"},"text":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), { binary: false });
    service.socket.send(Buffer.from([0xff, 0xfe, 0x7b]), { binary: false });
    await expectAnswers(service);
    await service.close();
    expectHealthy();
  });

  test('1009 on oversize: a frame of exactly the limit is handled, one byte more closes with 1009; a new connection works', async () => {
    const service = await openCarrier();
    const event = JSON.stringify({ type: 'user_speak', session: { id: service.sessionId }, text: 'ping-exact' });
    service.socket.send(event + ' '.repeat(MAX_BYTES - Buffer.byteLength(event)));
    const exact = await within(service.next((a) => a.type === 'speak' && (a.text ?? '').includes('Pong exact')), 3000, 'reply to a frame of exactly the limit');
    expect(exact.session_id).toBe(service.sessionId);
    service.socket.send(event + ' '.repeat(MAX_BYTES + 1 - Buffer.byteLength(event)));
    expect(await within(service.closed, 3000, 'close 1009')).toBe(1009);
    await expect.poll(() => env.hotline.registry.get(service.sessionId)).toBeUndefined();
    const next = await openCarrier();
    await expectAnswers(next);
    await next.close();
    expectHealthy();
  });

  test('empty frames (text and binary) are dropped; the socket and the call survive', async () => {
    const service = await openCarrier();
    service.socket.send('');
    service.socket.send(new Uint8Array(0), { binary: true });
    service.socket.send(' ');
    await expectAnswers(service);
    await service.close();
    expectHealthy();
  });

  test('deep nesting: 10 levels in an extra field are greeted; 1000 and 10 000 levels are dropped; the call survives', async () => {
    const service = await openCarrier();
    for (const pattern of [...DEEP_PATTERNS, PURE_ARRAYS]) {
      const id = `ws-deep-${randomUUID()}`;
      service.send(`{"type":"session_start","session":{"id":"ws-too-deep-${randomUUID()}"},"x":${nested(pattern, 1000)}}`);
      service.send(`{"type":"session_start","session":{"id":"${id}"},"x":${nested(pattern, 10)}}`);
      const greeting = await within(service.next((a) => a.session_id === id), 3000, `greeting with 10 levels of ${pattern.name}`);
      expect(greeting.text).toBe(GREETING);
    }
    service.send(`{"type":"user_speak","session":{"id":"${service.sessionId}"},"text":"x","x":${nested(PURE_ARRAYS, 10_000)}}`);
    service.send(nested(DEEP_PATTERNS[1]!, 2000));
    await expectAnswers(service);
    await service.close();
    expectHealthy();
  });

  // Regression: such a session_start once created a call that a stack overflow left ungreeted and that
  // outlived its socket. Now the parser refuses it, and a call whose start fails still ends with its socket.
  test('deeply nested arrays (sweep 1000–4000 levels) in a session_start never leave a half-created call behind', async () => {
    const service = await openCarrier();
    const ids: string[] = [];
    for (let depth = 1000; depth <= 4000; depth += 50) {
      const id = `ws-deep-sweep-${depth}-${randomUUID()}`;
      ids.push(id);
      service.send(`{"type":"session_start","session":{"id":"${id}"},"x":${nested(PURE_ARRAYS, depth)}}`);
    }
    await expectAnswers(service);
    await service.close();
    await expect.poll(() => ids.filter((id) => env.hotline.registry.get(id) !== undefined)).toEqual([]);
  });

  test('__proto__ / constructor / prototype keys at every level: the call answers, nothing polluted', async () => {
    const service = await openCarrier();
    for (const where of ['before', 'after'] as const) {
      service.send(rawJson({ type: 'user_speak', session: { id: service.sessionId }, text: `ping-proto${where}`, meta: { a: { b: {} } } }, PROTO_MEMBERS, where));
      await within(service.next((a) => (a.text ?? '').includes(`Pong proto${where}`)), 3000, `reply with proto keys ${where}`);
      const id = `ws-proto-${where}-${randomUUID()}`;
      service.send(rawJson({ type: 'session_start', session: { id }, meta: [{ a: {} }] }, PROTO_MEMBERS, where));
      const greeting = await within(service.next((a) => a.session_id === id), 3000, 'greeting with proto keys');
      expect(greeting.text).toBe(GREETING);
    }
    for (const id of ['__proto__', 'constructor', 'prototype']) {
      service.send({ type: id, session: { id } });
      service.send({ type: 'session_start', session: { id } });
      const greeting = await within(service.next((a) => a.session_id === id), 3000, `greeting of session ${id}`);
      expect(greeting.text).toBe(GREETING);
      service.send({ type: 'session_end', session: { id } });
    }
    await expectAnswers(service);
    await service.close();
    expectHealthy();
  });

  test('property: garbage frames on a socket with a started call; the same session on the same socket still answers', { timeout: 60_000 }, async () => {
    let carrier = await openCarrier();
    await fc.assert(
      fc.asyncProperty(fc.array(wsFrameArb(options), { minLength: 1, maxLength: 4 }), async (generated) => {
        if (carrier.socket.readyState !== WebSocket.OPEN) carrier = await openCarrier();
        const frames = generated.map((f) => finalFrame(f, carrier.sessionId));
        const closeCode = expectedCloseCode(frames);
        for (const frame of frames) sendFrame(carrier.socket, frame);
        const context = frames.map(describeFrame).join(' | ');
        if (closeCode !== undefined) {
          expect(await within(carrier.closed, 3000, `close ${closeCode} after ${context}`), context).toBe(closeCode);
          carrier = await openCarrier();
        }
        await expectAnswers(carrier);
        await expectNewSessionGreeted(carrier);
        expect(carrier.socket.readyState, context).toBe(WebSocket.OPEN);
        expectHealthy();
      }),
      { numRuns: WS_RUNS },
    );
    await carrier.close();
    // A fresh connection still works after all of it.
    const fresh = await openCarrier();
    await expectAnswers(fresh);
    await fresh.close();
    expectHealthy();
  });
});

function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 7919 + 13) % 256;
  return bytes;
}

describe('the whole file', () => {
  test('no unhandled rejection, no uncaught exception, no prototype pollution', async () => {
    // Rejections are reported after the microtask queue drains: give late ones a moment.
    await sleep(100);
    expectHealthy();
  });
});
