/**
 * The caller context: the caller's record from a CRM (a real local HTTP
 * server) becomes template variables, or nothing, and never holds a call up
 * past its timeout.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import type { CallerContextSource } from '../src/call/ports/business-tools.js';
import { contextFileSchema, createCallerContext } from '../src/tools/caller-context.js';
import type { Env } from '../src/tools/request-template.js';
import { ToolStore } from '../src/tools/tool-store.js';
import { toolScrubber } from '../src/tools/tool-scrubber.js';
import { describeYamlProblem, parseYamlFile } from '../src/yaml-file.js';
import { json, startBusinessServer, type BusinessHandler, type BusinessServer } from './helpers/business-server.js';

const logger = pino({ level: 'silent' });
const KNOWN = '+4915112345678';
const ANNA = {
  name: '  Anna Schmidt ',
  tier: 'gold',
  vip: true,
  credit: 120.5,
  note: null,
  address: { city: 'Berlin' },
  orders: [{ number: '4711' }, { number: '4712' }],
  'bad name': 'x',
  caller_number: '+1999',
  history: 'h'.repeat(800),
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function crm(handler: BusinessHandler = byPhone): Promise<BusinessServer> {
  const server = await startBusinessServer(handler);
  cleanups.push(() => server.close());
  return server;
}

function byPhone(req: { url: string }, res: Parameters<BusinessHandler>[1]): void {
  const phone = new URL(req.url, 'http://x').searchParams.get('phone');
  if (phone === KNOWN) json(res, { customer: ANNA });
  else json(res, { error: 'unknown' }, 404);
}

function contextFrom(yaml: string, env: Env = {}): CallerContextSource {
  const parsed = parseYamlFile(yaml, contextFileSchema(env));
  if (!('data' in parsed)) throw new Error(parsed.problems.map(describeYamlProblem).join('\n'));
  return createCallerContext(parsed.data, logger, toolScrubber([]));
}

function problemsOf(yaml: string): string[] {
  const parsed = parseYamlFile(yaml, contextFileSchema({}));
  if ('data' in parsed) throw new Error('expected context.yaml to be refused');
  return parsed.problems.map(describeYamlProblem);
}

const lookupOf = (url: string, rest = 'path: customer\n') => `request: { url: "${url}/customers?phone={{caller_number}}" }\n${rest}`;
const live = (): AbortSignal => new AbortController().signal;

describe('a known caller', () => {
  test("the record's plain top-level fields become variables, trimmed and capped; built-in names are left to the call", async () => {
    const server = await crm();
    const fields = await contextFrom(lookupOf(server.url)).lookup({ caller_number: KNOWN }, live());
    expect(fields).toEqual({ name: 'Anna Schmidt', tier: 'gold', vip: 'true', credit: '120.5', history: 'h'.repeat(500) });
    expect(new URL(server.requests[0]!.url, server.url).searchParams.get('phone')).toBe(KNOWN);
  });

  test('`variables` names each field and where it is, nested ones included', async () => {
    const server = await crm();
    const source = contextFrom(
      lookupOf(server.url, 'path: customer\nvariables:\n  customer_name: name\n  last_order: orders.0.number\n  city: address.city\n  nothing: no.such.field\n'),
    );
    expect(await source.lookup({ caller_number: KNOWN }, live())).toEqual({ customer_name: 'Anna Schmidt', last_order: '4711', city: 'Berlin' });
  });

  test('a secret from the environment goes along in a header', async () => {
    const server = await crm();
    const source = contextFrom(`request:\n  url: "${server.url}/customers?phone={{caller_number}}"\n  headers: { Authorization: "Bearer \${CRM_TOKEN}" }\npath: customer\n`, {
      CRM_TOKEN: 'crm-secret',
    });
    await source.lookup({ caller_number: KNOWN }, live());
    expect(server.requests[0]!.headers.authorization).toBe('Bearer crm-secret');
  });
});

describe('nothing to tell: {}', () => {
  test('an unknown number (HTTP 404)', async () => {
    const server = await crm();
    expect(await contextFrom(lookupOf(server.url)).lookup({ caller_number: '+4930000000' }, live())).toEqual({});
    expect(server.requests).toHaveLength(1);
  });

  test('an answer without the record', async () => {
    const server = await crm((req, res) => json(res, { customer: null }));
    expect(await contextFrom(lookupOf(server.url)).lookup({ caller_number: KNOWN }, live())).toEqual({});
  });

  test('an answer that is no JSON', async () => {
    const server = await crm((req, res) => {
      res.end('<html>maintenance</html>');
    });
    expect(await contextFrom(lookupOf(server.url)).lookup({ caller_number: KNOWN }, live())).toEqual({});
  });

  test('a withheld number: nothing is looked up', async () => {
    const server = await crm();
    expect(await contextFrom(lookupOf(server.url)).lookup({}, live())).toEqual({});
    expect(server.requests).toHaveLength(0);
  });

  test('a CRM that cannot be reached', async () => {
    const server = await crm();
    await server.close();
    expect(await contextFrom(lookupOf(server.url)).lookup({ caller_number: KNOWN }, live())).toEqual({});
  });

  test('a slow CRM: {} within timeout_ms', async () => {
    const server = await crm(async (req, res) => {
      await sleep(3000);
      byPhone(req, res);
    });
    const source = contextFrom(lookupOf(server.url, 'path: customer\ntimeout_ms: 200\n'));
    expect(source.timeoutMs).toBe(200);
    const started = performance.now();
    expect(await source.lookup({ caller_number: KNOWN }, live())).toEqual({});
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1000);
  });

  test('the call ends while the CRM thinks: {} at once', async () => {
    const server = await crm(() => undefined);
    const controller = new AbortController();
    const lookup = contextFrom(lookupOf(server.url, 'path: customer\ntimeout_ms: 5000\n')).lookup({ caller_number: KNOWN }, controller.signal);
    await server.request(0);
    const started = performance.now();
    controller.abort();
    expect(await lookup).toEqual({});
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('context.yaml', () => {
  test('a variable name that is none, or is a built-in one, is an error on its line', () => {
    expect(problemsOf('request: { url: "https://crm.example/c" }\nvariables:\n  customer-name: name\n  caller_number: phone\n')).toEqual([
      'line 3: variables.customer-name: a variable name is letters, digits and _, not starting with a digit',
      'line 4: variables.caller_number: is a built-in variable; the call sets it, the caller context cannot',
    ]);
  });

  test('an unknown key and a timeout out of range', () => {
    expect(problemsOf('request: { url: "https://crm.example/c" }\ntimeout_ms: 20000\nfields: [name]\n')).toEqual([
      'line 2: timeout_ms: Too big: expected number to be <=5000',
      'line 3: fields: unknown key "fields"',
    ]);
  });

  test('the store offers it; without its environment variables it is not used', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-context-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'tools'));
    await writeFile(
      path.join(dir, 'tools/context.yaml'),
      'request:\n  url: "${CRM_URL}/customers?phone={{caller_number}}"\ntimeout_ms: 800\npath: customer\nvariables: { customer_name: name }\n',
    );
    const options = { defaults: { timeoutMs: 5000, maxChars: 2000 } };
    const without = await ToolStore.open(dir, logger, { ...options, env: {} });
    expect(without.callerContext).toBeUndefined();
    const server = await crm();
    const store = await ToolStore.open(dir, logger, { ...options, env: { CRM_URL: server.url } });
    expect(store.callerContext?.timeoutMs).toBe(800);
    expect(await store.callerContext?.lookup({ caller_number: KNOWN }, live())).toEqual({ customer_name: 'Anna Schmidt' });
  });
});
