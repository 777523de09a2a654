/**
 * The tools folder: which files become what, what happens to broken and
 * incomplete ones, hot reload, and prompts:check's report of it.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { checkToolsFolder, ToolStore, type ToolStoreOptions } from '../src/tools/tool-store.js';
import { json, startBusinessServer, type BusinessServer } from './helpers/business-server.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, repoRoot, tsxArgs } from './helpers/child-process.js';

const run = promisify(execFile);
const logger = pino({ level: 'silent' });
const DEFAULTS = { timeoutMs: 5000, maxChars: 2000 };
/** Long enough for a watched change to arrive on a busy machine; the tests wait for events, not for this. */
const CHANGE_TIMEOUT_MS = 5000;

const tool = (description: string, url = 'https://shop.example/orders') => `description: ${description}\nrequest: { url: "${url}" }\n`;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'hotline-tools-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const stores: ToolStore[] = [];
const servers: BusinessServer[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) store.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

let folders = 0;
/** A prompts folder; `tools` undefined means it has no tools folder. */
async function promptsFolder(tools?: Record<string, string>): Promise<string> {
  const dir = path.join(root, `prompts-${++folders}`);
  await mkdir(dir);
  if (tools !== undefined) {
    await mkdir(path.join(dir, 'tools'));
    for (const [name, text] of Object.entries(tools)) await writeFile(path.join(dir, 'tools', name), text);
  }
  return dir;
}

async function open(dir: string, options: Partial<ToolStoreOptions> = {}): Promise<ToolStore> {
  const store = await ToolStore.open(dir, logger, { env: {}, defaults: DEFAULTS, ...options });
  stores.push(store);
  return store;
}

