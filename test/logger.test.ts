import { Writable } from 'node:stream';
import { APIError } from 'openai';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createLogger, createScrubber, redactUrlCredentials } from '../src/logger.js';
import { logSecrets } from '../src/startup/log-secrets.js';

const API_KEY = 'sk-proj-secret-key-0123456789';
const WEBHOOK_SECRET = 'hook"secret\\with-quotes';
const SHORT_TOKEN = 'abc';

/** A logger writing JSON lines into an array, as Hotline's would to stdout. */
function capture(secrets: string[]) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', env: 'test', secrets, destination });
  return { logger, lines, text: () => lines.join('\n') };
}

describe('log lines never show a configured secret', () => {
  test("an LLM error's message and stack, a nested field, a child logger's line and the message text", () => {
    const { logger, lines, text } = capture([API_KEY, WEBHOOK_SECRET]);
    const refused = APIError.generate(401, { error: { message: `Incorrect API key provided: ${API_KEY}.` } }, undefined, new Headers());
    logger.error({ err: refused, turn: 1 }, 'LLM turn failed');
    logger.child({ sessionId: 'call-1' }).warn({ request: { deep: { headers: { 'x-secret': WEBHOOK_SECRET } } } }, 'nested');
    logger.info(`a message that quotes ${API_KEY} itself`);
    logger.info({ url: `https://example.com/hook?token=${encodeURIComponent(WEBHOOK_SECRET)}` }, 'in a URL');

    expect(lines).toHaveLength(4);
    expect(text()).not.toContain(API_KEY);
    expect(text()).not.toContain(JSON.stringify(WEBHOOK_SECRET).slice(1, -1));
    expect(text()).not.toContain(encodeURIComponent(WEBHOOK_SECRET));
    const [error, nested, message] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(error).toMatchObject({
      msg: 'LLM turn failed',
      turn: 1,
      err: { type: 'AuthenticationError', message: '401 Incorrect API key provided: [redacted].', stack: expect.stringContaining('[redacted]') },
    });
    expect(nested).toMatchObject({ sessionId: 'call-1', request: { deep: { headers: { 'x-secret': '[redacted]' } } } });
    expect(message).toMatchObject({ msg: 'a message that quotes [redacted] itself' });
  });

  test('URLs lose their credentials, in fields and in the message, with or without secrets configured', () => {
    for (const secrets of [[], [API_KEY]]) {
      const { logger, lines } = capture(secrets);
      logger.info({ llmEndpoint: 'http://user:pa55word@llm.internal:8000/v1' }, 'GET https://ghp16C7e42F292c6912E7710c@git.example.com/x failed');
      expect(JSON.parse(lines[0]!)).toMatchObject({
        llmEndpoint: 'http://user:***@llm.internal:8000/v1',
        msg: 'GET https://***@git.example.com/x failed',
      });
    }
    expect(redactUrlCredentials('ws://localhost:3000/ws?token=<WS_TOKEN> and mail@example.com')).toBe(
      'ws://localhost:3000/ws?token=<WS_TOKEN> and mail@example.com',
    );
  });

  test('a short secret is replaced where it stands alone, not inside words or JSON keys', () => {
    const { logger, lines } = capture([SHORT_TOKEN]);
    logger.info({ token: SHORT_TOKEN, word: 'abcdef' }, `token ${SHORT_TOKEN}.`);
    expect(JSON.parse(lines[0]!)).toMatchObject({ token: '[redacted]', word: 'abcdef', msg: 'token [redacted].' });
  });

  test('without secrets the scrubber changes nothing but URL credentials', () => {
    const scrub = createScrubber([]);
    const line = '{"level":30,"msg":"call started","sessionId":"abc"}';
    expect(scrub(line)).toBe(line);
  });

  test("the password of OPENAI_BASE_URL is a secret too, wherever it shows up; the configured secrets are", () => {
    const config = loadConfig({
      OPENAI_API_KEY: API_KEY,
      OPENAI_BASE_URL: 'http://hotline:pa%24%24word-1@llm.internal/v1',
      WS_TOKEN: 'ws-token-1',
      ADMIN_TOKEN: 'admin-token-1',
      AIFLOW_API_URL: 'https://TOKEN0123456789@api.example.com',
    });
    expect(logSecrets(config)).toEqual(
      expect.arrayContaining([API_KEY, 'ws-token-1', 'admin-token-1', 'pa%24%24word-1', 'pa$$word-1', 'TOKEN0123456789']),
    );
    expect(logSecrets(config)).not.toContain('hotline');
  });

  test('a URL without a password is shown as it is: its user name, its scheme and every "postgres" stay', () => {
    const url = 'postgres://postgres@localhost:5432/postgres';
    const config = loadConfig({ DATABASE_URL: url, REPORT_WEBHOOK_URL: 'https://hotline@crm.example.com/in', REPORT_WEBHOOK_SECRET: 'report-secret-1' });
    expect(logSecrets(config)).not.toContain('postgres');
    expect(logSecrets(config)).not.toContain('hotline');
    const { logger, lines } = capture(logSecrets(config));
    logger.error({ store: `postgres ${url}` }, `DATABASE_URL ${url} cannot be used (28P01: password authentication failed for user "postgres")`);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      store: `postgres ${url}`,
      msg: `DATABASE_URL ${url} cannot be used (28P01: password authentication failed for user "postgres")`,
    });
    expect(redactUrlCredentials('https://hotline@crm.example.com/in')).toBe('https://hotline@crm.example.com/in');
  });

  test('a password is hidden, nothing else: one that is also an ordinary word of the logs only where it stands in its URL', () => {
    for (const [url, shown] of [
      ['postgres://postgres:postgres@postgres:5432/postgres', 'postgres://postgres:***@postgres:5432/postgres'],
      ['postgres://app:password@db:5432/hotline', 'postgres://app:***@db:5432/hotline'],
      ['postgres://app:secret@db/hotline', 'postgres://app:***@db/hotline'],
    ] as const) {
      const config = loadConfig({ DATABASE_URL: url });
      const { logger, lines } = capture(logSecrets(config));
      logger.error(`DATABASE_URL ${url} cannot be used: password authentication failed for user "postgres"; the secret word is safe`);
      expect(JSON.parse(lines[0]!).msg, url).toBe(`DATABASE_URL ${shown} cannot be used: password authentication failed for user "postgres"; the secret word is safe`);
    }
  });

  test('a password that is a secret of its own is hidden wherever it shows, in every URL setting that may carry one', () => {
    const password = 'Xy7-s3cret-99';
    const config = loadConfig({
      DATABASE_URL: `postgres://hotline:${password}@db.example.com/hotline`,
      REPORT_WEBHOOK_URL: 'https://crm:R3port-pass-77@crm.example.com/in',
      REPORT_WEBHOOK_SECRET: 'report-secret-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel:0tel-pass-4242@otel.example.com',
    });
    expect(logSecrets(config)).toEqual(expect.arrayContaining([password, 'R3port-pass-77', '0tel-pass-4242']));
    const { logger, lines } = capture(logSecrets(config));
    logger.error(`connecting as hotline with ${password} failed; basic ${Buffer.from(`crm:R3port-pass-77`).toString('base64')}`);
    expect(JSON.parse(lines[0]!).msg).toMatch(/^connecting as hotline with \[redacted\] failed; basic \S*\[redacted\]/);
  });
});
