import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { runCallCli } from '../src/cli/call.js';
import { runCampaignCli } from '../src/cli/campaign.js';
import { normalizePhoneNumber } from '../src/phone/phone-number.js';
import { startFakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';
import { folderWithEnv, runCli, startCli } from './helpers/cli.js';
import { startTestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';

const TOKEN = 'admin-token-for-cli-tests';
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface StubRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  arrivedAt: number;
}

/** A request the stub has not answered yet; `answer()` lets it go. */
interface Held {
  request: StubRequest;
  answer(): void;
}

/**
 * Plays Hotline's POST /api/calls: 401 for a wrong token, 400 {error} for a
 * number Hotline would refuse, 502 for the AI flow "no-such-flow" (the
 * service refused), 503 for the flow "shutting-down" (Hotline places no
 * calls now), 201 otherwise. `hold` decides when to answer, so tests can
 * see how many requests are in flight at once.
 */
async function startStubHotline(options: { hold?: (held: Held, waiting: Held[]) => void } = {}) {
  const requests: StubRequest[] = [];
  const waiting: Held[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const server = createServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('finish', () => (inFlight -= 1));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const request: StubRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, arrivedAt: Date.now() };
      requests.push(request);
      const answer = () => respond(res, request);
      if (!options.hold) return answer();
      const held: Held = { request, answer };
      waiting.push(held);
      options.hold(held, waiting);
    });
  });

  function respond(res: ServerResponse, request: StubRequest): void {
    if (request.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, { error: 'missing or wrong Authorization: Bearer token' });
    if (request.method !== 'POST' || request.path !== '/api/calls') return send(res, 404, { error: 'not found' });
    if (request.body.aiFlowId === 'shutting-down') return send(res, 503, { error: 'Hotline is shutting down: no new calls are placed' });
    if (request.body.aiFlowId === 'no-such-flow') {
      return send(res, 502, { error: 'AI flow "no-such-flow" does not exist at the voice service: check AIFLOW_ID' });
    }
    try {
      const toPhoneNumber = normalizePhoneNumber(String(request.body.toPhoneNumber));
      send(res, 201, { toPhoneNumber, status: 'initiated' });
    } catch (error) {
      send(res, 400, { error: (error as Error).message });
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url, requests, close, maxInFlight: () => maxInFlight };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function run(argv: string[], env: Record<string, string | undefined> = { ADMIN_TOKEN: TOKEN }) {
  const lines: string[] = [];
  const code = await runCallCli(argv, env, (line) => lines.push(line));
  const output = lines.join('\n');
  expect(output).not.toContain(TOKEN);
  return { code, lines, output };
}

async function csvFile(content: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-call-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'contacts.csv');
  await writeFile(file, content);
  return file;
}

