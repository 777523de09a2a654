/**
 * MCP servers' tools offered as business tools: real servers built with the
 * SDK (a stdio one run with node, a Streamable HTTP one in this process), no mocks.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BusinessTool, ToolResult } from '../src/call/ports/business-tools.js';
import { createLogger, type Logger } from '../src/logger.js';
import type { McpServerConfig } from '../src/tools/mcp-config.js';
import { McpServerGoneError } from '../src/tools/mcp-errors.js';
import { McpHub, type McpHubOptions } from '../src/tools/mcp-hub.js';
import { CUT_MARK } from '../src/tools/result-text.js';
import { childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';
import { freePort } from './helpers/ports.js';
import { startCrmServer, type CrmServer } from './fixtures/mcp/crm-http-server.js';

const SHOP = path.join(import.meta.dirname, 'fixtures/mcp/shop-server.mjs');
const TOKEN = 's3cret-crm-token-4711';
/** Starting node processes on a busy two-core machine takes seconds; waiting for events is bounded by this. */
const TIMEOUT = 60_000;

interface CapturedLog {
  readonly logger: Logger;
  readonly lines: Record<string, unknown>[];
  text(): string;
}

function captureLog(): CapturedLog {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    env: 'test',
    destination: {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { logger, lines, text: () => lines.map((line) => JSON.stringify(line)).join('\n') };
}

const hubs: McpHub[] = [];
const servers: CrmServer[] = [];
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'hotline-mcp-'));
});
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function newHub(log: CapturedLog, options: Partial<McpHubOptions> = {}): McpHub {
  const hub = new McpHub(log.logger, {
    env: { PATH: process.env.PATH, HOME: tmp, GREETING: 'world', CRM_TOKEN: TOKEN, UNUSED_SECRET: 'never-passed-on' },
    defaults: { timeoutMs: 5_000, maxChars: 1_000 },
    retry: { initialMs: 50, maxMs: 400 },
    ...options,
  });
  hubs.push(hub);
  return hub;
}

function shopConfig(extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    name: 'shop',
    command: process.execPath,
    args: [SHOP],
    env: { BOOKINGS_FILE: path.join(tmp, 'bookings.txt'), SHOP_GREETING: 'hello ${GREETING}' },
    hold: ['One moment, please.'],
    ...extra,
  };
}

function crmConfig(url: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name: 'crm', url, headers: { Authorization: 'Bearer ${CRM_TOKEN}' }, ...extra };
}

