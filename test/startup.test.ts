import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, onTestFinished, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openFailure } from '../src/store/sqlite/open-failure.js';
import { openStore } from '../src/store/store.js';
import { ConfigError } from '../src/errors.js';
import { checkLlm, checkLlmAtStartup, describeLlmCheck } from '../src/llm/startup-check.js';
import { createLogger } from '../src/logger.js';
import { exposureAdvice, listeningMessage, startupUrls } from '../src/startup/announce.js';
import { startProgress } from '../src/startup/progress.js';
import { describeStartupError, startupErrorText } from '../src/startup/startup-error.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { CHILD_TEST_TIMEOUT_MS, spawnHotline, type HotlineProcess } from './helpers/child-process.js';
import { postgresReachable } from './helpers/stores.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * src/main.ts in a child process, killed when the test ends (concurrent tests pass their own onTestFinished).
 * Each in a folder of its own unless the test names one: two servers on one database file refuse each other.
 */
function hotline(vars: Record<string, string> = {}, onFinished: typeof onTestFinished = onTestFinished): HotlineProcess {
  const transcripts = mkdtempSync(path.join(tmpdir(), 'hotline-startup-'));
  const started = spawnHotline({ TRANSCRIPTS_DIR: transcripts, ...vars });
  onFinished(async () => {
    started.child.kill('SIGKILL');
    await started.exited;
    rmSync(transcripts, { recursive: true, force: true });
  });
  return started;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { server, port, url: `http://127.0.0.1:${port}` };
}

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function errno(code: string, syscall: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${syscall} ${code}`), { code, syscall, ...extra });
}

const target = { host: '0.0.0.0', port: 3000 };

describe('a failed start says what to fix', () => {
  test.each([
    [errno('EADDRINUSE', 'listen', { port: 3000 }), 'PORT 3000 is already in use: stop the other program or set PORT to a free port'],
    [errno('EACCES', 'listen', { port: 80 }), /^PORT 80 may not be opened by this user .*set PORT to 1024 or above/],
    [errno('EADDRNOTAVAIL', 'listen', { address: '192.0.2.1' }), /^HOST 0\.0\.0\.0 \(192\.0\.2\.1\) is not an address of this machine: set HOST/],
    [errno('ENOTFOUND', 'getaddrinfo'), 'HOST 0.0.0.0 cannot be resolved: set HOST to an address of this machine (0.0.0.0 listens on all)'],
    [new ConfigError('TRANSCRIPTS_DIR /x cannot be written'), 'TRANSCRIPTS_DIR /x cannot be written'],
  ])('%s', (error, expected) => {
    const failure = describeStartupError(error, target);
    expect(failure.expected).toBe(true);
    expect(failure.message).toMatch(expected);
  });

  test('an unforeseen error: a short line, the stack only when debugging', () => {
    const error = new TypeError('something broke');
    expect(startupErrorText(error, target, { debug: false })).toBe('Hotline could not start: something broke (LOG_LEVEL=debug shows the stack)');
    expect(startupErrorText(error, target, { debug: true })).toMatch(/^Hotline could not start: something broke\nTypeError: something broke\n {4}at /);
  });

  test('empty values are unset: PORT= listens on 3000, LLM_TEMPERATURE= leaves the temperature to the endpoint', () => {
    expect(loadConfig({ PORT: '' }).port).toBe(3000);
    expect(loadConfig({ PORT: '  ', LLM_TEMPERATURE: '', OPENAI_API_KEY: 'sk-x' }).llm.temperature).toBeUndefined();
  });

  // Each a real start of src/main.ts: exit code 1 and exactly the one line on stderr, no stack trace.
  test.concurrent.for([
    ['a bad value', { PORT: 'abc' }, /^PORT must be a port number/],
    ['two bad values, one line each', { PORT: 'abc', LLM_TIMEOUT_MS: '-1' }, /^PORT must be .*\nLLM_TIMEOUT_MS must be .*$/],
    ['a missing prompts folder', { PROMPTS_DIR: '/nonexistent/hotline-prompts' }, /^PROMPTS_DIR \/nonexistent\/hotline-prompts .*$/],
    ['a transcripts folder that cannot be written', { TRANSCRIPTS_DIR: '/dev/null/transcripts' }, /^TRANSCRIPTS_DIR \/dev\/null\/transcripts cannot be written .*set TRANSCRIPTS_DIR/],
    ['a HOST that does not resolve', { HOST: 'nosuchhost.invalid' }, /^HOST nosuchhost\.invalid cannot be resolved: set HOST to an address of this machine \(0\.0\.0\.0 listens on all\)$/],
    ['a HOST of another machine', { HOST: '192.0.2.1' }, /^HOST 192\.0\.2\.1 is not an address of this machine: set HOST/],
  ] as const)('%s', { timeout: CHILD_TEST_TIMEOUT_MS }, async ([, vars, expected], context) => {
    const started = hotline(vars, context.onTestFinished);
    expect(await started.exited).toBe(1);
    const stderr = started.stderr().trimEnd();
    expect(stderr).toMatch(expected);
    expect(stderr).not.toMatch(/^\s+at /m);
    if (!String(expected).includes('\\n')) expect(stderr.split('\n')).toHaveLength(1);
  });

  test('a PORT in use', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const { port } = await listen(() => undefined);
    const started = hotline({ PORT: String(port) });
    expect(await started.exited).toBe(1);
    expect(started.stderr()).toBe(`PORT ${port} is already in use: stop the other program or set PORT to a free port\n`);
  });
});

describe('weak shared secrets', () => {
  test('ADMIN_TOKEN=a: a warning naming it (never its value) outside production; in production no start, one line per weak secret', { timeout: CHILD_TEST_TIMEOUT_MS }, async (context) => {
    const trial = hotline({ NODE_ENV: 'development', ADMIN_TOKEN: 'a', WS_TOKEN: 'tok' }, context.onTestFinished);
    const warning = await trial.line(/ADMIN_TOKEN is 1 character long/);
    expect(warning.input).toContain('use at least 16 random characters');
    expect(warning.input).toContain('"level":40');
    await trial.line(/WS_TOKEN is 3 characters long/);
    expect(trial.stdout()).not.toMatch(/"tok"|: tok\b/);

    const production = hotline({ NODE_ENV: 'production', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', ADMIN_TOKEN: 'a' }, context.onTestFinished);
    expect(await production.exited).toBe(1);
    expect(production.stderr()).toBe(
      'ADMIN_TOKEN is 1 character long: use at least 16 random characters (e.g. `openssl rand -hex 32`)\nNODE_ENV=production refuses a secret that can be guessed.\n',
    );
  });
});

describe('a database that cannot be opened names DATABASE_FILE, the file and what to do', () => {
  async function folder(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-db-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }

  /** A real start of src/main.ts on DATABASE_FILE `file`: exit 1 and one line on stderr. */
  async function failedStart(file: string): Promise<string> {
    const started = hotline({ DATABASE_FILE: file });
    expect(await started.exited).toBe(1);
    const stderr = started.stderr().trimEnd();
    expect(stderr.split('\n'), stderr).toHaveLength(1);
    expect(stderr).not.toMatch(/^\s+at /m);
    return stderr;
  }

  const quoted = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  test('a damaged file: not a SQLite database, restore it or move it away', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const file = path.join(await folder(), 'hotline.db');
    await writeFile(file, randomBytes(8192));
    expect(await failedStart(file)).toMatch(
      new RegExp(`^DATABASE_FILE ${quoted(file)} is not a SQLite database or is damaged \\(file is not a database\\): restore it from a backup, or move it away`),
    );
  });

  test('a folder: set DATABASE_FILE to a file in it', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const dir = path.join(await folder(), 'data');
    await mkdir(dir);
    expect(await failedStart(dir)).toBe(`DATABASE_FILE ${dir} is a folder, not a file: set DATABASE_FILE to a file in it, e.g. ${path.join(dir, 'hotline.db')}`);
  });

  test('below a file: the path cannot be made', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const blocker = path.join(await folder(), 'a-file');
    await writeFile(blocker, 'not a folder');
    expect(await failedStart(path.join(blocker, 'hotline.db'))).toMatch(/^DATABASE_FILE .*a-file\/hotline\.db lies below a file, not a folder \(.*\): set DATABASE_FILE to a file in a folder$/);
  });

  test('locked by another program: stop it, or give this Hotline a file of its own', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const file = path.join(await folder(), 'hotline.db');
    // Another program holds an exclusive lock (a rollback journal, as an sqlite3 shell in a transaction would).
    const other = new BetterSqlite3(file);
    other.pragma('journal_mode = DELETE');
    other.exec('CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)');
    cleanups.push(() => void other.close());
    expect(await failedStart(file)).toMatch(
      new RegExp(`^DATABASE_FILE ${quoted(file)} is locked by another program \\(database is locked\\): stop the other Hotline or sqlite3 shell`),
    );
  });

  test('a second Hotline on the same file: at once, naming the first one\'s process; the CLIs still open it; a killed one leaves no claim', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const dir = await folder();
    const first = hotline({ TRANSCRIPTS_DIR: dir });
    await first.line(/"websocketUrl"/);
    const second = hotline({ TRANSCRIPTS_DIR: dir });
    // From the moment it goes for the database (right after the prompts) to its exit: no wait for a heartbeat.
    await second.line(/prompts loaded/);
    const goingForTheFile = Date.now();
    expect(await second.exited).toBe(1);
    expect(Date.now() - goingForTheFile).toBeLessThan(10_000);
    const file = path.join(dir, 'hotline.db');
    expect(second.stderr().trimEnd()).toMatch(
      new RegExp(
        `^DATABASE_FILE ${quoted(file)} is in use by Hotline process ${first.child.pid} on ${quoted(hostname())} \\(since \\d{4}-[^)]+\\): ` +
          "a SQLite file is one Hotline's\\. Stop that one first, or give this one a file of its own: set DATABASE_FILE to another file, " +
          'or TRANSCRIPTS_DIR to another folder .*Several Hotline processes share one store only on PostgreSQL: set DATABASE_URL\\.$',
      ),
    );
    expect(first.child.exitCode).toBeNull();

    // The command-line tools open the file beside the running Hotline: they do not claim it.
    const quiet = pino({ level: 'silent' });
    const beside = await openStore({ databaseFile: file }, quiet);
    await beside.close();

    // Killed, it leaves no claim behind: the system let go of its lock, so the next server takes the file at once.
    first.child.kill('SIGKILL');
    await first.exited;
    const next = await openStore({ databaseFile: file }, quiet, { claim: true });
    await next.close();
  });

  // Tests run as root on CI, which may write anywhere: a refused permission or a read-only disk is the error SQLite and Node raise.
  test.each([
    [Object.assign(new BetterSqlite3.SqliteError('attempt to write a readonly database', 'SQLITE_READONLY'), {}), /^DATABASE_FILE \/srv\/h\.db cannot be written \(attempt to write a readonly database\): let Hotline's user write the file and its folder \(SQLite adds h\.db-wal and -shm beside it\) or mount it writable, or set DATABASE_FILE/],
    [Object.assign(new Error("EROFS: read-only file system, mkdir '/srv'"), { code: 'EROFS' }), /^DATABASE_FILE \/srv\/h\.db cannot be written \(EROFS: read-only file system/],
    [Object.assign(new Error("EACCES: permission denied, mkdir '/srv'"), { code: 'EACCES' }), /^DATABASE_FILE \/srv\/h\.db may not be opened by Hotline's user \(EACCES: permission denied.*\): let that user read and write the file and its folder/],
    [new BetterSqlite3.SqliteError('database or disk is full', 'SQLITE_FULL'), /^DATABASE_FILE \/srv\/h\.db cannot grow: the disk is full/],
    [new BetterSqlite3.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE'), /^DATABASE_FILE \/srv\/h\.db could not be read or written \(disk I\/O error\): check the disk/],
    [new BetterSqlite3.SqliteError('unable to open database file', 'SQLITE_CANTOPEN'), /^DATABASE_FILE \/srv\/h\.db cannot be opened \(unable to open database file\): check that its folder exists/],
  ])('%s', (error, expected) => {
    expect(openFailure('/srv/h.db', error)).toMatch(expected);
  });
});

describe.skipIf(!(await postgresReachable()))('a DATABASE_URL without a password', () => {
  test('is shown as it is in the error of a failed start: its user name and every "postgres" stay', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const url = 'postgres://postgres@127.0.0.1:5432/hotline_no_such_database';
    const started = hotline({ DATABASE_URL: url });
    expect(await started.exited).toBe(1);
    expect(started.stderr().trimEnd()).toMatch(new RegExp(`^DATABASE_URL ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be used \\(3D000: database "hotline_no_such_database" does not exist\\)`));
  });
});

describe('the startup announcement', () => {
  test('URLs for the AI flow, one per line; PUBLIC_URL wins; the token is named, never shown', () => {
    const local = loadConfig({ HOST: '0.0.0.0', WS_TOKEN: 'secret-token' });
    const urls = startupUrls(local, 3000);
    expect(listeningMessage(local, 3000, urls)).toBe(
      [
        'Hotline is listening on 0.0.0.0:3000',
        '  WebSocket URL for the AI flow: ws://localhost:3000/ws?token=<WS_TOKEN>',
        '  Webhook URL: http://localhost:3000/webhook',
        '  Health: http://localhost:3000/healthz',
        '  Dashboard: off — set ADMIN_TOKEN (16+ random characters) to open it at http://localhost:3000/dashboard/',
      ].join('\n'),
    );
    expect(exposureAdvice(local, 3000)).toMatch(/cannot reach localhost[\s\S]*cloudflared tunnel --url http:\/\/localhost:3000[\s\S]*ngrok http 3000[\s\S]*PUBLIC_URL/);

    const published = loadConfig({ PUBLIC_URL: 'https://hotline.example.com/', TRANSPORTS: 'websocket' });
    expect(startupUrls(published, 3000)).toEqual({
      base: 'https://hotline.example.com',
      websocket: 'wss://hotline.example.com/ws',
      webhook: undefined,
      health: 'https://hotline.example.com/healthz',
      dashboard: undefined,
    });
    // With the admin token the dashboard is on: its URL is printed last; without it, how to turn it on, at PUBLIC_URL's address.
    expect(listeningMessage(published, 3000, startupUrls(published, 3000)).split('\n').at(-1)).toBe(
      '  Dashboard: off — set ADMIN_TOKEN (16+ random characters) to open it at https://hotline.example.com/dashboard/',
    );
    const admin = loadConfig({ ADMIN_TOKEN: 'secret' });
    expect(listeningMessage(admin, 3000, startupUrls(admin, 3000)).split('\n').at(-1)).toBe('  Dashboard: http://localhost:3000/dashboard/');
    expect(exposureAdvice(published, 3000)).toBeUndefined();
    expect(startupUrls(loadConfig({ HOST: '::1' }), 3000).health).toBe('http://[::1]:3000/healthz');
  });

  test('src/main.ts prints the URLs in the message, keeps websocketUrl as a field, and says how to expose Hotline', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const started = hotline({ HOST: '127.0.0.1', LLM_TEMPERATURE: '' });
    const { input: line } = await started.line(/"websocketUrl"/);
    const entry = JSON.parse(line) as { msg: string; websocketUrl: string; webhookUrl: string; healthUrl: string };
    const port = /:(\d+)\/ws$/.exec(entry.websocketUrl)![1];
    expect(entry.msg).toBe(
      [
        `Hotline is listening on 127.0.0.1:${port}`,
        `  WebSocket URL for the AI flow: ws://127.0.0.1:${port}/ws`,
        `  Webhook URL: http://127.0.0.1:${port}/webhook`,
        `  Health: http://127.0.0.1:${port}/healthz`,
        `  Dashboard: off — set ADMIN_TOKEN (16+ random characters) to open it at http://127.0.0.1:${port}/dashboard/`,
      ].join('\n'),
    );
    expect((await fetch(entry.healthUrl)).status).toBe(200);
    await started.line(/PUBLIC_URL is not set.*ngrok http/);
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
  });
});