describe('npm run call -- <number>', () => {
  test('places one call with variables, flow and billing device, and prints the normalised number', async () => {
    const stub = await startStubHotline();
    const result = await run(
      ['+49', '151', '1234567', '--var', 'name=Anna', '--var', 'topic=your order 42', '--flow', 'flow-2', '--billing-device', 'dev-9'],
      { ADMIN_TOKEN: TOKEN, BOT_URL: `${stub.url}/` },
    );
    expect(result).toMatchObject({ code: 0, lines: ['✓ 491511234567 initiated'] });
    expect(stub.requests).toHaveLength(1);
    expect(stub.requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/calls',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: { toPhoneNumber: '+49 151 1234567', variables: { name: 'Anna', topic: 'your order 42' }, aiFlowId: 'flow-2', billingDevice: 'dev-9' },
    });
  });

  test('without variables or flow the body carries the number only; --url and --token override the environment', async () => {
    const stub = await startStubHotline();
    const result = await run(['491511234567', '--url', stub.url, '--token', TOKEN], { ADMIN_TOKEN: 'other', BOT_URL: 'http://127.0.0.1:1' });
    expect(result.code).toBe(0);
    expect(stub.requests[0]?.body).toEqual({ toPhoneNumber: '491511234567' });
  });

  test("Hotline's refusal is printed with its reason and status, exit code 1", async () => {
    const stub = await startStubHotline();
    const refused = await run(['call me', '--url', stub.url]);
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([expect.stringMatching(/^✗ call me: Invalid phone number "call me": it contains letters.* \(HTTP 400\)$/)]);

    const unauthorised = await run(['491511234567', '--url', stub.url], { ADMIN_TOKEN: 'wrong-admin-token' });
    expect(unauthorised).toMatchObject({
      code: 1,
      lines: [
        `✗ 491511234567: the Hotline running at ${stub.url} refused the admin token (missing or wrong Authorization: Bearer token): ` +
          'the ADMIN_TOKEN this command sends (environment, .env or --token) must be the value that Hotline was started with (HTTP 401)',
      ],
    });
    expect(unauthorised.output).not.toContain('wrong-admin-token');
  });

  test('ADMIN_TOKEN set for the command alone: it says the running Hotline was started without it, and what to do there', async () => {
    // A real Hotline, started without ADMIN_TOKEN: its admin API is off.
    const env = await startTestHotline(scriptByUserText({}));
    cleanups.push(() => env.close());
    const result = await run(['491511234567', '--var', 'name=Anna'], { ADMIN_TOKEN: TOKEN, BOT_URL: env.hotline.url });
    expect(result).toMatchObject({
      code: 1,
      lines: [
        `✗ 491511234567: the Hotline running at ${env.hotline.url} was started without ADMIN_TOKEN, so its admin API is off: ` +
          'setting ADMIN_TOKEN for this command is not enough. Set ADMIN_TOKEN where Hotline runs (its environment or .env) to the same value, and restart it (HTTP 404)',
      ],
    });
  });

  test('npm run campaign says the same: the running Hotline lacks ADMIN_TOKEN', async () => {
    const env = await startTestHotline(scriptByUserText({}));
    cleanups.push(() => env.close());
    const lines: string[] = [];
    const code = await runCampaignCli(['list'], { ADMIN_TOKEN: TOKEN, BOT_URL: env.hotline.url }, (line) => lines.push(line), (line) => lines.push(line));
    expect(code).toBe(1);
    expect(lines).toEqual([expect.stringMatching(/^campaign: HTTP 404: the Hotline running at \S+ was started without ADMIN_TOKEN, so its admin API is off: setting ADMIN_TOKEN for this command is not enough/)]);
  });

  test('Hotline not running → asks whether it is running at that address', async () => {
    const stub = await startStubHotline();
    await stub.close();
    const result = await run(['491511234567'], { ADMIN_TOKEN: TOKEN, BOT_URL: stub.url });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(new RegExp(`ECONNREFUSED.*is Hotline running at ${stub.url.replace(/\./g, '\\.')}\\?`));
  });

  test('a missing token is exit code 2 with what to set, and nothing is sent', async () => {
    const stub = await startStubHotline();
    const result = await run(['491511234567', '--url', stub.url], { ADMIN_TOKEN: '  ' });
    expect(result.code).toBe(2);
    expect(result.output).toMatch(/ADMIN_TOKEN.*--token/);
    expect(stub.requests).toHaveLength(0);
  });

  test.each([
    [[], /Give a number/],
    [['491511234567', '--nope'], /Unknown option '--nope'/],
    [['491511234567', '--var', 'novalue'], /--var "novalue" is not name=value/],
    [['491511234567', '--var', 'first name=Anna'], /is not name=value/],
    [['--csv', 'x.csv', '491511234567'], /not both/],
    [['--csv', 'x.csv', '--concurrency', '0'], /--concurrency must be a whole number of at least 1/],
    [['--csv', 'x.csv', '--pause-ms', 'soon'], /--pause-ms/],
    [['491511234567', '--url', 'not a url'], /is not a URL/],
  ])('bad usage %j → exit code 2 with the usage', async (argv, message) => {
    const result = await run(argv);
    expect(result.code).toBe(2);
    expect(result.output).toMatch(message);
    if (!argv.includes('--url')) expect(result.output).toContain('Usage:');
  });

  test('--help prints the usage, exit code 0', async () => {
    expect(await run(['--help'], {})).toMatchObject({ code: 0, lines: [expect.stringContaining('npm run call -- --csv')] });
  });
});

