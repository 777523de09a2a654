import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { parseSettings, UsageError } from '../src/simulator/options.js';
import {
  MAILBOX_GREETINGS,
  startPlatformEmulator,
  type PlatformEmulator,
  type PlatformEmulatorOptions,
} from '../src/simulator/platform-emulator.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startScriptedHotline, type SentEvent } from './helpers/scripted-hotline.js';
import { scriptByUserText } from './helpers/scripts.js';

const ADMIN = 'admin-token-1';
const PLATFORM_TOKEN = 'platform-token-1';

const script = scriptByUserText({ 'Who is this?': { content: 'Rosa from the bakery, about your order.' } });

let env: TestHotline | undefined;
let emulator: PlatformEmulator | undefined;

afterEach(async () => {
  await emulator?.close();
  await env?.close();
  emulator = undefined;
  env = undefined;
});

/** Collects the emulator's output and lets a test wait for a line. */
function terminal() {
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  return {
    lines,
    output(line: string) {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.pattern.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    },
    waitFor(pattern: RegExp): Promise<string> {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
}

/** The emulator first, on port 0; Hotline after it, pointed at the emulator; the emulator rings Hotline's URL once known. */
async function startBoth(input: Readable, options: Partial<PlatformEmulatorOptions> = {}) {
  const screen = terminal();
  emulator = await startPlatformEmulator({
    port: 0,
    hotlineUrl: () => env!.hotline.wsUrl,
    platformToken: PLATFORM_TOKEN,
    voice: { speed: 50 },
    input,
    output: screen.output,
    ...options,
  });
  env = await startTestHotline(script, {
    ADMIN_TOKEN: ADMIN,
    AIFLOW_API_URL: emulator.url,
    AIFLOW_ACCESS_TOKEN: PLATFORM_TOKEN,
    AIFLOW_ID: 'flow-1',
    AIFLOW_BILLING_DEVICE: 'dev-1',
  });
  return { emulator, screen };
}

async function placeCall(body: Record<string, unknown>) {
  const res = await fetch(`${env!.hotline.url}/api/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function postToEmulator(path: string, headers: Record<string, string>, body: unknown = { billingDevice: 'dev-1', toPhoneNumber: '491511234567' }) {
  return fetch(`${emulator!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe('npm run simulate -- --platform', () => {
  test('the outbound flow end to end: Hotline places the call, the emulator rings back and hears the tailored greeting', async () => {
    const { emulator, screen } = await startBoth(Readable.from(['Who is this?\n']));
    expect(screen.lines[0]).toBe(
      `emulating the voice service's API at http://localhost:${emulator.port} — set AIFLOW_API_URL=http://localhost:${emulator.port} on Hotline`,
    );

    const placed = await placeCall({ toPhoneNumber: '+49 151 1234567', variables: { name: 'Anna', topic: 'your order 42' } });
    expect(placed).toEqual({ status: 201, body: { toPhoneNumber: '491511234567', status: 'initiated' } });

    expect(await emulator.done).toBe(0);
    const { lines } = screen;
    expect(lines).toContain('call to 491511234567 placed by flow flow-1: ringing Hotline…');
    expect(lines.find((line) => line.startsWith('calling Hotline at ws://'))).toContain('outbound call 4930000000 → 491511234567');
    const greeting = lines.find((line) => /^\+\d+ ms +speak +"/.test(line)) ?? '';
    expect(greeting).toContain('Anna');
    expect(greeting).toContain('your order 42');
    expect(lines).toContain('you: Who is this?');
    expect(lines.some((line) => /^\+\d+ ms +speak +"Rosa from the bakery, about your order\."(  \[[^\]]*\])?$/.test(line))).toBe(true);
    expect(lines.at(-1)).toBe('call ended: the caller hung up');

    expect(emulator.requests).toHaveLength(1);
    expect(emulator.requests[0]).toMatchObject({
      path: '/v3/ai-flows/flow-1/call',
      headers: { authorization: `Bearer ${PLATFORM_TOKEN}` },
      body: { billingDevice: 'dev-1', toPhoneNumber: '491511234567' },
      status: 201,
    });
  });

  test('a call placed while one is in progress is answered 201, queued, and rings when the first ends', async () => {
    const { emulator, screen } = await startBoth(Readable.from(['Who is this?\n']));
    expect((await placeCall({ toPhoneNumber: '491511234567', variables: { name: 'Anna' } })).status).toBe(201);
    await screen.waitFor(/speak +"Hi Anna/);
    expect((await placeCall({ toPhoneNumber: '491517654321', variables: { name: 'Ben' } })).status).toBe(201);

    expect(await emulator.done).toBe(0);
    const { lines } = screen;
    const queued = lines.indexOf('call to 491517654321 placed by flow flow-1: queued until the call in progress ends');
    const firstEnded = lines.indexOf('call ended: the caller hung up');
    const ben = lines.findIndex((line) => /speak +"Hi Ben/.test(line));
    expect(queued).toBeGreaterThan(0);
    expect(firstEnded).toBeGreaterThan(queued);
    expect(ben).toBeGreaterThan(firstEnded);
    expect(lines.at(-1)).toBe('call ended: the caller hung up');
  });

  test('401 without a Bearer token, or with another than --platform-token', async () => {
    await startBoth(Readable.from([]));
    expect((await postToEmulator('/v3/ai-flows/flow-1/call', {})).status).toBe(401);
    expect((await postToEmulator('/v3/ai-flows/flow-1/call', { authorization: 'Bearer someone-else' })).status).toBe(401);
    expect(emulator!.requests.map((r) => r.status)).toEqual([401, 401]);
  });

  test('without --platform-token any Bearer token will do, but one is required', async () => {
    const { screen } = await startBoth(Readable.from([]), { platformToken: undefined });
    expect(screen.lines[1]).toMatch(/any access token is accepted/);
    expect((await postToEmulator('/v3/ai-flows/flow-1/call', {})).status).toBe(401);
    const accepted = await postToEmulator('/v3/ai-flows/any-flow/call', { authorization: 'Bearer whatever' });
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({ status: 'initiated', toPhoneNumber: '491511234567' });
    // With nothing to say, the person called listens to the greeting and hangs up.
    expect(await emulator!.done).toBe(0);
    expect(screen.lines).toContain('call to 491511234567 placed by flow any-flow: ringing Hotline…');
    expect(screen.lines.some((line) => /^\+\d+ ms +speak +"/.test(line))).toBe(true);
  });

  test('refusals as configured: 404 for an unknown flow, 400 for a flow without number; nothing rings', async () => {
    const { screen } = await startBoth(Readable.from([]), { unknownFlows: ['ghost-flow'], flowsWithoutNumber: ['mute-flow'] });

    const unknown = await placeCall({ toPhoneNumber: '491511234567', aiFlowId: 'ghost-flow' });
    expect(unknown.status).toBe(502);
    expect(String(unknown.body.error)).toMatch(/ghost-flow.*does not exist.*HTTP 404/);
    const withoutNumber = await placeCall({ toPhoneNumber: '491511234567', aiFlowId: 'mute-flow' });
    expect(withoutNumber.status).toBe(502);
    expect(String(withoutNumber.body.error)).toMatch(/phone number.*HTTP 400/);

    expect(emulator!.requests.map((r) => [r.aiFlowId, r.status])).toEqual([
      ['ghost-flow', 404],
      ['mute-flow', 400],
    ]);
    expect(screen.lines).toContain('refused POST /v3/ai-flows/ghost-flow/call: HTTP 404 (AI flow ghost-flow not found)');
    expect(screen.lines).toContain('refused POST /v3/ai-flows/mute-flow/call: HTTP 400 (AI flow has no phone number)');
    expect(screen.lines.some((line) => line.includes('ringing'))).toBe(false);

    // Closing an emulator that never had a call ends it cleanly.
    await emulator!.close();
    expect(await emulator!.done).toBe(0);
  });

  test('a placed call that rings over the webhook plays what the production service would: arrays, speak options, clips, barge_in', async () => {
    // A stand-in for Hotline that answers the outbound session_start with one array of actions.
    const fake = await startScriptedHotline((event) =>
      event.type === 'session_start'
        ? {
            actions: [
              { type: 'speak', text: 'Hello from the flow.', barge_in: { strategy: 'immediate' } },
              { type: 'audio', audio: Buffer.alloc(2000 * 32).toString('base64') },
              { type: 'barge_in' },
              { type: 'speak', text: 'Short.' },
            ],
          }
        : undefined,
    );
    try {
      const screen = terminal();
      emulator = await startPlatformEmulator({
        port: 0,
        hotlineUrl: fake.webhookUrl,
        ring: { kind: 'webhook' },
        platformToken: PLATFORM_TOKEN,
        voice: { speed: 50 },
        input: Readable.from([]),
        output: screen.output,
      });
      expect((await postToEmulator('/v3/ai-flows/flow-1/call', { authorization: `Bearer ${PLATFORM_TOKEN}` })).status).toBe(201);
      expect(await emulator.done).toBe(0);

      const shown = screen.lines.filter((line) => /^\+\d+ ms/.test(line)).map((line) => line.replace(/^\+\d+ ms +/, ''));
      expect(shown).toEqual([
        'speak     "Hello from the flow."  [barge_in: immediate]',
        'audio     clip 2000 ms',
        'barge_in  playback stopped',
        'speak     "Short."',
      ]);
      expect(screen.lines.at(-1)).toBe('call ended: the caller hung up');
      // The barge_in action cut the greeting off before it ended and dropped the clip: only "Short." played to its end.
      expect(fake.events.map((e) => (e.type === 'assistant_speak' ? `${e.type} ${String(e.text)}` : e.type))).toEqual([
        'session_start',
        'assistant_speak Hello from the flow.',
        'assistant_speak Short.',
        'assistant_speech_ended',
        'session_end',
      ]);
    } finally {
      await fake.close();
    }
  });

  test('with --person-says every call rings at once, plays its own copy of the script, and is tagged with its number', async () => {
    // A stand-in Hotline that never greets: each call stays open until the emulator closes, so
    // the three session_starts can only all arrive if no call waits for another.
    const fake = await startScriptedHotline(() => undefined);
    try {
      const screen = terminal();
      emulator = await startPlatformEmulator({
        port: 0,
        hotlineUrl: fake.wsUrl,
        platformToken: PLATFORM_TOKEN,
        voice: { speed: 50, answerTimeoutMs: 60_000 },
        personScript: ['Hello?'],
        answers: { '491510000003': 'mailbox' },
        input: Readable.from([]),
        output: screen.output,
      });
      const numbers = ['491510000001', '491510000002', '491510000003'];
      for (const toPhoneNumber of numbers) {
        const placed = await postToEmulator('/v3/ai-flows/flow-1/call', { authorization: `Bearer ${PLATFORM_TOKEN}` }, { billingDevice: 'dev-1', toPhoneNumber });
        expect(placed.status).toBe(201);
      }
      const started = await Promise.all(
        numbers.map((to) => fake.waitForEvent((e) => e.type === 'session_start' && (e.session as { to_phone_number?: string }).to_phone_number === to)),
      );
      expect(new Set(started.map((e) => e.session.id)).size).toBe(3);
      expect(screen.lines.filter((line) => line.includes('queued'))).toEqual([]);
      expect(screen.lines).toContain('call to 491510000001 placed by flow flow-1: ringing Hotline…');
      expect(screen.lines).toContain('call to 491510000003 placed by flow flow-1: the mailbox will answer; ringing Hotline…');
      expect(screen.lines.some((line) => line.startsWith('[491510000002] calling Hotline at ws://'))).toBe(true);
      expect(emulator.calls.map((c) => c.ended)).toEqual([undefined, undefined, undefined]);

      await emulator.close();
      expect(await emulator.done).toBe(0);
      expect(emulator.calls.map((c) => c.ended)).toEqual(['emulator_closed', 'emulator_closed', 'emulator_closed']);
    } finally {
      await fake.close();
    }
  });

  describe('the person called: a mailbox, nobody, a busy line', () => {
    const MESSAGE = 'Hi, this is Rosa from the bakery. Please call us back about your order.';
    /** Long enough to still play when the mailbox's first sentence has been said. */
    const GREETING = 'Hello, this is Rosa from the bakery calling about your order of three loaves of bread and a cake, do you have a minute to talk about when you would like to pick it up?';

    /** The caller's words and what each event says, as a stand-in for Hotline saw them. */
    const shown = (events: SentEvent[]) =>
      events.map((e) => (e.type === 'user_speak' || e.type === 'assistant_speak' ? `${e.type} ${String(e.text)}` : e.type));

    test('a mailbox: its greeting arrives sentence by sentence as user_speak, then it records what Hotline says until Hotline hangs up', async () => {
      // A stand-in for Hotline that greets at once, leaves its message after the greeting's last sentence and hangs up once it has played.
      let messageSent = false;
      const fake = await startScriptedHotline((event) => {
        if (event.type === 'session_start') return { actions: { type: 'speak', text: GREETING } };
        if (event.type === 'user_speak' && event.text === 'Please leave a message after the tone.') {
          messageSent = true;
          return { actions: { type: 'speak', text: MESSAGE } };
        }
        if (event.type === 'assistant_speech_ended' && messageSent) return { actions: { type: 'hangup' } };
        return undefined;
      });
      try {
        const screen = terminal();
        emulator = await startPlatformEmulator({
          port: 0,
          hotlineUrl: fake.wsUrl,
          platformToken: PLATFORM_TOKEN,
          // The mailbox's first sentence takes about 170 ms, Hotline's greeting about 580 ms.
          voice: { speed: 20 },
          answers: { '+49 151 1234567': 'mailbox' },
          input: Readable.from([]),
          output: screen.output,
        });
        expect((await postToEmulator('/v3/ai-flows/flow-1/call', { authorization: `Bearer ${PLATFORM_TOKEN}` })).status).toBe(201);
        await emulator.callEnded(0);

        const [start] = fake.events;
        expect(start).toMatchObject({ type: 'session_start', session: { direction: 'outbound', to_phone_number: '491511234567' } });
        expect(shown(fake.events)).toEqual([
          'session_start',
          `assistant_speak ${GREETING}`,
          'user_speak The person you are trying to reach is not available.',
          'user_speak Please leave a message after the tone.',
          `assistant_speak ${MESSAGE}`,
          'assistant_speech_ended',
          'session_end',
        ]);
        // The mailbox's first words cut Hotline's greeting off, as any caller's words do.
        expect(fake.events.filter((e) => e.type === 'user_speak').map((e) => e.barged_in)).toEqual([true, false]);
        expect(fake.events.at(-1)).toMatchObject({ type: 'session_end', reason: 'hangup' });

        expect(emulator.calls).toEqual([
          {
            aiFlowId: 'flow-1',
            toPhoneNumber: '491511234567',
            answeredAs: 'mailbox',
            sessionId: start!.session.id,
            hotlineSaid: [GREETING, MESSAGE],
            // Said over the greeting, the first speech is not on the recording.
            message: [MESSAGE],
            ended: 'hotline_hung_up',
          },
        ]);
        expect(screen.lines).toContain('call to 491511234567 placed by flow flow-1: the mailbox will answer; ringing Hotline…');
        expect(screen.lines).toContain('mailbox: beep (recording)');
        expect(screen.lines).toContain(`mailbox recorded: ${JSON.stringify(MESSAGE)}`);
        expect(screen.lines.at(-1)).toBe('call ended: Hotline hung up');
      } finally {
        await fake.close();
      }
    });

    test('a mailbox with a German greeting, against a real Hotline: the call rings, the greeting is said, and the call ends', async () => {
      const { emulator, screen } = await startBoth(Readable.from([]), {
        defaultAnswer: 'mailbox',
        mailboxGreeting: MAILBOX_GREETINGS.de,
      });
      expect((await placeCall({ toPhoneNumber: '491511234567', variables: { name: 'Anna' } })).status).toBe(201);
      await emulator.callEnded(0);

      expect(screen.lines).toContain('the mailbox answers');
      expect(screen.lines).toContain('mailbox: Der gewünschte Gesprächspartner ist zurzeit nicht erreichbar.');
      expect(screen.lines).toContain('mailbox: Sie können aber nach dem Signalton eine Nachricht hinterlassen.');
      expect(screen.lines).toContain('mailbox: beep (recording)');
      expect(emulator.calls).toHaveLength(1);
      const [call] = emulator.calls;
      expect(call).toMatchObject({ answeredAs: 'mailbox', sessionId: expect.any(String) });
      // Hotline knows a mailbox: it leaves its message after the tone and hangs up.
      expect(call!.ended).toBe('hotline_hung_up');
    });

    test('nobody answers: the API says 201, Hotline is never rung', async () => {
      const { emulator, screen } = await startBoth(Readable.from([]), { answers: { '491511234567': 'no_answer' } });
      expect((await placeCall({ toPhoneNumber: '491511234567' })).status).toBe(201);
      await emulator.callEnded(0);

      expect(emulator.calls).toEqual([
        { aiFlowId: 'flow-1', toPhoneNumber: '491511234567', answeredAs: 'no_answer', sessionId: undefined, hotlineSaid: [], message: [], ended: 'no_answer' },
      ]);
      expect(screen.lines).toContain('call to 491511234567 placed by flow flow-1: nobody answers; Hotline is not rung');
      expect(screen.lines.some((line) => line.startsWith('calling Hotline'))).toBe(false);
      // No call, no transcript.
      // No call, no transcript (the folder holds only the database of calls).
      expect((await readdir(env!.transcriptsDir, { recursive: true })).filter((f) => f.endsWith('.jsonl'))).toEqual([]);

      // Nobody played the piped input: the emulator waits for the next call until it is closed.
      await emulator.close();
      expect(await emulator.done).toBe(0);
      await expect(emulator.callEnded(1)).rejects.toThrow('the emulator closed before call 1 ended');
    });

    test.each(['websocket', 'webhook'] as const)(
      'a busy line over the %s: 201, then only a session_end with reason "busy" for a session Hotline never saw',
      async (kind) => {
        const fake = await startScriptedHotline(() => undefined);
        try {
          const screen = terminal();
          emulator = await startPlatformEmulator({
            port: 0,
            hotlineUrl: kind === 'websocket' ? fake.wsUrl : fake.webhookUrl,
            ring: { kind },
            platformToken: PLATFORM_TOKEN,
            defaultAnswer: 'busy',
            input: Readable.from([]),
            output: screen.output,
          });
          expect((await postToEmulator('/v3/ai-flows/flow-1/call', { authorization: `Bearer ${PLATFORM_TOKEN}` })).status).toBe(201);
          await emulator.callEnded(0);

          const end = await fake.waitForEvent((e) => e.type === 'session_end');
          expect(fake.events).toEqual([
            {
              type: 'session_end',
              reason: 'busy',
              session: {
                id: end.session.id,
                account_id: 'simulator',
                phone_number: '4930000000',
                direction: 'outbound',
                from_phone_number: '4930000000',
                to_phone_number: '491511234567',
              },
            },
          ]);
          expect(emulator.calls).toEqual([
            { aiFlowId: 'flow-1', toPhoneNumber: '491511234567', answeredAs: 'busy', sessionId: end.session.id, hotlineSaid: [], message: [], ended: 'busy' },
          ]);
          expect(screen.lines).toContain('call to 491511234567 placed by flow flow-1: the line is busy; Hotline is not rung');
        } finally {
          await fake.close();
        }
      },
    );

    test('a busy line against a real Hotline: the stray session_end harms nothing; the next call plays the piped input', async () => {
      const { emulator, screen } = await startBoth(Readable.from(['Who is this?\n']), { answers: { '491517654321': 'busy' } });
      expect((await placeCall({ toPhoneNumber: '491517654321' })).status).toBe(201);
      await emulator.callEnded(0);
      expect(screen.lines).toContain(`session_end (reason "busy") sent for session ${emulator.calls[0]!.sessionId}, which Hotline never saw start`);
      expect((await placeCall({ toPhoneNumber: '491511234567', variables: { name: 'Anna' } })).status).toBe(201);
      expect(await emulator.done).toBe(0);

      expect(emulator.calls.map((c) => [c.toPhoneNumber, c.answeredAs, c.ended])).toEqual([
        ['491517654321', 'busy', 'busy'],
        ['491511234567', 'person', 'person_hung_up'],
      ]);
      expect(emulator.calls[1]!.hotlineSaid).toContain('Rosa from the bakery, about your order.');
    });
  });
});

describe('simulate --platform: who answers, from the command line', () => {
  test('--mailbox, --no-answer and --busy, repeatable, numbers as people write them; --mailbox-greeting en, de or text', () => {
    const settings = parseSettings(
      ['--platform', '--mailbox', '+49 151 1234567', '--mailbox', '491510000001', '--no-answer', '491510000002', '--busy', '491510000003', '--mailbox-greeting', 'de'],
      {},
    );
    expect(settings).toMatchObject({
      mode: 'platform',
      answers: { '491511234567': 'mailbox', '491510000001': 'mailbox', '491510000002': 'no_answer', '491510000003': 'busy' },
      mailboxGreeting: MAILBOX_GREETINGS.de,
    });
    expect(parseSettings(['--platform', '--mailbox-greeting', 'Hier ist die Mailbox von Rosa.'], {})).toMatchObject({
      mailboxGreeting: 'Hier ist die Mailbox von Rosa.',
    });
    expect(parseSettings(['--platform'], {})).toMatchObject({ answers: {} });
    expect(parseSettings(['--platform', '--person-says', 'Hello?', '--person-says', ' Yes, go on. '], {})).toMatchObject({
      personScript: ['Hello?', 'Yes, go on.'],
    });
    expect(() => parseSettings(['--platform', '--person-says', ' '], {})).toThrow(new UsageError('--person-says needs a line to say.'));
    expect(() => parseSettings(['--person-says', 'Hello?'], {})).toThrow(/--person-says can be used only with --platform/);
  });

  test('refused: one number given two answers, a number that is none, the flags without --platform', () => {
    expect(() => parseSettings(['--platform', '--mailbox', '491511234567', '--busy', '+491511234567'], {})).toThrow(
      new UsageError('491511234567 is given to both --mailbox and --busy; give it to one.'),
    );
    expect(() => parseSettings(['--platform', '--no-answer', 'anna'], {})).toThrow(UsageError);
    expect(() => parseSettings(['--mailbox', '491511234567'], {})).toThrow(/--mailbox can be used only with --platform/);
  });
});

describe('voicemail: a real Hotline tells a mailbox from a person', () => {
  const transcriptOf = async (sessionId: string) =>
    (await readFile(path.join(env!.transcriptsDir, `${sessionId}.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  test.each([
    ['English', MAILBOX_GREETINGS.en],
    ['German', MAILBOX_GREETINGS.de],
  ])('a %s mailbox gets the message made for the person after its tone, then the hangup; no conversation', async (_language, greeting) => {
    const { emulator } = await startBoth(Readable.from([]), { defaultAnswer: 'mailbox', mailboxGreeting: greeting });
    expect((await placeCall({ toPhoneNumber: '491511234567', variables: { name: 'Anna', topic: 'your order 42' } })).status).toBe(201);
    await emulator.callEnded(0);
    const [call] = emulator.calls;
    expect(call).toMatchObject({ answeredAs: 'mailbox', ended: 'hotline_hung_up' });
    // Recorded after the tone: the whole message, made from the call's variables.
    expect(call!.message.join(' ')).toMatch(/^Hi Anna, .*your order 42.*call us back.*Goodbye!$/);
    // Nothing was asked of the model: a mailbox gets no conversation.
    expect(env!.llm.requests).toHaveLength(0);
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env!.hotline.registry.endAll('flush');
    const lines = await transcriptOf(call!.sessionId!);
    expect(lines.find((l) => l.text === 'voicemail_detected')).toMatchObject({ role: 'event', by: 'phrases' });
    expect(lines.filter((l) => l.role === 'user').every((l) => l.mailbox === true)).toBe(true);
    // The call's record says how it ended.
    await env!.hotline.registry.whenRecorded();
    await env!.hotline.reports.whenIdle();
    expect((await env!.hotline.reports.getCall(call!.sessionId!))?.call.endReason).toBe('voicemail');
  });

  test('a person who says "Hello?" gets the tailored greeting and a conversation', async () => {
    const { emulator, screen } = await startBoth(Readable.from(['Hello?\n', 'Who is this?\n']));
    expect((await placeCall({ toPhoneNumber: '491511234567', variables: { name: 'Anna', topic: 'your order 42' } })).status).toBe(201);
    await screen.waitFor(/Rosa from the bakery/);
    expect(screen.lines.some((line) => /Hi Anna, .*your order 42/.test(line))).toBe(true);
    const [first] = env!.llm.requests;
    expect(first?.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'Hello?' });
    expect(emulator.calls[0]).toMatchObject({ answeredAs: 'person' });
  });
});