describe('a start that waits says what for', () => {
  test('a step longer than its first bound is named while it lasts and timed once done; a fast step says nothing', async () => {
    const { logger, entries } = capture();
    const progress = startProgress(logger, { afterMs: 30, everyMs: 60 });
    expect(await progress.step('a fast step', async () => 'fast')).toBe('fast');
    await progress.step('opening the store (PostgreSQL at postgres://db/hotline)', () => new Promise((resolve) => setTimeout(resolve, 130)));
    const said = entries.map((entry) => entry.msg.replace(/\d+\.\d s/, 'N s'));
    expect(said.slice(0, 2)).toEqual([
      'still starting: opening the store (PostgreSQL at postgres://db/hotline) … (N s)',
      'still starting: opening the store (PostgreSQL at postgres://db/hotline) … (N s)',
    ]);
    expect(said.at(-1)).toBe('opening the store (PostgreSQL at postgres://db/hotline): done in N s');
    expect(said.join('\n')).not.toContain('a fast step');
  });

  test('a step that fails stops its timer and passes the error on, never saying it is done', async () => {
    const { logger, entries } = capture();
    const progress = startProgress(logger, { afterMs: 20, everyMs: 1_000 });
    await expect(progress.step('a port', () => Promise.reject(new Error('EADDRINUSE')))).rejects.toThrow('EADDRINUSE');
    const slow = progress.step('the store', () => new Promise((_, reject) => setTimeout(() => reject(new Error('timeout expired')), 60)));
    await expect(slow).rejects.toThrow('timeout expired');
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(entries.map((entry) => entry.msg)).toEqual([expect.stringMatching(/^still starting: the store … \(0\.\d s\)$/)]);
  });
});