describe('npm run call -- --csv', () => {
  test("one call per row: columns become variables, aiFlowId/billingDevice are passed, Hotline's refusals are listed", async () => {
    const stub = await startStubHotline();
    const file = await csvFile(
      'name,phone,topic,aiFlowId\n' +
        'Anna,+49 151 1234567,your order 42,\n' +
        'Ben,+49 151 7654321,delivery,no-such-flow\n' +
        'Cleo,0044 20 7946 0958,,flow-c\n',
    );
    const result = await run(['--csv', file, '--url', stub.url, '--pause-ms', '0', '--var', 'shop=Bakery', '--billing-device', 'dev-1']);

    expect(result.code).toBe(1);
    expect(result.lines.slice(0, 3).sort()).toEqual([
      '✓ 442079460958 initiated',
      '✓ 491511234567 initiated',
      '✗ 491517654321: AI flow "no-such-flow" does not exist at the voice service: check AIFLOW_ID (HTTP 502)',
    ]);
    expect(result.lines[3]).toBe('2 initiated, 1 failed');
    expect(result.lines.slice(4)).toEqual(['Failed:', '  line 3: 491517654321: AI flow "no-such-flow" does not exist at the voice service: check AIFLOW_ID (HTTP 502)']);

    // Each number as checked before the first call: normalised.
    const bodies = stub.requests.map((r) => r.body).sort((a, b) => String(a.toPhoneNumber).localeCompare(String(b.toPhoneNumber)));
    expect(bodies).toEqual([
      // A blank cell is no variable at all.
      { toPhoneNumber: '442079460958', variables: { shop: 'Bakery', name: 'Cleo' }, aiFlowId: 'flow-c', billingDevice: 'dev-1' },
      { toPhoneNumber: '491511234567', variables: { shop: 'Bakery', name: 'Anna', topic: 'your order 42' }, billingDevice: 'dev-1' },
      { toPhoneNumber: '491517654321', variables: { shop: 'Bakery', name: 'Ben', topic: 'delivery' }, aiFlowId: 'no-such-flow', billingDevice: 'dev-1' },
    ]);
  });

  test('all rows initiated → exit code 0; --number-column picks the column', async () => {
    const stub = await startStubHotline();
    const file = await csvFile('mobile,name\n491511234567,Anna\n491511234568,Ben\n');
    const result = await run(['--csv', file, '--url', stub.url, '--pause-ms', '0', '--number-column', 'mobile']);
    expect(result.code).toBe(0);
    expect(result.lines.at(-1)).toBe('2 initiated, 0 failed');
    expect(stub.requests.map((r) => r.body.variables)).toEqual([{ name: 'Anna' }, { name: 'Ben' }]);
  });

  test('no more than --concurrency requests at once', async () => {
    const rows = 5;
    // Answers only when two are waiting (or the last has come), so the CLI always has two requests open.
    const stub = await startStubHotline({
      hold: (_held, waiting) => {
        if (waiting.length >= 2 || stub.requests.length === rows) for (const h of waiting.splice(0)) h.answer();
      },
    });
    // Counted where the CLI starts them: requests started together may still reach the stub one by one.
    let open = 0;
    let maxOpen = 0;
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      maxOpen = Math.max(maxOpen, ++open);
      try {
        return await realFetch(input, init);
      } finally {
        open -= 1;
      }
    });
    cleanups.push(async () => spy.mockRestore());

    const numbers = Array.from({ length: rows }, (_, i) => `49151123456${i}`);
    const file = await csvFile(`phone\n${numbers.join('\n')}\n`);
    const result = await run(['--csv', file, '--url', stub.url, '--pause-ms', '0', '--concurrency', '2']);
    expect(result.code).toBe(0);
    expect(stub.requests).toHaveLength(rows);
    expect(maxOpen).toBe(2);
    expect(stub.maxInFlight()).toBe(2);
    expect(result.lines.at(-1)).toBe('5 initiated, 0 failed');
  });

  test('--pause-ms spaces the start of calls even when more may run at once', async () => {
    const stub = await startStubHotline();
    // Timed where the CLI starts each request: arrivals at the server can bunch up on a loaded machine.
    const startedAt: number[] = [];
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
      startedAt.push(performance.now());
      return realFetch(input, init);
    });
    cleanups.push(async () => spy.mockRestore());
    const file = await csvFile('number\n491511234561\n491511234562\n491511234563\n');
    const result = await run(['--csv', file, '--url', stub.url, '--pause-ms', '80', '--concurrency', '3']);
    expect(result.code).toBe(0);
    expect(startedAt).toHaveLength(3);
    expect(startedAt[1]! - startedAt[0]!).toBeGreaterThanOrEqual(75);
    expect(startedAt[2]! - startedAt[1]!).toBeGreaterThanOrEqual(75);
  });

  test('a refused admin token stops the batch instead of failing every row', async () => {
    const stub = await startStubHotline();
    const file = await csvFile('phone\n491511234561\n491511234562\n491511234563\n');
    const result = await run(['--csv', file, '--url', stub.url, '--pause-ms', '0', '--concurrency', '1'], { ADMIN_TOKEN: 'wrong-admin-token' });
    expect(result.code).toBe(1);
    expect(stub.requests).toHaveLength(1);
    expect(result.lines).toContain('0 initiated, 1 failed, 2 not attempted');
    expect(result.output).toMatch(/Stopped early: the Hotline running at \S+ refused the admin token \(missing or wrong Authorization/);
  });

  test('Hotline placing no calls now (503) stops the batch too', async () => {
    const stub = await startStubHotline();
    const file = await csvFile('phone\n491511234561\n491511234562\n491511234563\n');
    const result = await run(['--csv', file, '--url', stub.url, '--pause-ms', '0', '--concurrency', '1', '--flow', 'shutting-down']);
    expect(result.code).toBe(1);
    expect(stub.requests).toHaveLength(1);
    expect(result.lines).toContain('0 initiated, 1 failed, 2 not attempted');
    expect(result.output).toMatch(/Stopped early: Hotline is shutting down/);
  });

  test('a file without a number column, or with a column that cannot be a variable, is bad usage', async () => {
    const stub = await startStubHotline();
    const noNumber = await run(['--csv', await csvFile('name,topic\nAnna,x\n'), '--url', stub.url]);
    expect(noNumber.code).toBe(2);
    expect(noNumber.output).toMatch(/no number column \(phone, phone_number, number or toPhoneNumber\); its columns are: name, topic/);
    const badHeader = await run(['--csv', await csvFile('phone,first name\n491511234567,Anna\n'), '--url', stub.url]);
    expect(badHeader.code).toBe(2);
    expect(badHeader.output).toMatch(/Column "first name" cannot be a variable name/);
    const missing = await run(['--csv', path.join(tmpdir(), 'does-not-exist-hotline.csv'), '--url', stub.url]);
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/Cannot read/);
    expect(stub.requests).toHaveLength(0);
  });
});

