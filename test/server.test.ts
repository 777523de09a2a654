import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../src/config.js';
import { ConfigError } from '../src/errors.js';
import { startHotline, type RunningHotline } from '../src/server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';

describe('configuration', () => {
  test('no LLM configured: demo mode, except in production where startup is refused with what to set', () => {
    expect(loadConfig({}).llm.mode).toBe('demo');
    expect(loadConfig({ OPENAI_BASE_URL: 'http://localhost:11434/v1' }).llm.mode).toBe('remote');
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/OPENAI_API_KEY.*OPENAI_BASE_URL/s);
  });

  test('bad values are reported by variable name', () => {
    expect(() => loadConfig({ PORT: 'eighty', LLM_TIMEOUT_MS: '-1' })).toThrow(/PORT[\s\S]*LLM_TIMEOUT_MS/);
    expect(() => loadConfig({ TRANSFER_TARGETS: 'sales' })).toThrow(/TRANSFER_TARGETS/);
    expect(loadConfig({ TRANSFER_TARGETS: 'sales=1, support = 2' }).transfer.targets).toEqual({ sales: '1', support: '2' });
  });
});

describe('Hotline on the built-in demo model', () => {
  let hotline: RunningHotline;
  let transcriptsDir: string;

  beforeAll(async () => {
    transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-demo-'));
    hotline = await startHotline(
      loadConfig({ HOST: '127.0.0.1', PORT: '0', TRANSCRIPTS_DIR: transcriptsDir, DEMO_TTFT_MS: '0', DEMO_TOKEN_DELAY_MS: '0', WEBHOOK_MAX_BYTES: '4096' }),
      pino({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    await hotline.close();
    await rm(transcriptsDir, { recursive: true, force: true });
  });

  test('GET /healthz answers 200 JSON and says loudly that the demo model runs', async () => {
    const res = await fetch(`${hotline.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as { status: string; llm: { mode: string; warning: string } };
    expect(body.status).toBe('ok');
    expect(body.llm.mode).toBe('demo');
    expect(body.llm.warning).toMatch(/DEMO/);
  });

  test('unknown paths get a JSON 404; WebSocket upgrades elsewhere than /ws are refused', async () => {
    const res = await fetch(`${hotline.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not found' });
    const ws = new WebSocket(hotline.wsUrl.replace('/ws', '/other'));
    const status = await new Promise<number | undefined>((resolve) => {
      ws.on('unexpected-response', (_req, response) => resolve(response.statusCode));
      ws.on('error', () => resolve(undefined));
    });
    expect(status).toBe(404);
  });

  test('a whole call through the demo model: question, transfer to a person, then goodbye and hangup', async () => {
    const service = await FakeVoiceService.connect(hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.2 } });
    service.start();
    expect((await service.nextOfType('speak')).text).toMatch(/thanks for calling/i);
    service.say('What are your opening hours?');
    expect((await service.nextOfType('speak')).text).toMatch(/^We're open Monday to Friday/);
    service.say('Can I talk to a person please?');
    expect(await service.nextOfType('transfer')).toMatchObject({ target: 'demo-operator' });
    service.say('Okay, goodbye');
    expect((await service.nextOfType('speak')).text).toMatch(/lovely day/);
    await service.nextOfType('hangup');
    await service.close();
  });

  test('a WebSocket message over WEBHOOK_MAX_BYTES closes that socket with 1009; other calls are unaffected', async () => {
    const big = await FakeVoiceService.connect(hotline.wsUrl);
    const other = await FakeVoiceService.connect(hotline.wsUrl);
    other.start();
    await other.nextOfType('speak');
    big.send({ type: 'user_speak', session: { id: big.sessionId }, text: 'x'.repeat(5000) });
    expect(await big.closed).toBe(1009);
    other.say('What are your opening hours?');
    expect((await other.nextOfType('speak')).text).toMatch(/^We're open/);
    await other.close();
  });
});
