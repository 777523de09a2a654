import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { runSimulate } from '../src/cli/simulate.js';
import type { CallRecordJson } from '../src/simulator/call-record.js';
import { speakingTimeMs } from '../src/simulator/speech-playback.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText, scriptByUserText } from './helpers/scripts.js';

const GREETING = 'Hello, thanks for calling! How can I help you today?';
const STORY =
  'Once upon a time there was a phone agent. It answered every call with patience and a smile. ' +
  'People called it day and night with questions about opening hours. It never got tired of them. ' +
  'One day somebody asked it for a story, and it began to tell one that went on and on.';

const script = scriptByUserText({
  'When are you open?': { content: 'We open at nine. We close at six.' },
  'Tell me a story': { content: STORY, tokenDelayMs: 30 },
  Stop: { content: 'Okay, I stopped.' },
  bye: { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] },
});

let env: TestHotline | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await env?.close();
  env = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function hotline(extraEnv: Record<string, string> = {}): Promise<TestHotline> {
  env = await startTestHotline(script, extraEnv);
  return env;
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
  return { code, lines, output: lines.join('\n') };
}

function piped(...lines: string[]): Readable {
  return Readable.from(lines.map((line) => `${line}\n`));
}

async function tempFile(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-simulate-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, name);
}

/** The line of a speak of exactly this text, with or without its options (`[timeout 8 s]`). */
function speakLine(text: string): RegExp {
  return new RegExp(`^\\+\\d+ ms +speak +${JSON.stringify(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(  \\[[^\\]]*\\])?$`);
}

/** The index of the first line matching, failing the test when there is none. */
function lineIndex(lines: string[], pattern: RegExp): number {
  const index = lines.findIndex((line) => pattern.test(line));
  expect(index, `no line matches ${pattern}:\n${lines.join('\n')}`).toBeGreaterThanOrEqual(0);
  return index;
}

describe('npm run simulate (WebSocket)', () => {
  test('piped input: greeting, each answer with its timing, the hangup, exit 0', async () => {
    const { hotline: h } = await hotline();
    const { code, lines } = await simulate(['--url', h.wsUrl, '--speed', '50'], piped('When are you open?', 'bye'));

    expect(code).toBe(0);
    const greeting = lineIndex(lines, speakLine(GREETING));
    const asked = lineIndex(lines, /^you: When are you open\?$/);
    const first = lineIndex(lines, speakLine('We open at nine.'));
    const second = lineIndex(lines, speakLine('We close at six.'));
    const bye = lineIndex(lines, /^you: bye$/);
    const goodbye = lineIndex(lines, speakLine('Goodbye!'));
    const hangup = lineIndex(lines, /^\+\d+ ms +hangup$/);
    // Piped input waits for each answer: every line follows the answer to the one before.
    const order = [greeting, asked, first, second, bye, goodbye, hangup];
    expect(order).toEqual(order.toSorted((a, b) => a - b));
    expect(lines.at(-1)).toBe('call ended: Hotline hung up');
  });

  test('a line said while Hotline speaks barges in: playback stops and the LLM request is aborted', async () => {
    const { hotline: h, llm } = await hotline();
    const jsonFile = await tempFile('barge-in.json');
    const input = new PassThrough();
    let asked = false;
    let interrupted = false;
    const { code, lines } = await simulate(
      ['--url', h.wsUrl, '--speed', '5', '--no-wait', '--verbose', '--json', jsonFile],
      input,
      (line) => {
        // Once the greeting has played, ask for the story; at its first sentence, interrupt.
        if (!asked && line.includes('→ assistant_speech_ended')) {
          asked = true;
          input.write('Tell me a story\n');
        } else if (asked && !interrupted && /speak +"Once upon a time/.test(line)) {
          interrupted = true;
          input.end('Stop\n');
        }
      },
    );

    expect(code).toBe(0);
    expect(lines).toContain('you: Tell me a story');
    expect(lines).toContain('you: Stop   (barge-in: playback stopped)');
    lineIndex(lines, speakLine('Okay, I stopped.'));
    expect(lines.slice(-2)).toEqual(['call ended: the caller hung up', `call written to ${jsonFile}`]);

    const story = llm.requests.find((request) => lastUserText(request.body) === 'Tell me a story');
    expect(await story!.ended).toBe('aborted');

    const record = JSON.parse(await readFile(jsonFile, 'utf8')) as CallRecordJson;
    const events = record.events.map((e) => e.event as { type: string; text?: string; barged_in?: boolean });
    expect(events.filter((e) => e.type === 'user_speak')).toEqual([
      expect.objectContaining({ text: 'Tell me a story', barged_in: false }),
      expect.objectContaining({ text: 'Stop', barged_in: true }),
    ]);
    // The cut speech never reports its end: the barge-in follows its assistant_speak directly.
    const cut = events.findIndex((e) => e.type === 'assistant_speak' && e.text?.startsWith('Once upon a time'));
    expect(events[cut + 1]).toMatchObject({ type: 'user_speak', text: 'Stop' });
    expect(events.at(-1)).toMatchObject({ type: 'session_end', reason: 'caller_hangup' });
  });

  test('--json writes the whole call; speaking times follow --wpm and --speed; --outbound, --from and --to shape session_start', async () => {
    const { hotline: h } = await hotline();
    const jsonFile = await tempFile('call.json');
    const { code, lines } = await simulate(
      ['--url', h.wsUrl, '--speed', '50', '--wpm', '150', '--outbound', '--from', '+49 30 1234567', '--to', '491511112222', '--json', jsonFile],
      piped('When are you open?', '/hangup'),
    );
    expect(code).toBe(0);
    expect(lines).toContain(`call written to ${jsonFile}`);

    const record = JSON.parse(await readFile(jsonFile, 'utf8')) as CallRecordJson;
    expect(record).toMatchObject({ sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/), transport: 'websocket' });
    expect(new Date(record.startedAt).toString()).not.toBe('Invalid Date');
    expect(record.events[0]).toMatchObject({
      at: expect.any(Number),
      event: {
        type: 'session_start',
        session: { id: record.sessionId, direction: 'outbound', from_phone_number: '49301234567', to_phone_number: '491511112222' },
      },
    });
    const speaks = record.events.map((e) => e.event as { type: string; text: string; duration_ms: number }).filter((e) => e.type === 'assistant_speak');
    expect(speaks.length).toBeGreaterThanOrEqual(3);
    for (const speak of speaks) expect(speak.duration_ms).toBe(speakingTimeMs(speak.text, 150, 50));
    expect(speakingTimeMs('one two three', 180, 1)).toBe(1000);

    expect(record.actions.map((a) => (a.action as { type: string; text?: string }).text)).toEqual([
      // An outbound call nobody requested through Hotline gets the generic outbound greeting.
      expect.stringContaining('Is now a good time to talk?'),
      'We open at nine.',
      'We close at six.',
    ]);
    for (const action of record.actions) {
      expect(action).toMatchObject({ at: expect.any(Number), msSinceCallerSpoke: expect.any(Number), action: { session_id: record.sessionId } });
    }
    expect(record.events.at(-1)).toMatchObject({ event: { type: 'session_end', reason: 'caller_hangup' } });
  });

  test('a wrong WebSocket token is refused: exit 1 with the HTTP status; the right one gets through', async () => {
    const { hotline: h } = await hotline({ WS_TOKEN: 'ws-token-1' });
    const refused = await simulate(['--url', h.wsUrl], piped('bye'));
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/refused the WebSocket connection .*HTTP 401.*--token/);

    const wrong = await simulate(['--url', h.wsUrl, '--token', 'nope'], piped('bye'));
    expect(wrong.code).toBe(1);
    expect(wrong.output).not.toContain('nope');

    const admitted = await simulate(['--url', h.wsUrl, '--token', 'ws-token-1', '--speed', '50'], piped('bye'));
    expect(admitted.code).toBe(0);
    expect(admitted.output).toContain('token=***');
    expect(admitted.output).not.toContain('ws-token-1');
    expect(admitted.lines.at(-1)).toBe('call ended: Hotline hung up');
  });

  test('nothing listening: exit 1 saying so; bad usage: exit 2 with the usage', async () => {
    const unreachable = await simulate(['--url', 'ws://127.0.0.1:9/ws'], piped('hello'));
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toMatch(/could not connect to ws:\/\/127\.0\.0\.1:9\/ws.*ECONNREFUSED.*is Hotline running/);

    for (const argv of [['--speed', 'fast'], ['--port', '4000'], ['--url', 'ws://x/ws', '--webhook', 'http://x/webhook'], ['--frm', '1']]) {
      const bad = await simulate(argv, piped());
      expect(bad.code, argv.join(' ')).toBe(2);
      expect(bad.output).toContain('Usage:');
    }
  });
});