describe('the script itself', () => {
  test('src/cli/call.ts run by node runs the command line and exits with its code', async () => {
    const stub = await startStubHotline();
    // Its own environment, in a folder without .env: the user's ADMIN_TOKEN or BOT_URL must not count.
    const options = { env: childEnv({ ADMIN_TOKEN: TOKEN, BOT_URL: stub.url }), cwd: isolatedCwd() };
    const { stdout } = await promisify(execFile)(process.execPath, tsxArgs('src/cli/call.ts', '+1 (415) 555-0100', '--var', 'name=Anna'), options);
    expect(stdout.trim()).toBe('✓ 14155550100 initiated');
    expect(stub.requests[0]?.body).toEqual({ toPhoneNumber: '+1 (415) 555-0100', variables: { name: 'Anna' } });

    const failed = await promisify(execFile)(process.execPath, tsxArgs('src/cli/call.ts', '0151 1234567'), options).then(
      () => undefined,
      (error: { code?: unknown; stdout?: unknown }) => error,
    );
    expect(failed).toMatchObject({ code: 1, stdout: expect.stringMatching(/^✗ 0151 1234567: .*international format.*\(HTTP 400\)/) });
  }, CHILD_TEST_TIMEOUT_MS);
});

describe('the real CLI: a list is checked whole before the first call', () => {
  test('bad rows are each named with their line, no call is placed, exit 2', async () => {
    const stub = await startStubHotline();
    const file = await csvFile(
      'phone,name\n' +
        '+49 151 1234567,Anna\n' +
        'call me,Ben\n' +
        ',Cleo\n' +
        '0151 7654321,David\n' +
        '0049 151 1234567,Anna again\n' +
        '+44 20 7946 0958,Emil\n',
    );
    const result = await runCli('src/cli/call.ts', ['--csv', file, '--pause-ms', '0'], { env: { ADMIN_TOKEN: TOKEN, BOT_URL: stub.url } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.lines).toEqual([
      `${file}: 4 of 6 rows cannot be called, so no call was placed:`,
      expect.stringMatching(/^ {2}line 3: Invalid phone number "call me": it contains letters/),
      '  line 4: no number in this row',
      expect.stringMatching(/^ {2}line 5: Invalid phone number "0151 7654321": it is in national form .* DEFAULT_COUNTRY_CODE is not set: set DEFAULT_COUNTRY_CODE/),
      '  line 6: 0049 151 1234567 is 491511234567, already on line 2; a person is called once, so remove one of the rows',
      'Fix these rows and run the command again.',
    ]);
    expect(stub.requests).toHaveLength(0);
  }, CHILD_TEST_TIMEOUT_MS);
});

describe('the real CLI and the .env of the folder it runs in', () => {
  test('PORT, ADMIN_TOKEN and DEFAULT_COUNTRY_CODE from .env reach the running Hotline, which places the calls', async () => {
    const api = await startFakeAiFlowApi({ token: 'platform-token', flows: { 'flow-1': { phoneNumber: true } } });
    cleanups.push(() => api.close());
    const env = await startTestHotline(scriptByUserText({}), {
      ADMIN_TOKEN: TOKEN,
      AIFLOW_API_URL: api.url,
      AIFLOW_ACCESS_TOKEN: 'platform-token',
      AIFLOW_ID: 'flow-1',
      AIFLOW_BILLING_DEVICE: 'dev-1',
      DEFAULT_COUNTRY_CODE: '49',
    });
    cleanups.push(() => env.close());
    const folder = await folderWithEnv({ PORT: env.hotline.port.toString(), ADMIN_TOKEN: TOKEN, DEFAULT_COUNTRY_CODE: '49' });
    cleanups.push(() => folder.remove());
    await writeFile(path.join(folder.dir, 'contacts.csv'), 'phone,name\n0151 1234567,Anna\n+49 151 7654321,Ben\n');

    const [one, batch] = await Promise.all([
      runCli('src/cli/call.ts', ['+49 151 1112223'], { cwd: folder.dir }),
      runCli('src/cli/call.ts', ['--csv', 'contacts.csv', '--pause-ms', '0'], { cwd: folder.dir }),
    ]);
    expect(one, one.stderr).toMatchObject({ code: 0, lines: ['✓ 491511112223 initiated'] });
    expect(batch.code, `${batch.stdout}${batch.stderr}`).toBe(0);
    expect(batch.lines.at(-1)).toBe('2 initiated, 0 failed');
    expect(api.calls.map((call) => (call.body as { toPhoneNumber?: string }).toPhoneNumber).sort()).toEqual([
      '491511112223',
      '491511234567',
      '491517654321',
    ]);
  }, CHILD_TEST_TIMEOUT_MS);

  test('a reader that stops early ends a batch quietly: exit 0, no stack', async () => {
    let closed: () => void = () => undefined;
    const stdoutClosed = new Promise<void>((resolve) => (closed = resolve));
    // The second call is answered only once nobody reads the output any more.
    let requests = 0;
    const stub = await startStubHotline({ hold: (held) => (++requests === 1 ? held.answer() : void stdoutClosed.then(held.answer)) });
    const file = await csvFile('phone\n491511234561\n491511234562\n491511234563\n');
    const cli = startCli('src/cli/call.ts', ['--csv', file, '--pause-ms', '0', '--concurrency', '1'], { env: { ADMIN_TOKEN: TOKEN, BOT_URL: stub.url } });
    await cli.line(/^✓ 491511234561 initiated$/);
    cli.child.stdout.destroy();
    closed();
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toBe('');
  }, CHILD_TEST_TIMEOUT_MS);
});