/** Resolves at the store's next change; rejects if none comes in time, so a test never hangs. */
function nextChange(store: ToolStore): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the store did not change')), CHANGE_TIMEOUT_MS);
    store.onChange(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const names = (store: ToolStore): string[] => store.tools().map((t) => t.name);
const descriptions = (store: ToolStore): (string | undefined)[] =>
  store.tools().map((t) => (t.definition.type === 'function' ? t.definition.function.description : undefined));

describe('reading the tools folder', () => {
  test('each YAML file is a tool, named by its file unless it says otherwise; other files are not read', async () => {
    const dir = await promptsFolder({
      'order_status.yaml': tool('Looks up an order.'),
      'slots.yml': `name: free_slots\n${tool('Free slots.')}`,
      'notes.txt': 'not a tool',
      '.hidden.yaml': 'broken: [',
    });
    const store = await open(dir);
    expect(names(store)).toEqual(['order_status', 'free_slots']);
    expect(descriptions(store)[0]).toBe('Looks up an order.');
    expect(store.callerContext).toBeUndefined();
    expect(store.mcpServers).toEqual([]);
  });

  test('no tools folder: no tools and no problem', async () => {
    const dir = await promptsFolder();
    const store = await open(dir);
    expect(store.tools()).toEqual([]);
    expect(await store.reload()).toEqual({ ok: true, problems: [] });
    expect(await checkToolsFolder(dir, {})).toEqual({ files: [], ok: true });
  });

  test('mcp.yaml and context.yaml are what they are, not tools', async () => {
    const dir = await promptsFolder({
      'mcp.yaml': 'servers:\n  - name: calendar\n    command: node\n    args: [cal.js]\n  - name: crm\n    url: http://localhost:3001/mcp\n    headers: { Authorization: "Bearer ${CRM_TOKEN}" }\n',
      'context.yaml': 'request: { url: "https://crm.example/customers?phone={{caller_number}}" }\ntimeout_ms: 800\n',
      'order_status.yaml': tool('Looks up an order.'),
    });
    const store = await open(dir);
    expect(names(store)).toEqual(['order_status']);
    expect(store.mcpServers.map((s) => s.name)).toEqual(['calendar', 'crm']);
    // As written: the MCP hub expands ${…} itself.
    expect(store.mcpServers[1]!.headers).toEqual({ Authorization: 'Bearer ${CRM_TOKEN}' });
    expect(store.callerContext?.timeoutMs).toBe(800);
    const check = await checkToolsFolder(dir, { CRM_TOKEN: 'token-of-the-crm' });
    expect(check.files.map((f) => `${f.file}: ${f.summary}`)).toEqual([
      'tools/context.yaml: caller context, GET, 800 ms',
      'tools/mcp.yaml: 2 MCP servers (calendar: stdio, crm: http), needs ${CRM_TOKEN}',
      'tools/order_status.yaml: tool order_status, GET, side effect: no',
    ]);
    expect(check.ok).toBe(true);
    // Unset, the server is not started: a problem of mcp.yaml, naming the variable.
    expect((await checkToolsFolder(dir, {})).files[1]?.problems).toEqual([
      { file: 'tools/mcp.yaml', severity: 'error', message: 'MCP server crm: ${CRM_TOKEN} is not set: the server is not started until it is set' },
    ]);
  });

  test('two tool files whose names differ only in case: the later file is in error too', async () => {
    const dir = await promptsFolder({ 'Lookup.yaml': tool('First.'), 'lookup.yaml': tool('Second.') });
    expect(descriptions(await open(dir))).toEqual(['First.']);
    const check = await checkToolsFolder(dir, {});
    expect(check.files[1]?.problems.map((p) => p.message)).toEqual([
      'line 1: "lookup" is already the name of the tool in tools/Lookup.yaml ("Lookup": names are compared ignoring case)',
    ]);
  });

  test('two tools with one name: the later file (by name) is the one in error', async () => {
    const dir = await promptsFolder({ 'a.yaml': `name: lookup\n${tool('First.')}`, 'b.yaml': `name: lookup\n${tool('Second.')}` });
    const store = await open(dir);
    expect(descriptions(store)).toEqual(['First.']);
    const check = await checkToolsFolder(dir, {});
    expect(check.ok).toBe(false);
    expect(check.files[1]).toEqual({
      file: 'tools/b.yaml',
      summary: 'HTTP tool (not loaded)',
      needs: [],
      problems: [{ file: 'tools/b.yaml', severity: 'error', message: 'line 1: name: "lookup" is already the name of the tool in tools/a.yaml' }],
    });
  });

  test('a tool whose environment variables are not set is not offered, and the check says which are missing', async () => {
    const file = 'description: Looks up an order.\nrequest:\n  url: "${SHOP_API_URL}/orders"\n  headers: { Authorization: "Bearer ${SHOP_API_TOKEN}" }\n';
    const dir = await promptsFolder({ 'order_status.yaml': file, 'other.yaml': tool('Other.') });
    expect(names(await open(dir, { env: { SHOP_API_URL: 'https://shop.example' } }))).toEqual(['other']);
    expect(names(await open(dir, { env: { SHOP_API_URL: 'https://shop.example', SHOP_API_TOKEN: 't' } }))).toEqual(['order_status', 'other']);
    const check = await checkToolsFolder(dir, { SHOP_API_URL: 'https://shop.example' });
    expect(check.ok).toBe(false);
    expect(check.files[0]).toMatchObject({
      summary: 'tool order_status, GET, side effect: no, needs ${SHOP_API_URL} ${SHOP_API_TOKEN}',
      needs: ['SHOP_API_URL', 'SHOP_API_TOKEN'],
      problems: [{ file: 'tools/order_status.yaml', severity: 'error', message: '${SHOP_API_TOKEN} is not set: the tool is not offered until it is set' }],
    });
    expect((await checkToolsFolder(dir, { SHOP_API_URL: 'https://shop.example', SHOP_API_TOKEN: 't' })).ok).toBe(true);
  });

  test('at startup a broken file is left out and the rest is used', async () => {
    const dir = await promptsFolder({ 'good.yaml': tool('Good.'), 'broken.yaml': 'description: Broken.\nrequest: { url: "https://x.example", method: FETCH }\n' });
    const store = await open(dir);
    expect(names(store)).toEqual(['good']);
    const result = await store.reload();
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([{ file: 'tools/broken.yaml', severity: 'error', message: 'line 2: request.method: use GET, POST, PUT, PATCH or DELETE' }]);
  });

  test('a tool from the store runs against its system', async () => {
    const shop = await startBusinessServer((req, res) => json(res, { order: { status: 'shipped' } }));
    servers.push(shop);
    const dir = await promptsFolder({
      'order_status.yaml': `description: d\nparameters: { type: object, properties: { n: { type: string } }, required: [n] }\nrequest: { url: "\${SHOP}/orders/{{n}}" }\nresponse: { path: order.status }\n`,
    });
    const store = await open(dir, { env: { SHOP: shop.url } });
    const result = await store.tools()[0]!.run('{"n":"4711"}', { variables: {}, signal: new AbortController().signal, log: logger });
    expect(result).toEqual({ content: 'shipped', outcome: 'ok' });
    expect(shop.requests.map((r) => r.url)).toEqual(['/orders/4711']);
  });
});

describe('hot reload', () => {
  test('an edit applies; a broken edit keeps the last good set; fixing it applies', async () => {
    const dir = await promptsFolder({ 'order_status.yaml': tool('First version.'), 'slots.yaml': tool('Slots.') });
    const store = await open(dir, { watch: true, checkIntervalMs: 200 });
    expect(descriptions(store)).toEqual(['First version.', 'Slots.']);

    let changed = nextChange(store);
    await writeFile(path.join(dir, 'tools/order_status.yaml'), tool('Second version.'));
    await changed;
    expect(descriptions(store)).toEqual(['Second version.', 'Slots.']);
    const good = store.tools();

    // Broken: the whole last good version stays, the untouched file's tool included.
    await writeFile(path.join(dir, 'tools/order_status.yaml'), 'description: Third.\nrequest: { url: "https://x.example", metod: GET }\n');
    await unlink(path.join(dir, 'tools/slots.yaml'));
    const broken = await store.reload();
    expect(broken.ok).toBe(false);
    expect(broken.problems.map((p) => `${p.file}: ${p.message}`)).toEqual(['tools/order_status.yaml: line 2: request.metod: unknown key "metod"']);
    expect(store.tools()).toBe(good);

    changed = nextChange(store);
    await writeFile(path.join(dir, 'tools/order_status.yaml'), tool('Fixed.'));
    await changed;
    expect(descriptions(store)).toEqual(['Fixed.']);
  });

  test('an unchanged folder keeps the very same tools, and tells nobody', async () => {
    const dir = await promptsFolder({ 'a.yaml': tool('A.') });
    const store = await open(dir);
    let told = 0;
    store.onChange(() => (told += 1));
    const before = store.tools();
    expect(await store.reload()).toEqual({ ok: true, problems: [] });
    expect(store.tools()).toBe(before);
    expect(told).toBe(0);
  });

  test('a tools folder that appears later is picked up', async () => {
    const dir = await promptsFolder();
    const store = await open(dir, { watch: true, checkIntervalMs: 100 });
    expect(store.tools()).toEqual([]);
    const changed = nextChange(store);
    // Made aside and moved in whole, as a deployment would: the watch sees one complete folder.
    const staged = path.join(root, `staged-${folders}`);
    await mkdir(staged);
    await writeFile(path.join(staged, 'late.yaml'), tool('Late.'));
    await rename(staged, path.join(dir, 'tools'));
    await changed;
    expect(names(store)).toEqual(['late']);
  });
});

test(
  'npm run prompts:check lists the tool files and fails on a broken one, naming file, line and problem',
  async () => {
    const dir = await promptsFolder({
      'order_status.yaml': 'description: Looks up an order.\nrequest:\n  url: "${SHOP_API_URL}/orders/{{order_number}}"\n',
      'book.yaml': 'description: Books a slot.\nrequest:\n  method: POST\n  url: https://calendar.example/bookings\n  bogus: 1\n',
    });
    // The shipped prompt files, so that the tool files are the only problem; not the shipped tools.
    const shipped = path.join(repoRoot, 'prompts');
    await cp(shipped, dir, { recursive: true, filter: (source) => path.relative(shipped, source).split(path.sep)[0] !== 'tools' });
    const failure = await run(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv({ SHOP_API_URL: 'https://shop.example' }) }).then(
      () => expect.unreachable('prompts:check passed'),
      (error: unknown) => error as { code: number; stdout: string },
    );
    expect(failure.code).toBe(1);
    const lines = failure.stdout.trimEnd().split('\n');
    const at = lines.indexOf('tools/book.yaml: HTTP tool (not loaded)');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('  error: line 5: request.bogus: unknown key "bogus"');
    expect(lines[at + 2]).toBe('tools/order_status.yaml: tool order_status, GET, side effect: no, needs ${SHOP_API_URL}');
    // The shipped knowledge folder's line, then the evals.
    expect(lines[at + 3]).toMatch(/^knowledge\/: \d+ documents, \d+ passages$/);
    expect(lines[at + 4]).toMatch(/^evals\//);
    expect(lines.at(-1)).toMatch(/^\d+ files, 2 tool files, (\d+ evals, )?1 problem$/);
  },
  CHILD_TEST_TIMEOUT_MS,
);
