/**
 * `npm run prompts:check` on the tools folder, as the real command in a
 * child process: a tool Hotline would leave out for an unset variable is a
 * problem; the tools MCP servers list are checked as Hotline would offer
 * them (real servers started for the check); the knowledge folder's documents
 * are read as Hotline reads them; and a plain checkout prints exactly what
 * the README shows.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { closedPort } from './helpers/report-receiver.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, repoRoot, tsxArgs } from './helpers/child-process.js';
import { HOSTILE_SERVER } from './helpers/tool-calls.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Checked {
  readonly code: number;
  readonly lines: string[];
  readonly stderr: string;
}

/** The command on `dir` (the shipped folder without one), from `cwd` (an empty folder unless given). */
function check(dir: string | undefined, vars: Record<string, string> = {}, cwd = isolatedCwd()): Promise<Checked> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      tsxArgs('src/cli/prompts-check.ts', ...(dir ? [dir] : [])),
      { cwd, env: childEnv(vars), timeout: CHILD_TEST_TIMEOUT_MS },
      (error, stdout, stderr) => {
        if (typeof error?.code === 'string') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, lines: stdout.trimEnd().split('\n'), stderr });
      },
    );
  });
}

/** The shipped prompt files with `tools` as the tools folder. */
async function folderWithTools(tools: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-check-tools-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const shipped = path.join(repoRoot, 'prompts');
  await cp(shipped, dir, { recursive: true, filter: (source) => path.relative(shipped, source).split(path.sep)[0] !== 'tools' });
  await mkdir(path.join(dir, 'tools'));
  for (const [name, text] of Object.entries(tools)) await writeFile(path.join(dir, 'tools', name), text);
  return dir;
}

/** The lines under `file`'s own line, up to the next file. */
function problemsOf(lines: readonly string[], file: string): string[] {
  const at = lines.findIndex((line) => line.startsWith(`${file}: `));
  expect(at, `${file} is listed`).toBeGreaterThan(0);
  const after = lines.slice(at + 1);
  const end = after.findIndex((line) => !line.startsWith('  '));
  return after.slice(0, end < 0 ? after.length : end);
}

const ORDER_STATUS = 'description: Looks up an order.\nrequest:\n  url: "${SHOP_API_URL}/orders"\n  headers: { Authorization: "Bearer ${SHOP_TOKEN}" }\n';
const TOKEN = 'the-shop-token-value-4711';