describe('npm run simulate --webhook', () => {
  test('plays the call over the webhook with the shared secret; a held-back hangup arrives after the speech', async () => {
    // The whole reply in one answer, as the speak lines below expect, whatever the default is.
    const { hotline: h } = await hotline({ WEBHOOK_SECRET: 'hook-secret-1', WEBHOOK_REPLY: 'whole' });
    const { code, lines } = await simulate(
      ['--webhook', `${h.url}/webhook`, '--secret', 'hook-secret-1', '--speed', '50'],
      piped('When are you open?', 'bye'),
    );
    expect(code).toBe(0);
    lineIndex(lines, /^calling Hotline at http:\/\/.*\/webhook \(webhook\)/);
    lineIndex(lines, speakLine(GREETING));
    // WEBHOOK_REPLY=whole: the reply comes as one speak.
    lineIndex(lines, speakLine('We open at nine. We close at six.'));
    const goodbye = lineIndex(lines, speakLine('Goodbye!'));
    const hangup = lineIndex(lines, /^\+\d+ ms +hangup$/);
    expect(hangup).toBeGreaterThan(goodbye);
    expect(lines.at(-1)).toBe('call ended: Hotline hung up');
  });

  test('a wrong secret is refused: exit 1 with 401', async () => {
    const { hotline: h } = await hotline({ WEBHOOK_SECRET: 'hook-secret-1' });
    const { code, output } = await simulate(['--webhook', `${h.url}/webhook`, '--secret', 'wrong'], piped('hello'));
    expect(code).toBe(1);
    expect(output).toMatch(/HTTP 401.*--secret/);
  });
});

describe('the real entry point', () => {
  test('src/cli/simulate.ts run by node, with piped stdin', async () => {
    const { hotline: h } = await hotline();
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = execFile(
        process.execPath,
        tsxArgs('src/cli/simulate.ts', '--url', h.wsUrl, '--speed', '50'),
        // Its own environment, in a folder without .env: the user's WS_TOKEN must not count.
        { cwd: isolatedCwd(), env: childEnv() },
        // A non-zero exit is an error with a numeric code, checked below; only a failed start rejects.
        (error, stdout) => (typeof error?.code === 'string' ? reject(error) : resolve({ code: child.exitCode, stdout })),
      );
      child.stdin?.end('When are you open?\nbye\n');
    });
    expect(stdout).toMatch(/^\+\d+ ms +speak +"Hello, thanks for calling!/m);
    expect(stdout).toContain('you: When are you open?');
    expect(stdout).toMatch(/^\+\d+ ms +hangup$/m);
    expect(code).toBe(0);
  }, CHILD_TEST_TIMEOUT_MS);
});
