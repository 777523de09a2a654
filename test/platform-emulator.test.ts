import { Readable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { startPlatformEmulator, type PlatformEmulator, type PlatformEmulatorOptions } from '../src/simulator/platform-emulator.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startScriptedHotline } from './helpers/scripted-hotline.js';
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
});