describe('stopping', () => {
  test('a second signal during the graceful shutdown exits at once', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const started = hotline({ SHUTDOWN_GRACE_MS: '20000' });
    const [, url] = await started.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
    const service = await FakeVoiceService.connect(url!, { playback: { kind: 'auto', msPerChar: 0.5 } });
    cleanups.push(async () => {
      await service.close();
    });
    service.start();
    await service.nextOfType('speak');

    started.child.kill('SIGTERM');
    await started.line(/shutting down/);
    const second = Date.now();
    started.child.kill('SIGINT');
    expect(await started.exited).toBe(130);
    expect(Date.now() - second).toBeLessThan(2000);
    expect(started.stdout()).toMatch(/SIGINT again: exiting at once/);
  });
});

/** A logger writing JSON lines into an array. */
function capture() {
  const entries: { level: number; msg: string; llmCheck?: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) entries.push(JSON.parse(line) as (typeof entries)[number]);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', env: 'test', destination }), entries };
}

describe('the LLM check at startup', () => {
  const KEY = 'sk-startup-check-key';

  test('a refused key: says so and names OPENAI_API_KEY', async () => {
    const seen: IncomingMessage[] = [];
    const llm = await listen((req, res) => {
      seen.push(req);
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
    });
    const check = await checkLlm({ apiKey: KEY, baseURL: `${llm.url}/v1`, model: 'm' });
    expect(check).toEqual({ outcome: 'key-refused', status: 401 });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${KEY}` } });
    expect(describeLlmCheck(check, { endpoint: `${llm.url}/v1`, model: 'm', baseUrlSet: true })).toEqual({
      level: 'error',
      message: `the LLM at ${llm.url}/v1 refused the API key (HTTP 401): check OPENAI_API_KEY`,
    });
  });

  test('a model list: the model is there, is missing (a warning naming LLM_MODEL), or the list is empty', async () => {
    let models: { id: string }[] = [{ id: 'gpt-4o-mini' }, { id: 'llama3.1:latest' }];
    const llm = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: models }));
    });
    const baseURL = `${llm.url}/v1`;
    expect(await checkLlm({ apiKey: KEY, baseURL, model: 'gpt-4o-mini' })).toMatchObject({ outcome: 'ok', modelListed: true });
    expect(await checkLlm({ apiKey: KEY, baseURL, model: 'llama3.1' })).toMatchObject({ outcome: 'ok', modelListed: true });
    const missing = await checkLlm({ apiKey: KEY, baseURL, model: 'gpt-5-typo' });
    expect(missing).toEqual({ outcome: 'ok', models: ['gpt-4o-mini', 'llama3.1:latest'], modelListed: false });
    expect(describeLlmCheck(missing, { endpoint: baseURL, model: 'gpt-5-typo', baseUrlSet: true })).toEqual({
      level: 'warn',
      message: expect.stringMatching(/^LLM_MODEL gpt-5-typo is not among the 2 models the LLM at .* offers \(gpt-4o-mini, llama3\.1:latest\): check LLM_MODEL/),
    });
    models = [];
    const empty = await checkLlm({ apiKey: KEY, baseURL, model: 'anything' });
    expect(empty).toMatchObject({ outcome: 'ok', modelListed: undefined });
    expect(describeLlmCheck(empty, { endpoint: baseURL, model: 'anything', baseUrlSet: true }).level).toBe('info');
  });

  test('nothing listening: cannot be reached, check OPENAI_BASE_URL', async () => {
    const baseURL = `http://127.0.0.1:${await closedPort()}/v1`;
    const check = await checkLlm({ apiKey: KEY, baseURL, model: 'm' });
    expect(check).toEqual({ outcome: 'unreachable', reason: expect.stringMatching(/ECONNREFUSED/) });
    expect(describeLlmCheck(check, { endpoint: baseURL, model: 'm', baseUrlSet: true }).message).toMatch(
      new RegExp(`^the LLM at ${baseURL.replace(/\./g, '\\.')} cannot be reached: connect ECONNREFUSED .*; check OPENAI_BASE_URL$`),
    );
  });

  test('no answer within the time limit: unreachable; nothing at /models (404): an error asking for /v1; a web page: a warning', async () => {
    const silent = await listen(() => undefined);
    expect(await checkLlm({ apiKey: KEY, baseURL: `${silent.url}/v1`, model: 'm', timeoutMs: 200 })).toEqual({
      outcome: 'unreachable',
      reason: 'no answer within 0.2 s',
    });
    const bare = await listen((_req, res) => res.writeHead(404).end('404 page not found'));
    const check = await checkLlm({ apiKey: KEY, baseURL: bare.url, model: 'm' });
    expect(check).toEqual({ outcome: 'not-found', status: 404 });
    expect(describeLlmCheck(check, { endpoint: bare.url, model: 'm', baseUrlSet: true })).toEqual({
      level: 'error',
      message: `OPENAI_BASE_URL ${bare.url} answered 404 for /models: does it need /v1 at the end (${bare.url}/v1)? Every call will fail until it is right`,
    });
    expect(describeLlmCheck(check, { endpoint: `${bare.url}/v1`, model: 'm', baseUrlSet: true }).message).toMatch(
      /answered 404 for \/models: nothing was found at that address; check OPENAI_BASE_URL/,
    );
    const noList = await listen((_req, res) => res.writeHead(405).end());
    expect(await checkLlm({ apiKey: KEY, baseURL: `${noList.url}/v1`, model: 'm' })).toEqual({ outcome: 'no-model-list', status: 405 });
    const page = await listen((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web page</html>'));
    const html = await checkLlm({ apiKey: KEY, baseURL: page.url, model: 'm' });
    expect(html).toEqual({ outcome: 'inconclusive', reason: expect.stringMatching(/not answer with JSON.*\/v1/) });
    expect(describeLlmCheck(html, { endpoint: page.url, model: 'm', baseUrlSet: true }).level).toBe('warn');
  });

  test('run at startup it only logs, never throws, and keeps the credentials of the URL out of the log', async () => {
    const llm = await listen((_req, res) => res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":{"message":"no"}}'));
    const config = loadConfig({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `http://user:pw-123456@127.0.0.1:${llm.port}/v1` });
    const { logger, entries } = capture();
    await expect(checkLlmAtStartup(config, logger, config.llm.baseURL!)).resolves.toBeUndefined();
    expect(entries).toEqual([
      expect.objectContaining({
        level: 50,
        llmCheck: 'key-refused',
        msg: `the LLM at http://user:***@127.0.0.1:${llm.port}/v1 refused the API key (HTTP 403): check OPENAI_API_KEY`,
      }),
    ]);
  });

  test('an address without /v1 (a web server answering 404 pages): said at startup; a call logs the page by its title, never whole', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const body = `<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>${'<p>nothing to see here</p>'.repeat(400)}</body></html>`;
    const llm = await listen((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end(body));
    const started = hotline({ OPENAI_BASE_URL: llm.url, LLM_MODEL: 'llama3.1', REPORT_FIELDS: 'false' });
    const { input: check } = await started.line(/"llmCheck"/);
    expect(JSON.parse(check)).toMatchObject({
      level: 50,
      llmCheck: 'not-found',
      msg: `OPENAI_BASE_URL ${llm.url} answered 404 for /models: does it need /v1 at the end (${llm.url}/v1)? Every call will fail until it is right`,
    });
    const { port } = new URL((JSON.parse((await started.line(/"webhookUrl"/)).input) as { webhookUrl: string }).webhookUrl);
    const post = (event: unknown) =>
      fetch(`http://127.0.0.1:${port}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    await post({ type: 'session_start', session: { id: 'no-v1', direction: 'inbound' } });
    const apology = (await (await post({ type: 'user_speak', session: { id: 'no-v1' }, text: 'Hello?' })).json()) as { text: string };
    expect(apology.text).toMatch(/^I'm sorry/);
    const { input: failed } = await started.line(/LLM turn failed/);
    expect(JSON.parse(failed)).toMatchObject({
      err: { type: 'NotFoundError', status: 404, detail: `404 an HTML page titled "404 Not Found" of ${body.length} characters` },
      hint: expect.stringMatching(/check OPENAI_BASE_URL \(it often needs \/v1 at the end\)/),
    });
    expect(started.stdout()).not.toContain('nothing to see here');
    for (const line of started.stdout().split('\n')) expect(line.length).toBeLessThan(4000);
  });

  test('src/main.ts checks after it listens and logs the outcome; the key never reaches the log', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const llm = await listen((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
    });
    const started = hotline({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `http://user:pw-123456@127.0.0.1:${llm.port}/v1`, LLM_MODEL: 'm' });
    await started.line(/"websocketUrl"/);
    const { input: line } = await started.line(/"llmCheck"/);
    expect(JSON.parse(line)).toMatchObject({ level: 50, msg: expect.stringMatching(/refused the API key \(HTTP 401\): check OPENAI_API_KEY$/) });
    expect(started.stdout()).not.toContain(KEY);
    expect(started.stdout()).not.toContain('pw-123456');
    expect(started.stdout()).toContain('http://user:***@127.0.0.1');
  });
});