function tool(hub: McpHub, name: string): BusinessTool {
  const found = hub.tools().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}; on offer: ${hub.tools().map((t) => t.name).join(', ')}`);
  return found;
}

function run(hub: McpHub, name: string, args: string, signal = new AbortController().signal): Promise<ToolResult> {
  return tool(hub, name).run(args, { variables: {}, signal, log: captureLog().logger });
}

function names(hub: McpHub): string[] {
  return hub.tools().map((candidate) => candidate.name).sort();
}

function statusOf(hub: McpHub, name: string) {
  return hub.status().find((server) => server.name === name);
}

/** Resolves once `predicate` holds, checking after every change of the hub. */
function until(hub: McpHub, predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (predicate()) return resolve();
    const off = hub.onChange(() => {
      if (!predicate()) return;
      off();
      resolve();
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process's end has no event to await from here: look until it is gone. */
async function gone(pid: number): Promise<void> {
  while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 25));
}

function bookings(): string[] {
  try {
    return readFileSync(path.join(tmp, 'bookings.txt'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const SHOP_TOOLS = ['big', 'book_slot', 'env', 'fail', 'lookup_order', 'slow', 'stock', 'unlock'];

describe('a stdio server', () => {
  it('offers its tools with their schemas, side effects from annotations, and hold lines', { timeout: TIMEOUT }, async () => {
    const log = captureLog();
    const hub = newHub(log);
    hub.update([shopConfig()]);
    await hub.whenUp('shop');

    expect(names(hub)).toEqual(SHOP_TOOLS);
    const lookup = tool(hub, 'lookup_order');
    expect(lookup.definition).toEqual({
      type: 'function',
      function: {
        name: 'lookup_order',
        description: 'Find an order by its number.',
        parameters: {
          type: 'object',
          properties: { order_id: { type: 'string', description: 'The order number' } },
          required: ['order_id'],
        },
      },
    });
    expect(lookup.sideEffect).toBe(false);
    expect(lookup.holdLines).toEqual(['One moment, please.']);
    // Not annotated read-only: assumed to change something.
    expect(tool(hub, 'book_slot').sideEffect).toBe(true);
    expect(tool(hub, 'unlock').sideEffect).toBe(true);

    const status = statusOf(hub, 'shop');
    expect(status).toMatchObject({ name: 'shop', up: true, tools: expect.arrayContaining(SHOP_TOOLS) });
    expect(status?.lastError).toBeUndefined();
    expect(status?.pid).toBeGreaterThan(0);
    // "bad.name" is no valid function name: left out, and said so.
    expect(log.lines.some((line) => line.msg === 'mcp server tools left out' && JSON.stringify(line.problems).includes('bad.name'))).toBe(true);
  });

  it('runs tools: text, structured content, errors, capped results and bad arguments', { timeout: TIMEOUT }, async () => {
    const hub = newHub(captureLog());
    hub.update([shopConfig()]);
    await hub.whenUp('shop');

    expect(await run(hub, 'lookup_order', '{"order_id":"A-17"}')).toEqual({ outcome: 'ok', content: 'Order A-17: shipped' });
    const before = bookings().length;
    expect(await run(hub, 'book_slot', '{"slot":"mon 9:00"}')).toEqual({ outcome: 'ok', content: 'booked mon 9:00' });
    expect(await run(hub, 'book_slot', '{"slot":"tue 10:00"}')).toEqual({ outcome: 'ok', content: 'booked tue 10:00' });
    expect(bookings().slice(before)).toEqual(['mon 9:00', 'tue 10:00']);

    expect(await run(hub, 'stock', '{"sku":"A1"}')).toEqual({ outcome: 'ok', content: '{"sku":"A1","count":7}' });
    expect(await run(hub, 'fail', '')).toEqual({ outcome: 'error', content: 'error: the order system said no' });

    const big = await run(hub, 'big', '{}');
    expect(big.outcome).toBe('ok');
    expect(big.content.length).toBeLessThanOrEqual(1_000);
    expect(big.content.endsWith(CUT_MARK)).toBe(true);

    expect(await run(hub, 'lookup_order', '{"order_id":')).toEqual({ outcome: 'invalid', content: 'error: invalid arguments (not valid JSON); nothing was done' });
    expect(await run(hub, 'lookup_order', '[1]')).toEqual({ outcome: 'invalid', content: 'error: invalid arguments (not a JSON object); nothing was done' });
    // Arguments the tool's schema refuses never reach the server: the model is told what to correct.
    expect(await run(hub, 'lookup_order', '{}')).toEqual({ outcome: 'invalid', content: 'error: invalid arguments (order_id: missing); nothing was done' });
  });

  it("starts the server with PATH, HOME and its own env (with ${ENV} filled in), nothing else of Hotline's", { timeout: TIMEOUT }, async () => {
    const hub = newHub(captureLog());
    hub.update([shopConfig()]);
    await hub.whenUp('shop');

    const result = await run(hub, 'env', '');
    const seen = JSON.parse(result.content) as { greeting: string; names: string[] };
    expect(seen.greeting).toBe('hello world');
    expect(seen.names).toEqual(expect.arrayContaining(['PATH', 'HOME', 'BOOKINGS_FILE', 'SHOP_GREETING']));
    // The SDK adds a few harmless ones of its own (USER, SHELL, …); none of the test process's.
    for (const name of ['NODE_ENV', 'VITEST', 'GREETING', 'UNUSED_SECRET', 'CRM_TOKEN']) expect(seen.names).not.toContain(name);
  });

  it('answers a call the server does not finish in time with a timeout, and the server stays up', { timeout: TIMEOUT }, async () => {
    const hub = newHub(captureLog());
    hub.update([shopConfig({ timeout_ms: 1_500 })]);
    await hub.whenUp('shop');

    const started = Date.now();
    expect(await run(hub, 'slow', '{"ms":30000}')).toEqual({ outcome: 'timeout', content: 'error: slow did not answer within 1.5 s' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(statusOf(hub, 'shop')?.up).toBe(true);
    expect((await run(hub, 'lookup_order', '{"order_id":"1"}')).outcome).toBe('ok');
  });

  it('stops waiting when the run is aborted', { timeout: TIMEOUT }, async () => {
    const hub = newHub(captureLog());
    hub.update([shopConfig()]);
    await hub.whenUp('shop');

    const controller = new AbortController();
    const pending = run(hub, 'slow', '{"ms":30000}', controller.signal);
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toEqual({ outcome: 'aborted', content: 'not done: the caller interrupted' });
    expect(await run(hub, 'slow', '{"ms":1}', AbortSignal.abort())).toEqual({ outcome: 'aborted', content: 'not done: the caller interrupted' });
    expect((await run(hub, 'lookup_order', '{"order_id":"1"}')).outcome).toBe('ok');
  });

  it('lists the tools again when the server says they changed', { timeout: TIMEOUT }, async () => {
    const hub = newHub(captureLog());
    hub.update([shopConfig()]);
    await hub.whenUp('shop');

    expect(names(hub)).not.toContain('secret_menu');
    const listed = until(hub, () => names(hub).includes('secret_menu'));
    expect(await run(hub, 'unlock', '')).toEqual({ outcome: 'ok', content: 'unlocked' });
    await listed;
    expect(await run(hub, 'secret_menu', '')).toEqual({ outcome: 'ok', content: 'truffle fries' });
  });

  it('applies the allowlist, prefix and side_effect list; a changed config reconnects, a removed one ends the process', { timeout: TIMEOUT }, async () => {
    const log = captureLog();
    const hub = newHub(log);
    hub.update([shopConfig()]);
    await hub.whenUp('shop');
    const firstPid = statusOf(hub, 'shop')?.pid ?? 0;

    // The same settings again: nothing happens.
    hub.update([shopConfig()]);
    expect(statusOf(hub, 'shop')).toMatchObject({ up: true, pid: firstPid });

    hub.update([shopConfig({ tools: ['lookup_order', 'book_slot', 'missing_tool'], prefix: 'shop_', side_effect: ['lookup_order'], max_chars: 100 })]);
    expect(hub.tools()).toEqual([]);
    await hub.whenUp('shop');
    expect(names(hub)).toEqual(['shop_book_slot', 'shop_lookup_order']);
    expect(tool(hub, 'shop_lookup_order').sideEffect).toBe(true);
    expect(tool(hub, 'shop_lookup_order').definition.type === 'function' && tool(hub, 'shop_lookup_order').definition).toMatchObject({
      function: { name: 'shop_lookup_order' },
    });
    expect(await run(hub, 'shop_lookup_order', '{"order_id":"9"}')).toEqual({ outcome: 'ok', content: 'Order 9: shipped' });
    expect(log.lines.some((line) => JSON.stringify(line.problems ?? '').includes('missing_tool'))).toBe(true);
    await gone(firstPid);

    const secondPid = statusOf(hub, 'shop')?.pid ?? 0;
    expect(secondPid).not.toBe(firstPid);
    hub.update([]);
    expect(hub.tools()).toEqual([]);
    expect(hub.status()).toEqual([]);
    await expect(hub.whenUp('shop')).rejects.toBeInstanceOf(McpServerGoneError);
    await gone(secondPid);
  });

  it('does not start a server whose settings refer to a variable that is not set', { timeout: TIMEOUT }, async () => {
    const log = captureLog();
    const hub = newHub(log);
    hub.update([shopConfig({ name: 'cal', env: { TOKEN: '${CAL_TOKEN}' } })]);

    expect(hub.status()).toEqual([{ name: 'cal', up: false, tools: [], lastError: 'not started: CAL_TOKEN not set' }]);
    await expect(hub.whenUp('cal')).rejects.toBeInstanceOf(McpServerGoneError);
    await expect(hub.whenUp('nope')).rejects.toThrow('no server of that name is configured');
    expect(log.lines.some((line) => line.level === 50 && JSON.stringify(line.missing) === '["CAL_TOKEN"]')).toBe(true);
  });
});

describe('a Streamable HTTP server', () => {
  it('offers and runs its tools, sending the configured headers, never logging them', { timeout: TIMEOUT }, async () => {
    const crm = await startCrmServer({ token: TOKEN });
    servers.push(crm);
    const log = captureLog();
    const hub = newHub(log);
    hub.update([crmConfig(crm.url, { hold: ['Checking.'] })]);
    await hub.whenUp('crm');

    expect(names(hub)).toEqual(['hang', 'quote', 'reserve']);
    expect(tool(hub, 'quote').sideEffect).toBe(false);
    expect(tool(hub, 'reserve').sideEffect).toBe(true);
    expect(tool(hub, 'quote').holdLines).toEqual(['Checking.']);
    expect(await run(hub, 'quote', '{"item":"pen"}')).toEqual({ outcome: 'ok', content: 'pen: 12 EUR' });
    expect(await run(hub, 'reserve', '{"item":"pen"}')).toEqual({ outcome: 'ok', content: 'reserved pen' });
    expect(crm.runs.get('reserve')).toBe(1);
    expect(statusOf(hub, 'crm')?.pid).toBeUndefined();
    await hub.close();
    expect(log.text()).not.toContain(TOKEN);
  });

  it('reports a server refusing the credentials, without the credentials', { timeout: TIMEOUT }, async () => {
    const crm = await startCrmServer({ token: 'another-token' });
    servers.push(crm);
    const log = captureLog();
    const hub = newHub(log);
    hub.update([crmConfig(crm.url)]);

    await until(hub, () => statusOf(hub, 'crm')?.lastError !== undefined);
    expect(statusOf(hub, 'crm')).toMatchObject({ up: false, tools: [], lastError: expect.stringContaining('HTTP 401') });
    expect(hub.tools()).toEqual([]);
    await hub.close();
    expect(log.text()).toContain('mcp server not reachable');
    expect(log.text()).not.toContain(TOKEN);
  });
});

describe('servers that fail', () => {
  it('retries a server that is down at startup and offers its tools once it is up', { timeout: TIMEOUT }, async () => {
    const port = await freePort();
    const log = captureLog();
    const hub = newHub(log);
    hub.update([crmConfig(`http://127.0.0.1:${port}/mcp`), shopConfig()]);

    await until(hub, () => statusOf(hub, 'crm')?.lastError !== undefined);
    expect(statusOf(hub, 'crm')).toMatchObject({ up: false, tools: [], lastError: expect.stringContaining('ECONNREFUSED') });
    await hub.whenUp('shop');
    expect(names(hub)).toEqual(SHOP_TOOLS);

    const crm = await startCrmServer({ token: TOKEN, port });
    servers.push(crm);
    await hub.whenUp('crm');
    expect(names(hub)).toEqual([...SHOP_TOOLS, 'hang', 'quote', 'reserve'].sort());
    expect(statusOf(hub, 'crm')?.lastError).toBeUndefined();
    expect(await run(hub, 'quote', '{"item":"cup"}')).toEqual({ outcome: 'ok', content: 'cup: 12 EUR' });
    // A server that stays down is logged once at warn, then quietly.
    expect(log.lines.filter((line) => line.msg === 'mcp server not reachable; retrying' && line.mcp_server === 'crm')).toHaveLength(1);
  });

  it('a killed stdio server: the call in flight ends, its tools vanish, the other server works, and it is respawned', { timeout: TIMEOUT }, async () => {
    const crm = await startCrmServer({ token: TOKEN });
    servers.push(crm);
    const log = captureLog();
    const hub = newHub(log);
    hub.update([shopConfig({ timeout_ms: 30_000 }), crmConfig(crm.url)]);
    await Promise.all([hub.whenUp('shop'), hub.whenUp('crm')]);
    const pid = statusOf(hub, 'shop')?.pid ?? 0;

    const started = Date.now();
    const pending = run(hub, 'slow', '{"ms":60000}');
    process.kill(pid, 'SIGKILL');
    expect(await pending).toEqual({ outcome: 'unavailable', content: 'error: the shop system is not reachable right now' });
    expect(Date.now() - started).toBeLessThan(20_000);

    // Withdrawn at once, still on offer from the other server.
    expect(names(hub)).toEqual(['hang', 'quote', 'reserve']);
    expect(statusOf(hub, 'shop')).toMatchObject({ up: false, lastError: 'the process exited' });
    expect(await run(hub, 'quote', '{"item":"pen"}')).toEqual({ outcome: 'ok', content: 'pen: 12 EUR' });
    expect(log.lines.some((line) => line.msg === 'mcp server lost; its tools are withdrawn until it is back' && line.mcp_server === 'shop')).toBe(true);

    await hub.whenUp('shop');
    const respawned = statusOf(hub, 'shop')?.pid;
    expect(respawned).toBeGreaterThan(0);
    expect(respawned).not.toBe(pid);
    expect(names(hub)).toEqual([...SHOP_TOOLS, 'hang', 'quote', 'reserve'].sort());
    expect(await run(hub, 'lookup_order', '{"order_id":"3"}')).toEqual({ outcome: 'ok', content: 'Order 3: shipped' });
  });

  it('a stopped HTTP server: the call in flight ends, its tools vanish, and they return when it is back', { timeout: TIMEOUT }, async () => {
    const crm = await startCrmServer({ token: TOKEN });
    servers.push(crm);
    const hub = newHub(captureLog());
    hub.update([shopConfig(), crmConfig(crm.url, { timeout_ms: 30_000 })]);
    await Promise.all([hub.whenUp('shop'), hub.whenUp('crm')]);

    const started = Date.now();
    const running = crm.whenRun('hang');
    const pending = run(hub, 'hang', '');
    await running;
    await crm.stop();
    const result = await pending;
    expect(result).toEqual({ outcome: 'unavailable', content: 'error: the crm system is not reachable right now' });
    expect(Date.now() - started).toBeLessThan(20_000);

    await until(hub, () => statusOf(hub, 'crm')?.up === false);
    expect(names(hub)).toEqual(SHOP_TOOLS);
    expect((await run(hub, 'lookup_order', '{"order_id":"5"}')).outcome).toBe('ok');

    await crm.start();
    await hub.whenUp('crm');
    expect(await run(hub, 'quote', '{"item":"lamp"}')).toEqual({ outcome: 'ok', content: 'lamp: 12 EUR' });
  });

  it('a tool kept from before its server went down answers unavailable at once', { timeout: TIMEOUT }, async () => {
    const crm = await startCrmServer({ token: TOKEN });
    servers.push(crm);
    const hub = newHub(captureLog(), { retry: { initialMs: 60_000, maxMs: 60_000 } });
    hub.update([crmConfig(crm.url)]);
    await hub.whenUp('crm');
    const quote = tool(hub, 'quote');

    await crm.stop();
    // Without a call in flight, the server's end shows on the event stream the client keeps open.
    await until(hub, () => statusOf(hub, 'crm')?.up === false);
    expect(hub.tools()).toEqual([]);
    const result = await quote.run('{"item":"pen"}', { variables: {}, signal: new AbortController().signal, log: captureLog().logger });
    expect(result).toEqual({ outcome: 'unavailable', content: 'error: the crm system is not reachable right now' });
  });
});