describe('variables a tool needs', () => {
  test('unset: a problem naming each variable, never a value, and exit 1; set in .env as Hotline reads it: no problem', async () => {
    const dir = await folderWithTools({
      'order_status.yaml': ORDER_STATUS,
      'context.yaml': 'request:\n  url: "https://crm.example/customers?phone={{caller_number}}"\n  headers: { Authorization: "Bearer ${CRM_TOKEN}" }\n',
      'mcp.yaml': `servers:\n  - name: crm\n    command: node\n    args: ["${HOSTILE_SERVER}"]\n    env: { API_SECRET: "\${CRM_TOKEN}", TOOLS: lookup }\n`,
    });
    // A real LLM configured: the demo's shop does not stand in for SHOP_API_URL.
    const unset = await check(dir, { OPENAI_API_KEY: 'sk-test', SHOP_TOKEN: TOKEN });
    expect(unset.code).toBe(1);
    expect(problemsOf(unset.lines, 'tools/order_status.yaml')).toEqual(['  error: ${SHOP_API_URL} is not set: the tool is not offered until it is set']);
    expect(problemsOf(unset.lines, 'tools/context.yaml')).toEqual([
      "  error: ${CRM_TOKEN} is not set: the caller's record is not looked up until it is set",
    ]);
    expect(problemsOf(unset.lines, 'tools/mcp.yaml')).toEqual(['  error: MCP server crm: ${CRM_TOKEN} is not set: the server is not started until it is set']);
    expect(unset.lines.at(-1)).toBe('27 files, 3 tool files, 8 evals, 3 problems');
    expect(unset.lines.join('\n')).not.toContain(TOKEN);

    // The same variables in a .env file where the command runs, as `npm start` would read them.
    const cwd = await mkdtemp(path.join(tmpdir(), 'hotline-check-cwd-'));
    cleanups.push(() => rm(cwd, { recursive: true, force: true }));
    await writeFile(path.join(cwd, '.env'), `OPENAI_API_KEY=sk-test\nSHOP_API_URL=https://shop.example\nSHOP_TOKEN=${TOKEN}\nCRM_TOKEN=crm-token-123\n`);
    const set = await check(dir, {}, cwd);
    expect(set.lines.at(-1)).toBe('27 files, 3 tool files, 8 evals, 0 problems');
    expect(set.code).toBe(0);
  }, CHILD_TEST_TIMEOUT_MS);

  test('a plain checkout prints what the README shows, 0 problems: the demo shop stands in for SHOP_API_URL', async () => {
    const plain = await check(path.join(repoRoot, 'prompts'));
    expect(plain.code).toBe(0);
    const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
    const block = /```sh\n\$ npm run prompts:check\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const shown = block.split('\n').filter((line) => line !== '' && !line.startsWith('> '));
    expect(shown[0]).toBe('prompts in /path/to/hotline/prompts');
    expect(plain.lines).toEqual([`prompts in ${path.join(repoRoot, 'prompts')}`, ...shown.slice(1)]);
  }, CHILD_TEST_TIMEOUT_MS);
});

describe('the tools of MCP servers', () => {
  test("are listed and checked as Hotline offers them: each tool left out is named with its server and why", async () => {
    const server = (name: string, tools: readonly string[]) =>
      `  - name: ${name}\n    command: node\n    args: ["${HOSTILE_SERVER}"]\n    env: { TOOLS: "${tools.join(',')}" }\n`;
    const mcp = [
      'servers:',
      server('first', ['Transfer', 'HANGUP', 'Speak', 'Do_Not_Call', 'lookup', 'order_status', 'bad_type', 'huge_description']).trimEnd(),
      server('second', ['Lookup']).trimEnd(),
      `  - name: gone\n    url: http://127.0.0.1:${await closedPort()}/mcp`,
    ].join('\n');
    const dir = await folderWithTools({ 'order_status.yaml': ORDER_STATUS, 'mcp.yaml': `${mcp}\n` });
    const checked = await check(dir, { SHOP_API_URL: 'https://shop.example', SHOP_TOKEN: TOKEN });

    expect(checked.code).toBe(1);
    expect(problemsOf(checked.lines, 'tools/order_status.yaml')).toEqual([]);
    const own = "is the name of one of Hotline's own tools (speak, transfer, hangup, do_not_call, send_sms), in any spelling";
    expect(problemsOf(checked.lines, 'tools/mcp.yaml')).toEqual([
      `  error: tool "Transfer" of MCP server first left out: "Transfer" ${own}`,
      `  error: tool "HANGUP" of MCP server first left out: "HANGUP" ${own}`,
      `  error: tool "Speak" of MCP server first left out: "Speak" ${own}`,
      `  error: tool "Do_Not_Call" of MCP server first left out: "Do_Not_Call" ${own}`,
      expect.stringMatching(/^ {2}error: tool "bad_type" of MCP server first left out: inputSchema\.properties\.a: .*strnig$/),
      expect.stringMatching(/^ {2}error: tool "huge_description" of MCP server first left out: its description is 1050000 characters/),
      expect.stringMatching(/^ {2}error: MCP server gone could not be reached \(.*ECONNREFUSED.*\): its tools were not checked$/),
      '  error: tool "order_status" of MCP server first left out: "order_status" of tools/order_status.yaml has that name (names are compared ignoring case)',
      '  error: tool "Lookup" of MCP server second left out: "lookup" of MCP server first has that name (names are compared ignoring case)',
    ]);
    expect(checked.lines.at(-1)).toBe('27 files, 2 tool files, 8 evals, 9 problems');
  }, CHILD_TEST_TIMEOUT_MS);
});

describe('the knowledge folder', () => {
  test('one line for the folder; a document that cannot be read is an error with its file and line, one without text a warning', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-check-knowledge-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await cp(path.join(repoRoot, 'prompts'), dir, { recursive: true });
    await rm(path.join(dir, 'knowledge'), { recursive: true });
    await mkdir(path.join(dir, 'knowledge', 'de'), { recursive: true });
    await writeFile(path.join(dir, 'knowledge', 'delivery.md'), '# Delivery\n\n## Areas\nBerlin and Potsdam.\n\n## Days\nTuesdays and Fridays.\n');
    await writeFile(path.join(dir, 'knowledge', 'faq.yaml'), 'questions:\n  - question: Do you ship abroad?\n    answer: No.\n  - question: Refunds?\n');
    await writeFile(path.join(dir, 'knowledge', 'de', 'leer.md'), '<!-- noch leer -->\n');

    const checked = await check(dir);
    expect(checked.code).toBe(1);
    const at = checked.lines.findIndex((line) => line.startsWith('knowledge/: '));
    expect(checked.lines[at]).toBe('knowledge/: 3 documents, 2 passages');
    expect(problemsOf(checked.lines, 'knowledge/')).toEqual([
      '  warning: knowledge/de/leer.md: has no text to search: nothing in it can be found',
      '  error: knowledge/faq.yaml line 4: the entry has no answer (write "answer:" or "a:")',
    ]);
    // After the tools, before the evals.
    expect(checked.lines[at - 1]).toMatch(/^tools\//);
    expect(checked.lines[at + 3]).toMatch(/^evals\//);
    expect(checked.lines.at(-1)).toBe('27 files, 2 tool files, 8 evals, 2 problems');

    // Without a knowledge folder nothing is listed for it.
    await rm(path.join(dir, 'knowledge'), { recursive: true });
    const without = await check(dir);
    expect(without.code).toBe(0);
    expect(without.lines.some((line) => line.startsWith('knowledge/'))).toBe(false);
  }, CHILD_TEST_TIMEOUT_MS);
});
