/**
 * The simulator and what the production service adds to the spec: keypad
 * keys, silence, the older user_barge_in, speak options, audio clips,
 * barge_in actions, transfers with caller id, and arrays of actions. Against
 * a scripted stand-in for Hotline (test/helpers/scripted-hotline.ts), which
 * sends such actions on cue over a real WebSocket and a real webhook.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { runSimulate } from '../src/cli/simulate.js';
import { describeSpeakOptions, describeTransfer } from '../src/simulator/action-summary.js';
import type { CallRecordJson } from '../src/simulator/call-record.js';
import { parseCallerInput } from '../src/simulator/caller-input.js';
import { USAGE } from '../src/simulator/options.js';
import { startScriptedHotline, type Answer, type ScriptedHotline, type SentEvent } from './helpers/scripted-hotline.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scripted(answer: (event: SentEvent) => Answer): Promise<ScriptedHotline> {
  const fake = await startScriptedHotline(answer);
  cleanups.push(() => fake.close());
  return fake;
}

async function tempFile(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-simulate-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, name);
}

async function simulate(argv: string[], input: NodeJS.ReadableStream, onLine: (line: string) => void = () => undefined) {
  const lines: string[] = [];
  const code = await runSimulate(argv, {}, {
    input,
    output: (line) => {
      lines.push(line);
      onLine(line);
    },
  });
  return { code, lines };
}

function piped(...lines: string[]): Readable {
  return Readable.from(lines.map((line) => `${line}\n`));
}

/** What the caller did, without the playback reports in between. */
function callerEvents(events: readonly SentEvent[]): SentEvent[] {
  return events.filter((e) => e.type !== 'assistant_speak' && e.type !== 'assistant_speech_ended');
}

function expectLine(lines: string[], pattern: RegExp): number {
  const index = lines.findIndex((line) => pattern.test(line));
  expect(index, `no line matches ${pattern}:\n${lines.join('\n')}`).toBeGreaterThanOrEqual(0);
  return index;
}

/** base64 of a clip that plays `ms` at 16 kHz mono 16-bit: 32 bytes a millisecond. */
function clip(ms: number): string {
  return Buffer.alloc(ms * 32).toString('base64');
}

const GREETING_OPTIONS = {
  barge_in: { strategy: 'none' },
  tts: { provider: 'azure', language: 'de-DE', voice: 'de-DE-KatjaNeural' },
  user_input_timeout_seconds: 8,
  vad: { end_of_turn_silence_ms: 800 },
};

/**
 * Answers like the Hotline being built: keys up to '#', a re-prompt on silence, an interruption answered after a barge_in
 * action; the speak that ends each answer asks for the caller's silence to be reported, which marks the end of the turn.
 */
function keypadScript(): (event: SentEvent) => Answer {
  let keys = '';
  return (event) => {
    switch (event.type) {
      case 'session_start':
        return { actions: [{ type: 'speak', text: 'Welcome. Your customer number, please.', ...GREETING_OPTIONS }] };
      case 'dtmf_received': {
        if (event.digit !== '#') {
          keys += String(event.digit);
          // Held open until the entry is complete, as Hotline holds a webhook request while keys are typed.
          return { delayMs: 300 };
        }
        const said = `Customer ${keys}, found you.`;
        keys = '';
        return { actions: { type: 'speak', text: said, user_input_timeout_seconds: 8 } };
      }
      case 'user_input_timeout':
        return { actions: { type: 'speak', ssml: '<speak>Are you <break time="300ms"/> still there?</speak>', user_input_timeout_seconds: 8 } };
      case 'user_barge_in':
        return typeof event.text === 'string'
          ? { actions: [{ type: 'barge_in' }, { type: 'speak', text: 'Okay, I stopped.', user_input_timeout_seconds: 8 }] }
          : undefined;
      default:
        return undefined;
    }
  };
}