describe('closing', () => {
  it('ends every process, answers the calls in flight, and leaves nothing for whenUp', { timeout: TIMEOUT }, async () => {
    const hub = newHub(captureLog());
    hub.update([shopConfig(), crmConfig(`http://127.0.0.1:${await freePort()}/mcp`)]);
    await hub.whenUp('shop');
    const pid = statusOf(hub, 'shop')?.pid ?? 0;
    const pending = run(hub, 'slow', '{"ms":60000}');

    await hub.close();
    expect(await pending).toEqual({ outcome: 'unavailable', content: 'error: the shop system is not reachable right now' });
    expect(alive(pid)).toBe(false);
    expect(hub.tools()).toEqual([]);
    expect(hub.status()).toEqual([]);
    await expect(hub.whenUp('shop')).rejects.toBeInstanceOf(McpServerGoneError);
    hub.update([shopConfig()]);
    expect(hub.status()).toEqual([]);
  });

  it('leaves no handle open: a process that used a hub exits on its own after close()', { timeout: TIMEOUT }, async () => {
    const child = spawn(process.execPath, tsxArgs('test/fixtures/mcp/hub-exit.ts'), {
      cwd: isolatedCwd(),
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Well before the fixture's one-minute retry: an exit only when that timer fires would be a leak.
    const deadline = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    clearTimeout(deadline);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { pid: number; result: ToolResult; late: ToolResult };
    expect(report.result).toEqual({ outcome: 'ok', content: 'Order 7: shipped' });
    expect(report.late.outcome).toBe('unavailable');
    expect(alive(report.pid)).toBe(false);
  });
});
