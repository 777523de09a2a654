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

  test('one line per bad variable, saying what is expected', () => {
    const message = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    };
    expect(message({ PORT: 'abc' })).toBe('PORT must be a port number 1–65535 (0 picks any free port)');
    expect(message({ PUBLIC_URL: 'hotline.example.com' })).toMatch(/^PUBLIC_URL must be an http:\/\/ or https:\/\/ URL/);
    expect(message({ OPENAI_BASE_URL: 'localhost:11434/v1' })).toMatch(/^OPENAI_BASE_URL must be an http:\/\/ or https:\/\/ URL/);
    expect(message({ TRUST_PROXY: '999.1.1.1' })).toMatch(/^TRUST_PROXY must be/);
    expect(message({ PORT: 'abc', WEBHOOK_REPLY: 'all' }).split('\n')).toHaveLength(2);
  });

  test('empty values mean unset, as a .env file with "PORT=" would leave them', () => {
    const config = loadConfig({ PORT: '', LLM_TEMPERATURE: '', OPENAI_BASE_URL: ' ', TRANSFER_TARGET: '' });
    expect(config.port).toBe(3000);
    expect(config.llm.temperature).toBeUndefined();
    expect(config.llm.mode).toBe('demo');
    expect(config.transfer.defaultTarget).toBeUndefined();
  });

  test('in production, outbound calls refuse to start while a call transport is open to anyone', () => {
    const WS = 'websocket-token-of-the-test';
    const outbound = { NODE_ENV: 'production', OPENAI_API_KEY: 'sk-x', ADMIN_TOKEN: 'admin-token-of-the-test', AIFLOW_API_URL: 'https://api.example.com', AIFLOW_ACCESS_TOKEN: 't' };
    expect(() => loadConfig(outbound)).toThrow(/the webhook \(set WEBHOOK_SECRET\) and the WebSocket \(set WS_TOKEN\)/);
    expect(() => loadConfig({ ...outbound, WS_TOKEN: WS })).toThrow(/the webhook \(set WEBHOOK_SECRET\) is open/);
    expect(loadConfig({ ...outbound, WS_TOKEN: WS, TRANSPORTS: 'websocket' }).transports).toEqual(new Set(['websocket']));
    expect(loadConfig({ ...outbound, WS_TOKEN: WS, WEBHOOK_SECRET: 'webhook-secret-of-the-test' }).transports).toEqual(new Set(['websocket', 'webhook']));
    // Without outbound calls there are no variables to claim; development keeps warning instead.
    expect(() => loadConfig({ ...outbound, ADMIN_TOKEN: '' })).not.toThrow();
    expect(() => loadConfig({ ...outbound, NODE_ENV: 'development' })).not.toThrow();
  });

  test('a shared secret shorter than 16 characters, or a pattern repeated: refused in production, naming it but never its value', () => {
    const production = { NODE_ENV: 'production', OPENAI_API_KEY: 'sk-x' };
    const message = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    };
    const refused = message({ ...production, ADMIN_TOKEN: 'a', WS_TOKEN: 'short-token', WEBHOOK_SECRET: 'x'.repeat(40), METRICS_TOKEN: 'abcabcabcabcabcabc', REPORT_WEBHOOK_URL: 'https://crm.example.com/r', REPORT_WEBHOOK_SECRET: 'hmac' });
    expect(refused.split('\n')).toEqual([
      'ADMIN_TOKEN is 1 character long: use at least 16 random characters (e.g. `openssl rand -hex 32`)',
      'WS_TOKEN is 11 characters long: use at least 16 random characters (e.g. `openssl rand -hex 32`)',
      'WEBHOOK_SECRET repeats one character: use at least 16 random characters (e.g. `openssl rand -hex 32`)',
      'METRICS_TOKEN repeats a pattern of 3 characters: use at least 16 random characters (e.g. `openssl rand -hex 32`)',
      'REPORT_WEBHOOK_SECRET is 4 characters long: use at least 16 random characters (e.g. `openssl rand -hex 32`)',
      'NODE_ENV=production refuses a secret that can be guessed.',
    ]);
    expect(refused).not.toContain('short-token');
    // 16 characters is enough; the keys others issue (OPENAI_API_KEY, AIFLOW_ACCESS_TOKEN) are theirs to choose.
    expect(() => loadConfig({ ...production, ADMIN_TOKEN: '0123456789abcdef', AIFLOW_ACCESS_TOKEN: 't' })).not.toThrow();
    // Outside production (the tests' own short tokens, a first trial) it starts, and warns (test/startup.test.ts).
    expect(() => loadConfig({ ADMIN_TOKEN: 'a', NODE_ENV: 'development' })).not.toThrow();
    expect(() => loadConfig({ ADMIN_TOKEN: 'a', NODE_ENV: 'test' })).not.toThrow();
  });

  test('the token cap goes to the field the endpoint knows', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'sk-x' }).llm.maxTokensParam).toBe('max_completion_tokens');
    expect(loadConfig({ OPENAI_BASE_URL: 'http://localhost:11434/v1' }).llm.maxTokensParam).toBe('max_tokens');
    expect(loadConfig({ OPENAI_BASE_URL: 'https://x.openai.azure.com/openai/v1' }).llm.maxTokensParam).toBe('max_completion_tokens');
    expect(loadConfig({ OPENAI_BASE_URL: 'http://h/v1', LLM_MAX_TOKENS_PARAM: 'max_completion_tokens' }).llm.maxTokensParam).toBe(
      'max_completion_tokens',
    );
    expect(loadConfig({ LLM_MAX_TOKENS: '0' }).llm.maxTokens).toBeUndefined();
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