describe.each([
  { transport: 'websocket', flag: '--url', url: (fake: ScriptedHotline) => fake.wsUrl },
  { transport: 'webhook', flag: '--webhook', url: (fake: ScriptedHotline) => fake.webhookUrl },
] as const)('caller commands and the production service over the $transport', ({ transport, flag, url }) => {
  test('/dtmf, /silence and /bargein send their events in order; speak options, SSML, barge_in actions and arrays are shown; --json keeps them', async () => {
    const fake = await scripted(keypadScript());
    const jsonFile = await tempFile('keys.json');
    const { code, lines } = await simulate(
      [flag, url(fake), '--speed', '50', '--json', jsonFile],
      piped('/dtmf 47 11#', '/dtmf 12x', '/silence', '/bargein', '/bargein Stop please', '/nope'),
    );
    expect(code).toBe(0);

    const greeting = expectLine(
      lines,
      /^\+\d+ ms +speak +"Welcome\. Your customer number, please\."  \[barge_in: none · voice: azure de-DE-KatjaNeural · timeout 8 s · vad 800 ms\]$/,
    );
    const keys = expectLine(lines, /^you: \/dtmf 47 11#$/);
    const found = expectLine(lines, /^\+\d+ ms +speak +"Customer 4711, found you\."  \[timeout 8 s\]$/);
    const typo = lines.indexOf('! /dtmf: "x" is not a keypad key: keys are 0-9, *, # and A-D');
    const silent = lines.indexOf('you: /silence');
    const reprompt = expectLine(lines, /^\+\d+ ms +speak +"<speak>Are you <break time=\\"300ms\\"\/> still there\?<\/speak>"  \[timeout 8 s · ssml\]$/);
    const bare = lines.indexOf('you: /bargein   (user_barge_in: nothing was playing)');
    const withWords = lines.indexOf('you: /bargein Stop please   (user_barge_in: nothing was playing)');
    const stopped = expectLine(lines, /^\+\d+ ms +barge_in +playback stopped$/);
    const okay = expectLine(lines, /^\+\d+ ms +speak +"Okay, I stopped\."  \[timeout 8 s\]$/);
    const unknown = expectLine(lines, /^! unknown command \/nope: use \/dtmf <keys>, \/silence, \/bargein \[words\] or \/hangup; nothing was sent$/);
    const order = [greeting, keys, found, typo, silent, reprompt, bare, withWords, stopped, okay, unknown];
    expect(order).toEqual(order.toSorted((a, b) => a - b));
    expect(lines.at(-2)).toBe('call ended: the caller hung up');

    // One event a key, in the order typed, even over separate HTTP requests; the mistyped line sent nothing.
    expect(callerEvents(fake.events).map(({ session: _session, ...fields }) => fields)).toEqual([
      { type: 'session_start' },
      { type: 'dtmf_received', digit: '4' },
      { type: 'dtmf_received', digit: '7' },
      { type: 'dtmf_received', digit: '1' },
      { type: 'dtmf_received', digit: '1' },
      { type: 'dtmf_received', digit: '#' },
      { type: 'user_input_timeout' },
      { type: 'user_barge_in' },
      { type: 'user_barge_in', text: 'Stop please' },
      { type: 'session_end', reason: 'caller_hangup' },
    ]);
    if (transport === 'webhook') {
      // No key waited for the answer to the one before: all were in before the first was answered.
      const keyEvents = fake.timeline.filter((t) => t.event.type === 'dtmf_received');
      expect(keyEvents.slice(0, 5).map((t) => `${t.step} ${String(t.event.digit)}`)).toEqual([
        'received 4',
        'received 7',
        'received 1',
        'received 1',
        'received #',
      ]);
    }
    // Only the speech: the SSML markup is not spoken.
    const reported = fake.events.filter((e) => e.type === 'assistant_speak').map((e) => e.text);
    expect(reported).toContain('Are you still there?');

    const record = JSON.parse(await readFile(jsonFile, 'utf8')) as CallRecordJson;
    expect(record.transport).toBe(transport);
    const sent = record.events.map((e) => e.event as { type: string; digit?: string; text?: string });
    expect(sent.filter((e) => e.type === 'dtmf_received').map((e) => e.digit)).toEqual(['4', '7', '1', '1', '#']);
    expect(sent.filter((e) => e.type === 'user_input_timeout')).toHaveLength(1);
    expect(sent.filter((e) => e.type === 'user_barge_in').map((e) => e.text)).toEqual([undefined, 'Stop please']);
    const actions = record.actions.map((a) => a.action as Record<string, unknown>);
    expect(actions[0]).toMatchObject({ type: 'speak', ...GREETING_OPTIONS });
    expect(actions.map((a) => a.type)).toEqual(['speak', 'speak', 'speak', 'barge_in', 'speak']);
    expect(actions[2]).toMatchObject({ ssml: expect.stringContaining('<break'), user_input_timeout_seconds: 8 });
  });

  test('an audio clip plays for its length; a barge_in speak plays on under the caller; the barge_in action stops it; /silence waits for the playback', async () => {
    const long = 'This notice has to be heard in full before anything else can happen on this call, so please listen carefully now.';
    const fake = await scripted((event) => {
      if (event.type === 'session_start') {
        return { actions: [{ type: 'audio', audio: clip(1000) }, { type: 'speak', text: long, barge_in: { strategy: 'none' } }] };
      }
      if (event.type === 'user_speak') return { actions: [{ type: 'barge_in' }, { type: 'speak', text: 'Yes?' }] };
      if (event.type === 'user_input_timeout') return { actions: { type: 'hangup' } };
      return undefined;
    });
    const input = new PassThrough();
    const done = simulate([flag, url(fake), '--speed', '10', '--no-wait'], input);
    // The caller speaks up while the notice plays, and then stays silent.
    await fake.waitForEvent((e) => e.type === 'assistant_speak' && e.text === long);
    input.write('Hello?\n');
    await fake.waitForEvent((e) => e.type === 'user_speak');
    input.write('/silence\n');
    const { code, lines } = await done;
    input.end();

    expect(code).toBe(0);
    expectLine(lines, /^\+\d+ ms +audio +clip 1000 ms$/);
    expect(lines).toContain('you: Hello?   (barge_in none: playback goes on)');
    expectLine(lines, /^\+\d+ ms +barge_in +playback stopped$/);
    expect(lines.at(-1)).toBe('call ended: Hotline hung up');

    const events = fake.events.map(({ session: _session, speech_started_at: _at, ...fields }) => fields);
    expect(events).toEqual([
      expect.objectContaining({ type: 'session_start' }),
      // The clip: its length scaled by --speed, and no words.
      { type: 'assistant_speak', duration_ms: 100 },
      { type: 'assistant_speech_ended' },
      { type: 'assistant_speak', text: long, duration_ms: expect.any(Number) },
      // Not an interruption: the notice asked for none.
      { type: 'user_speak', text: 'Hello?', barged_in: false },
      // Hotline's barge_in cut the notice off: it never ended; "Yes?" played, and only then the silence.
      { type: 'assistant_speak', text: 'Yes?', duration_ms: expect.any(Number) },
      { type: 'assistant_speech_ended' },
      { type: 'user_input_timeout' },
      { type: 'session_end', reason: 'hangup' },
    ]);
  });
});

describe('what the simulator shows', () => {
  test('a transfer with its number, caller id and ring timeout ends the call', async () => {
    const fake = await scripted((event) =>
      event.type === 'session_start'
        ? {
            actions: [
              { type: 'speak', text: 'One moment.' },
              {
                type: 'transfer',
                target: '+49 30 999999',
                target_phone_number: '4930999999',
                caller_id_name: 'Hotline',
                caller_id_number: '4915100000000',
                timeout: 30,
              },
            ],
          }
        : undefined,
    );
    const { code, lines } = await simulate(['--url', fake.wsUrl, '--speed', '50'], piped());
    expect(code).toBe(0);
    expectLine(lines, /^\+\d+ ms +transfer +→ \+49 30 999999 \(dials 4930999999\) · caller id "Hotline" 4915100000000 · rings 30 s$/);
    expect(lines.at(-1)).toBe('call ended: Hotline transferred the call');
  });

  test('speak options and transfers in short', () => {
    expect(describeSpeakOptions({ type: 'speak', text: 'x' })).toBe('');
    expect(
      describeSpeakOptions({
        type: 'speak',
        text: 'x',
        barge_in: { strategy: 'minimum_characters', minimum_characters: 12, allow_after_ms: 500 },
        tts: { provider: 'eleven_labs', voice: { name: 'Rachel' }, language: 'en' },
      }),
    ).toBe('[barge_in: minimum_characters 12 after 500 ms · voice: eleven_labs Rachel en]');
    // Wrong values are shown as sent: the simulator's warning says what is wrong with them.
    expect(describeSpeakOptions({ type: 'speak', text: 'x', barge_in: { strategy: 'sometimes' }, user_input_timeout_seconds: '8' })).toBe(
      '[barge_in: {"strategy":"sometimes"} · timeout "8"]',
    );
    expect(describeTransfer({ type: 'transfer', target: '4930999999' })).toBe('→ 4930999999');
    expect(describeTransfer({ type: 'transfer', target_phone_number: '4930999999', caller_id_number: '49301' })).toBe(
      '→ 4930999999 · caller id 49301',
    );
  });

  test('caller commands are read strictly, and the usage lists them', () => {
    expect(parseCallerInput('/dtmf 0815 *#')).toEqual({ kind: 'dtmf', keys: '0815*#' });
    expect(parseCallerInput('/DTMF abcd')).toEqual({ kind: 'dtmf', keys: 'ABCD' });
    expect(parseCallerInput('/dtmf')).toEqual({ kind: 'invalid', problem: '/dtmf: no keys given: name the keys to press, e.g. 4711#' });
    expect(parseCallerInput('/dtmf 12e+')).toEqual({
      kind: 'invalid',
      problem: '/dtmf: "e", "+" are not keypad keys: keys are 0-9, *, # and A-D',
    });
    expect(parseCallerInput('/silence')).toEqual({ kind: 'silence' });
    expect(parseCallerInput('/silence please')).toEqual({ kind: 'invalid', problem: '/silence takes nothing after it' });
    expect(parseCallerInput('/bargein')).toEqual({ kind: 'barge_in' });
    expect(parseCallerInput('/bargein  wait a moment ')).toEqual({ kind: 'barge_in', text: 'wait a moment' });
    expect(parseCallerInput('/hangup')).toEqual({ kind: 'hangup' });
    expect(parseCallerInput('What about 4711?')).toEqual({ kind: 'say', text: 'What about 4711?' });
    for (const command of ['/dtmf <keys>', '/silence', '/bargein [words]', '/hangup']) expect(USAGE).toContain(`  ${command} `);
  });
});
