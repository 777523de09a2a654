/**
 * Every example in README.md and docs/*.md, run as a new user would run it, and
 * its output compared with what the page shows.
 *
 * The pages are read when the test runs: an example edited there is the
 * example tested. Each fenced block is claimed by exactly one entry of
 * EXAMPLES below, found by its first line: either it is run, or it is marked
 * not runnable with the reason. A new block that nobody claims fails the
 * test, so a new example is run by default and left out only on purpose.
 *
 * What "as a new user would" means here:
 * - Hotline is started as `npm start` starts it: src/main.ts in a child
 *   process (run through tsx, as the build would run it), in an empty folder,
 *   with nothing in the environment but what the example itself sets — the
 *   demo model at its default timing. Only PORT is free instead of 3000, and
 *   the transcripts and database go to a temporary folder.
 * - The commands are run by bash, verbatim, in an empty folder without a .env.
 *   `npm run <script>` is emulated by a bash function that prints npm's
 *   header (from package.json) and runs the script's file as tsx would. The
 *   one change made to a command, and to its expected output alike: the
 *   README's ports (3000, 4000, …) become the free ports the test uses.
 *   `npm run simulate` without an address is given the Hotline's one (its
 *   default is localhost:3000).
 * - A file the README shows (a tool file, mcp.yaml, front matter) is written where it belongs into a
 *   copy of the shipped prompts folder and must pass `npm run prompts:check` without a problem.
 * - Outputs are compared line by line; where the README says a value differs
 *   from run to run (times of the simulator, session and campaign ids, the
 *   path of the prompts folder), both sides are masked the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { NOTHING_MARK } from '../src/call/knowledge-note.js';
import { parseEval } from '../src/evals/load-evals.js';
import { ActionSchema } from '../src/protocol/actions.js';
import { readSmsTemplates } from '../src/tools/sms-templates.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { BUILT_DIR, CHILD_TEST_TIMEOUT_MS, childEnv, PROJECT_TO_START, repoRoot, tsxArgs } from './helpers/child-process.js';
import { freePort } from './helpers/ports.js';


// ---------------------------------------------------------------------------------------------
// The README's blocks and commands

interface Block {
  /** Where it is: README.md, or a file of docs/. */
  readonly file: string;
  /** The line of the opening fence, 1-based. */
  readonly line: number;
  readonly lang: string;
  readonly lines: readonly string[];
  /** The heading the block stands under, to name it in failures. */
  readonly heading: string;
}

function readmeBlocks(text: string, file: string): Block[] {
  const blocks: Block[] = [];
  const all = text.split('\n');
  let heading = '(top)';
  for (let i = 0; i < all.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(all[i]!);
    if (!fence) {
      if (/^#{1,4} /.test(all[i]!)) heading = all[i]!.replace(/^#+ /, '');
      continue;
    }
    const start = i;
    const lines: string[] = [];
    for (i++; i < all.length && !/^```\s*$/.test(all[i]!); i++) lines.push(all[i]!);
    blocks.push({ file, line: start + 1, lang: fence[1] ?? '', lines, heading });
  }
  return blocks;
}

interface Command {
  /** The file the command is in. */
  readonly file: string;
  /** The line of the command's `$`. */
  readonly line: number;
  /** As bash reads it: the `$ ` removed, continuation lines kept. */
  readonly text: string;
  /** The lines the README shows after it, up to the next command. */
  readonly expected: readonly string[];
}

function commandsOf(block: Block): Command[] {
  const commands: { line: number; text: string[]; expected: string[] }[] = [];
  let continued = false;
  block.lines.forEach((line, i) => {
    const current = commands.at(-1);
    if (continued && current) {
      current.text.push(line);
    } else if (line.startsWith('$ ')) {
      commands.push({ line: block.line + 1 + i, text: [line.slice(2)], expected: [] });
    } else if (current) {
      current.expected.push(line);
    }
    continued = /\\$/.test(line) && (continued || line.startsWith('$ '));
  });
  return commands.map((c) => ({ file: block.file, line: c.line, text: c.text.join('\n'), expected: trimBlankEnd(c.expected) }));
}

function trimBlankEnd(lines: readonly string[]): string[] {
  const out = [...lines];
  while (out.length > 0 && out.at(-1)!.trim() === '') out.pop();
  return out;
}

/** `$ A=1 B=2 npm start` → { A: '1', B: '2' } (the README's values have no spaces). */
function envOfStart(command: Command): Record<string, string> {
  const words = command.text.replace(/\\\n/g, ' ').split(/\s+/).filter(Boolean);
  const vars: Record<string, string> = {};
  for (const word of words) {
    const assignment = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(word);
    if (!assignment) break;
    vars[assignment[1]!] = assignment[2]!;
  }
  expect(command.text, `${command.file}:${command.line}: expected "VAR=value … npm start"`).toMatch(/\bnpm start\s*$/);
  return vars;
}

// ---------------------------------------------------------------------------------------------
// Ports, processes, commands

/** The README's ports → the test's (free ones: 3000 and 4000 may be taken here), in commands and expected output alike. */
type Ports = Record<number, number>;

function withPorts(text: string, ports: Ports): string {
  let out = text;
  for (const [from, to] of Object.entries(ports)) out = out.replace(new RegExp(`(?<![\\d])${from}(?![\\d])`, 'g'), String(to));
  return out;
}

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempFolder(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Where a command runs: npm runs a script in the package's folder, so this one has the clone's
 * prompts/ (a link to it) — and, unlike the developer's clone, no .env.
 */
async function workFolder(): Promise<string> {
  const dir = await tempFolder('hotline-readme-run-');
  await symlink(path.join(repoRoot, 'prompts'), path.join(dir, 'prompts'));
  await symlink(path.join(repoRoot, 'examples'), path.join(dir, 'examples'));
  return dir;
}

interface Started {
  readonly port: number;
  stdout(): string;
  /** Resolves with the first stdout line matching `pattern`. */
  line(pattern: RegExp): Promise<string>;
}

/** Hotline as `npm start` starts it, with `vars` (an example's own) and PORT free; the rest of its environment empty. */
async function startHotline(vars: Record<string, string>, ports: Ports = {}): Promise<Started> {
  const port = vars.PORT !== undefined ? Number(withPorts(vars.PORT, ports)) : (ports[3000] ?? (await freePort()));
  const data = await tempFolder('hotline-readme-data-');
  const cwd = await tempFolder('hotline-readme-cwd-');
  const env = childEnv({
    ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, withPorts(v, ports)])),
    PORT: String(port),
    TRANSCRIPTS_DIR: path.join(data, 'transcripts'),
    DATABASE_FILE: path.join(data, 'hotline.db'),
  });
  const child = spawn(process.execPath, tsxArgs('src/main.ts'), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const started = watch(child);
  cleanups.push(() => void child.kill('SIGKILL'));
  await started.line(/Hotline is listening/);
  return { port, ...started };
}

function watch(child: ChildProcess): Omit<Started, 'port'> & { exited: Promise<number | null>; stderr(): string } {
  let out = '';
  let err = '';
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    out += `${line}\n`;
    for (const wait of waiting.slice()) {
      if (!wait.pattern.test(line)) continue;
      waiting.splice(waiting.indexOf(wait), 1);
      wait.resolve(line);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (piece: string) => (err += piece));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    exited,
    stdout: () => out,
    stderr: () => err,
    line(pattern) {
      const seen = out.split('\n').find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve });
        void exited.then((code) => reject(new Error(`the process exited (${code}) before printing ${pattern}:\n${out}${err}`)));
      });
    },
  };
}

/**
 * `npm run <script> [-- args]` as npm runs a package.json script: its header on stdout, then the
 * script's file under tsx. Only `tsx <file>` scripts are emulated; `npm start` is started by the test.
 */
async function npmPrelude(hotlinePort: number | undefined): Promise<string> {
  const { name, version, scripts } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    scripts: Record<string, string>;
  };
  const cases = Object.entries(scripts)
    .filter(([, script]) => /^tsx \S+$/.test(script))
    .map(([script, line]) => `    ${JSON.stringify(script)}) file=${JSON.stringify(line.slice(4))} ;;`)
    .join('\n');
  const url = hotlinePort === undefined ? '' : `ws://localhost:${hotlinePort}/ws`;
  return `
npm() {
  if [ "$1" != run ]; then echo "npm $1 is not run by the README test" >&2; return 127; fi
  local script="$2"; shift 2
  [ "$1" = "--" ] && shift
  local file
  case "$script" in
${cases}
    *) echo "npm run $script is not emulated by the README test" >&2; return 127 ;;
  esac
  printf '\\n> %s@%s %s\\n> %s\\n\\n' ${JSON.stringify(name)} ${JSON.stringify(version)} "$script" "tsx $file\${*:+ $*}"
  local extra=()
  if [ "$script" = simulate ] && [ -n ${JSON.stringify(url)} ]; then
    case " $* " in *" --url "*|*" --webhook "*) ;; *) extra=(--url ${JSON.stringify(url)}) ;; esac
  fi
  # The product's code as compiled for the tests (test/setup/build.ts): the same code tsx would run.
  local built=${JSON.stringify(BUILT_DIR)}/"\${file#src/}"
  node "\${built%.ts}.js" "$@" "\${extra[@]}"
}
`;
}

/**
 * bash running `script`, in a process group of its own: the commands it starts (node under the npm
 * function, a pipeline's parts) are ended with it, never left running when a test is done.
 */
function spawnShell(script: string, options: { cwd: string; env: Record<string, string> }): { child: ChildProcess; kill: () => void } {
  const child = spawn('bash', ['-c', script], { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const kill = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  cleanups.push(kill);
  return { child, kill };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a README command in bash, in `cwd`, with `env` (on top of a clean environment). */
async function runCommand(command: string, options: { cwd: string; env?: Record<string, string>; prelude: string; timeoutMs?: number }): Promise<Ran> {
  const { child, kill } = spawnShell(`${options.prelude}\n${command}`, { cwd: options.cwd, env: options.env ?? {} });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (piece: string) => (stdout += piece));
  child.stderr!.setEncoding('utf8').on('data', (piece: string) => (stderr += piece));
  const timer = setTimeout(kill, options.timeoutMs ?? 45_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** One command's output against the README's, line by line; the failure names the README line that differs. */
function expectOutput(where: string, command: Command, actual: readonly string[], expected: readonly string[], stderr = ''): void {
  // As a terminal shows it: a CSV's CRLF line ends are line ends.
  const got = trimBlankEnd(actual.map((line) => line.replace(/\r$/, '')));
  const want = trimBlankEnd(expected);
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (got[i] === want[i]) continue;
    const readmeLine = command.line + 1 + Math.min(i, want.length) + command.text.split('\n').length - 1;
    expect.fail(
      `${where}, ${command.file}:${command.line} \`${command.text.split('\n')[0]}\`: output line ${i + 1} (${command.file}:${readmeLine}) differs\n` +
        `  README: ${want[i] === undefined ? '(no more lines)' : JSON.stringify(want[i])}\n` +
        `  actual: ${got[i] === undefined ? '(no more lines)' : JSON.stringify(got[i])}\n` +
        `--- README shows:\n${want.join('\n')}\n--- the command printed:\n${got.join('\n')}${stderr ? `\n--- stderr:\n${stderr}` : ''}`,
    );
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The simulator's times and the session ids change from run to run; the README says so. */
function maskRun(line: string): string {
  return line.replace(/\+\d+ ms +/g, '+… ms ').replace(UUID, '<id>').replace(/^(\[\d+\]) +/, '$1 ');
}

// ---------------------------------------------------------------------------------------------
// What each block is

interface Context {
  readonly blocks: readonly Block[];
}

type Run = (block: Block, context: Context) => Promise<void>;

interface Example {
  /** What the block is, for failures and the test's name. */
  readonly name: string;
  /** The block's first line starts with this (or matches it). */
  readonly first: string | RegExp;
  /** How it is run; or `notRun`, why it cannot be. */
  readonly run?: Run;
  readonly notRun?: string;
  /**
   * Run after the others on the same Hotline. The webhook walkthrough's answers depend on the model's
   * first sentence arriving within WEBHOOK_HOLD_MS; the first request of a process just started loads
   * code on demand, and on a loaded test machine that alone could cost the walkthrough its margin.
   */
  readonly late?: boolean;
}

function claims(example: Example, block: Block): boolean {
  const first = block.lines.find((l) => l.trim() !== '') ?? '';
  return typeof example.first === 'string' ? first.startsWith(example.first) : example.first.test(first);
}

/** The one block an example claims, read from the README now. */
function blockOf(context: Context, example: Example): Block {
  const found = context.blocks.filter((b) => claims(example, b));
  expect(found, `the README and docs/ have no block (or more than one) starting with ${String(example.first)}: ${example.name}`).toHaveLength(1);
  return found[0]!;
}

/** Hotlines shared by the examples that run against a plain `npm start`, and one with outbound calls configured. */
let plain: Started | undefined;
let plainPrelude = '';
let outbound: { hotline: Started; api: FakeAiFlowApi; token: string; prelude: string } | undefined;

async function plainHotline(): Promise<Started> {
  plain ??= await startHotline({});
  plainPrelude ||= await npmPrelude(plain.port);
  return plain;
}

/**
 * The Hotline with outbound calls; `fresh`: one of the example's own. Examples that place calls are
 * alternatives in the README ("or with any HTTP client"): each dials the same number, which Hotline
 * refuses while an earlier request for it still rings, so each places its calls on a Hotline of its own.
 */
async function outboundHotline(options: { fresh?: boolean } = {}): Promise<NonNullable<typeof outbound>> {
  if (outbound && !options.fresh) return outbound;
  const token = 'readme-admin-token';
  const api = await startFakeAiFlowApi({ token: 'readme-platform-token', defaultFlow: {} });
  cleanups.push(() => api.close());
  const hotline = await startHotline({
    ADMIN_TOKEN: token,
    AIFLOW_API_URL: api.url,
    AIFLOW_ACCESS_TOKEN: 'readme-platform-token',
    AIFLOW_ID: 'flow-1',
    AIFLOW_BILLING_DEVICE: 'dev-1',
  });
  const started = { hotline, api, token, prelude: await npmPrelude(hotline.port) };
  if (!options.fresh) outbound = started;
  return started;
}

/** Runs every command of the block against `hotline`, comparing each output. */
async function runCommands(
  block: Block,
  where: string,
  options: { hotlinePort: number; prelude: string; env?: Record<string, string>; mask?: (line: string) => string; cwd?: string; pauseMs?: number },
): Promise<void> {
  const ports = { 3000: options.hotlinePort };
  const cwd = options.cwd ?? (await workFolder());
  const mask = options.mask ?? ((line: string) => line);
  for (const [i, command] of commandsOf(block).entries()) {
    // A person's pace: what they see depends on how far Hotline got meanwhile, which no event of theirs marks.
    if (i > 0 && options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    const ran = await runCommand(withPorts(command.text, ports), { cwd, prelude: options.prelude, env: { BOT_URL: `http://localhost:${options.hotlinePort}`, ...options.env } });
    expectOutput(where, command, ran.stdout.split('\n').map(mask), command.expected.map((l) => mask(withPorts(l, ports))), ran.stderr);
  }
}

const EXAMPLES: Example[] = [
  {
    name: 'quick start: npm ci, npm start',
    first: 'npm ci',
    notRun: 'installs the packages and starts Hotline: the test suite runs after `npm ci`, and every example here runs against Hotline started as `npm start` starts it',
  },
  {
    name: 'the first npm start, on a terminal',
    first: '$ npm start',
    run: async (block) => runStartOnATerminal(block),
  },
  {
    name: 'the startup message as a JSON line',
    first: '{"level":30,"service":"hotline","msg":"Hotline is listening',
    run: async (block) => {
      const hotline = await plainHotline();
      const actual = JSON.parse(await hotline.line(/Hotline is listening/)) as Record<string, unknown>;
      // The page shows some of the line's fields ("left out here"): each one shown must be there, as shown.
      const shown = JSON.parse(withPorts(block.lines.join('\n'), { 3000: hotline.port })) as Record<string, unknown>;
      for (const [key, value] of Object.entries(shown)) expect(actual[key], `${block.file}:${block.line}: the field ${key}`).toEqual(value);
    },
  },
  {
    name: 'a real LLM: OpenAI, Ollama',
    first: 'OPENAI_API_KEY=sk-... LLM_MODEL=gpt-4o-mini npm start',
    notRun: 'needs a real LLM and its key; tests never call one (the same start with the demo model is run here)',
  },
  {
    name: 'the dashboard turned on',
    first: 'export ADMIN_TOKEN=$(openssl rand -hex 16)',
    run: async (block) => {
      const port = await freePort();
      const data = await tempFolder('hotline-readme-data-');
      // npm start as the test starts it (the compiled product), with the token the commands make.
      const command = block.lines.join('\n').replace(/\bnpm start\s*$/m, `node ${JSON.stringify(path.join(BUILT_DIR, 'main.js'))}`);
      const { child } = spawnShell(command, { cwd: await workFolder(), env: { PORT: String(port), TRANSCRIPTS_DIR: data, DATABASE_FILE: path.join(data, 'hotline.db') } });
      const started = watch(child);
      const listening = JSON.parse(await started.line(/Hotline is listening/)) as { msg: string };
      expect(listening.msg.split('\n'), `${block.file}:${block.line}: the start names the dashboard`).toContain(`  Dashboard: http://localhost:${port}/dashboard/`);
      expect(started.stdout().split('\n')[0], `${block.file}:${block.line}: the token is printed to sign in with`).toMatch(/^[0-9a-f]{32}$/);
      expect(started.stdout(), `${block.file}:${block.line}: a token of openssl rand -hex 16 is strong enough`).not.toMatch(/ADMIN_TOKEN is \d+ characters? long/);
    },
  },
  { name: 'a call placed, in short', first: 'npm run call -- +49 151 1234567 --var name=Anna', notRun: 'the same command is run, with its output, where docs/outbound-and-campaigns.md shows it' },
  {
    name: 'the webhook with curl',
    first: '$ curl -s -X POST localhost:3000/webhook',
    late: true,
    run: async (block) => {
      const hotline = await plainHotline();
      // Pasted one at a time, a few seconds apart, as the page tells the reader to.
      await runCommands(block, `the webhook walkthrough (${block.file}:${block.line})`, { hotlinePort: hotline.port, prelude: plainPrelude, pauseMs: 3000 });
    },
  },
  {
    name: 'npm run prompts:check',
    first: '$ npm run prompts:check',
    run: async (block) => {
      const prelude = await npmPrelude(undefined);
      // The folder's path is the reader's own: the README shows /path/to/hotline.
      const mask = (line: string) => line.replace(/^prompts in .*\/prompts$/, 'prompts in /path/to/hotline/prompts');
      for (const command of commandsOf(block)) {
        const ran = await runCommand(command.text, { cwd: await workFolder(), prelude });
        expectOutput(`prompts:check (${block.file}:${block.line})`, command, ran.stdout.split('\n').map(mask), command.expected, ran.stderr);
      }
    },
  },
  {
    name: 'a first knowledge base',
    first: /^\$ printf '## Parking/,
    run: async (block) => {
      // A copy of the shipped prompts, for the new document to go into, and a store of its own.
      const cwd = await tempFolder('hotline-readme-knowledge-');
      await cp(path.join(repoRoot, 'prompts'), path.join(cwd, 'prompts'), { recursive: true });
      const env = { PROMPTS_DIR: path.join(cwd, 'prompts'), DATABASE_FILE: path.join(cwd, 'hotline.db') };
      const prelude = await npmPrelude(undefined);
      for (const command of commandsOf(block)) {
        const ran = await runCommand(command.text, { cwd, prelude, env });
        expect(ran.code, `${block.file}:${command.line}: ${ran.stderr}`).toBe(0);
        expectOutput(`a first knowledge base (${block.file}:${block.line})`, command, ran.stdout.split('\n'), command.expected, ran.stderr);
      }
    },
  },
  {
    name: 'the note a turn is given',
    first: 'Do you deliver to Potsdam?',
    notRun: 'an illustration with elided passages (…); knowledge.test.ts checks the exact note on both stores',
  },
  {
    name: 'the note when nothing matches',
    first: /^\[From the business's documents: nothing matches/,
    run: async (block) => expect(block.lines.join('\n').trim(), `${block.file}:${block.line}`).toBe(NOTHING_MARK),
  },
  {
    name: 'the knowledge CLI',
    first: 'npm run knowledge -- search "do you deliver to Potsdam"',
    notRun: 'a synopsis of the two commands; knowledge-cli.test.ts runs both on both stores, and the README runs search as written',
  },
  {
    name: 'front matter of system.md and report.md',
    first: /^---$/,
    // A file to write: written into a copy of the shipped folder, it must pass prompts:check.
    run: async (block) => {
      // A text message's template (prompts/sms/): loaded as Hotline loads that folder, with no problem and its description.
      if (block.lines.some((l) => /^description:/.test(l))) {
        const folder = await tempFolder('hotline-readme-sms-');
        await mkdir(path.join(folder, 'sms'));
        await writeFile(path.join(folder, 'sms', 'order-status.md'), `${block.lines.join('\n')}\n`);
        const templates = await readSmsTemplates(folder);
        expect(templates.problems, `${block.file}:${block.line}`).toEqual([]);
        expect(templates.defaults.get('order-status')?.description, `${block.file}:${block.line}`).toMatch(/^An order's number/);
        return;
      }
      const report = block.lines.some((l) => /^fields:/.test(l));
      const closing = block.lines.indexOf('---', 1);
      const frontMatterOnly = closing === block.lines.length - 1;
      await checkFileExample(block, report ? 'report.md' : 'system.md', async (shipped) =>
        frontMatterOnly ? `${block.lines.join('\n')}\n${shipped.replace(/^---\n[\s\S]*?\n---\n/, '')}` : `${block.lines.join('\n')}\n`,
      );
    },
  },
  {
    name: 'a language folder, drawn',
    first: 'prompts/',
    notRun: 'a picture of the folder; languages.test.ts runs calls on such a folder over both transports',
  },
  {
    name: "prompts:check's lines of a language folder and languages.yaml",
    first: /^de\/: German: /,
    run: async (block) => {
      const ran = await runCommand('npm run prompts:check', { cwd: await workFolder(), prelude: await npmPrelude(undefined) });
      const lines = ran.stdout.split('\n');
      for (const line of block.lines) expect(lines, `${block.file}:${block.line}: prompts:check of the shipped folder does not print it`).toContain(line);
    },
  },
  {
    name: 'a configure_transcription action',
    first: '{"type":"configure_transcription"',
    run: async (block) => {
      const action: unknown = JSON.parse(block.lines.join('\n'));
      expect(ActionSchema.safeParse(action).error, `${block.file}:${block.line}`).toBeUndefined();
    },
  },
  {
    name: 'pronunciations.yaml',
    first: /^descaler: dee scaler/,
    run: async (block) => checkFileExample(block, 'pronunciations.yaml'),
  },
  {
    name: 'languages.yaml',
    first: /^default: en +#/,
    run: async (block) => checkFileExample(block, 'languages.yaml'),
  },
  {
    name: 'an HTTP tool file',
    first: '# prompts/tools/book_appointment.yaml',
    run: async (block) => checkFileExample(block, 'tools/book_appointment.yaml'),
  },
  {
    name: 'mcp.yaml',
    first: 'servers:',
    // Checked as prompts:check checks it; its servers are the reader's calendar server and CRM, which
    // prompts:check starts or connects to: that they cannot be reached here is no problem of the file.
    run: async (block) => checkFileExample(block, 'tools/mcp.yaml', undefined, /^error: MCP server (calendar|crm) could not be reached /),
  },
  {
    name: 'context.yaml',
    first: 'request:',
    // Checked as prompts:check checks it; the request would go to the reader's CRM.
    run: async (block) => checkFileExample(block, 'tools/context.yaml'),
  },
  {
    name: 'the demo order tool in the simulator',
    first: 'you: where is my order 4711',
    run: async (block) => {
      await plainHotline();
      // The block shows what the simulator prints for the typed line: the same line piped in, the rest of the output around it.
      const command: Command = { file: block.file, line: block.line, text: "printf 'where is my order 4711\\n' | npm run simulate", expected: block.lines };
      const ran = await runCommand(command.text, { cwd: await workFolder(), prelude: plainPrelude });
      const lines = ran.stdout.split('\n').map(maskRun);
      const start = lines.indexOf(maskRun(block.lines[0]!));
      expect(start, `${block.file}:${block.line}: the simulator never printed ${JSON.stringify(block.lines[0])}:\n${ran.stdout}${ran.stderr}`).toBeGreaterThanOrEqual(0);
      expectOutput(`the order tool (${block.file}:${block.line})`, command, lines.slice(start, start + block.lines.length), block.lines.map(maskRun), ran.stderr);
    },
  },
  {
    name: "outbound calls' configuration",
    first: 'ADMIN_TOKEN=a-long-random-string',
    notRun: "placeholders for the reader's own account; the examples after it run with the same variables set to a fake of the service's API",
  },
  {
    name: 'npm run call',
    first: '$ npm run call -- +49 151 1234567',
    run: async (block) => {
      const { hotline, token, prelude } = await outboundHotline({ fresh: true });
      await runCommands(block, `npm run call (${block.file}:${block.line})`, { hotlinePort: hotline.port, prelude, env: { ADMIN_TOKEN: token } });
    },
  },
  {
    name: 'POST /api/calls with curl',
    first: '$ curl -s -X POST localhost:3000/api/calls -H',
    run: async (block) => {
      const { hotline, token, prelude } = await outboundHotline({ fresh: true });
      await runCommands(block, `POST /api/calls (${block.file}:${block.line})`, { hotlinePort: hotline.port, prelude, env: { ADMIN_TOKEN: token } });
    },
  },
  {
    name: 'a number already in a call',
    first: '{"error":"491511234567 is already in a call',
    run: async (block, context) => {
      // The curl example's request sent twice: the second finds the first still ringing.
      const [curl] = commandsOf(blockOf(context, EXAMPLES.find((e) => e.name === 'POST /api/calls with curl')!));
      const { hotline, token, prelude } = await outboundHotline({ fresh: true });
      const env = { ADMIN_TOKEN: token };
      const command = withPorts(curl!.text, { 3000: hotline.port });
      await runCommand(command, { cwd: await workFolder(), prelude, env });
      const again = await runCommand(command, { cwd: await workFolder(), prelude, env });
      expectOutput(`a number already in a call (${block.file}:${block.line})`, { file: block.file, line: block.line, text: curl!.text, expected: block.lines }, again.stdout.split('\n'), block.lines, again.stderr);
    },
  },
  {
    name: 'npm run call --csv',
    first: '$ cat contacts.csv',
    run: async (block) => {
      const { hotline, token, prelude } = await outboundHotline({ fresh: true });
      const [cat] = commandsOf(block);
      // The file the example reads is the one it shows.
      const cwd = await workFolder();
      await writeFile(path.join(cwd, 'contacts.csv'), `${cat!.expected.join('\n')}\n`);
      await runCommands(block, `npm run call --csv (${block.file}:${block.line})`, { hotlinePort: hotline.port, prelude, env: { ADMIN_TOKEN: token }, cwd });
    },
  },
  {
    name: 'the data CLI',
    first: 'npm run data -- export --number "+49 151 1234567" --out access-request.json',
    // Each line as written, in a folder without .env, on a store of its own (empty: data-cli.test.ts runs these commands
    // against a store holding two callers' calls). What is checked: that each works as written — the national number too.
    run: async (block) => {
      const cwd = await workFolder();
      const data = await tempFolder('hotline-readme-data-');
      const prelude = await npmPrelude(undefined);
      for (const [i, line] of block.lines.entries()) {
        if (line.trim() === '') continue;
        const ran = await runCommand(line, { cwd, prelude, env: { TRANSCRIPTS_DIR: data } });
        expect(ran.code, `${block.file}:${block.line + 1 + i} \`${line}\` failed:\n${ran.stdout}${ran.stderr}`).toBe(0);
      }
    },
  },
  { name: 'the people API with curl', first: 'curl -X POST http://localhost:3000/api/people/export', notRun: 'needs a person with calls in the store; person-data.test.ts sends these requests to a real Hotline after real calls' },
  { name: 'the staff CLI', first: 'npm run staff -- add --name anna --role operator --generate   # prints a password once: hand it over safely', notRun: 'changes accounts in the reader’s store; staff.test.ts runs each of these commands against a store of its own' },
  {
    name: 'the report walkthrough: the receiver',
    first: '$ REPORT_WEBHOOK_SECRET=report-walkthrough-secret node examples/report-receiver.mjs',
    run: async (_block, context) => runReportWalkthrough(context),
  },
  { name: 'the report walkthrough: Hotline and a call', first: '$ REPORT_WEBHOOK_URL=', run: async () => undefined },
  { name: 'the signature headers', first: 'X-Hotline-Delivery:', notRun: 'an illustration of three headers; report-delivery.test.ts checks them on real deliveries' },
  { name: "a report's body", first: /^\{$/, notRun: 'an illustration with elided parts (…); reports.test.ts checks every key on real reports' },
  { name: 'a campaign definition', first: 'name: spring check-in', notRun: 'a definition with a CSV file the reader has; campaigns.test.ts creates campaigns from the same shape' },
  { name: 'the campaign CLI', first: 'npm run campaign -- start <campaign.yaml|json>', notRun: 'a synopsis of the commands, not a command to run' },
  {
    name: 'a campaign definition with problems',
    first: '$ cat campaigns/spring.yaml',
    run: async (block) => {
      const { hotline, token, prelude } = await outboundHotline();
      const [cat] = commandsOf(block);
      // The file the example reads is the one it shows, in a project folder the README calls /srv/hotline.
      const cwd = await workFolder();
      await mkdir(path.join(cwd, 'campaigns'));
      await writeFile(path.join(cwd, 'campaigns', 'spring.yaml'), `${cat!.expected.join('\n')}\n`);
      const mask = (line: string) => line.replaceAll(cwd, '/srv/hotline');
      await runCommands(block, `a campaign with problems (${block.file}:${block.line})`, { hotlinePort: hotline.port, prelude, env: { ADMIN_TOKEN: token }, cwd, mask });
    },
  },
  {
    name: 'the campaign walkthrough: emulator and Hotline',
    first: '$ npm run simulate -- --platform --port 4400',
    run: async (_block, context) => runCampaignWalkthrough(context),
  },
  { name: 'the walkthrough campaign', first: '# examples/spring.yaml', run: async () => undefined },
  { name: 'the campaign walkthrough: the commands', first: '$ npm run campaign -- start examples/spring.yaml', run: async () => undefined },
  {
    name: 'the admin API: list the calls, transfer or hang up one',
    first: '$ curl -s localhost:3000/api/calls -H',
    run: async (block) => {
      // Only ADMIN_TOKEN, as the README's configuration sets it: no transfer target of the test's own.
      const { hotline, token, prelude } = await outboundHotline();
      const cwd = await workFolder();
      // What differs from call to call and machine to machine: the session id, the time, the phase, the replica's name.
      const mask = (line: string) =>
        line
          .replace(/"sessionId":"[^"]*"/g, '"sessionId":"<id>"')
          .replace(/"startedAt":"[^"]*"/g, '"startedAt":"<time>"')
          .replace(/"phase":"(greeting|listening|speaking)"/g, '"phase":"<phase>"')
          .replace(/"replica":"[^"]*"/g, '"replica":"<replica>"');
      // Each command acts on a call in progress: one is started for each, as the service would.
      for (const command of commandsOf(block)) {
        const service = await FakeVoiceService.connect(`ws://127.0.0.1:${hotline.port}/ws`);
        cleanups.push(() => service.close());
        service.start();
        await service.nextOfType('speak');
        const ran = await runCommand(withPorts(command.text, { 3000: hotline.port }), { cwd, prelude, env: { ADMIN_TOKEN: token, SESSION_ID: service.sessionId } });
        expectOutput(`the admin API (${block.file}:${block.line})`, command, ran.stdout.split('\n').map(mask), command.expected.map(mask), ran.stderr);
        service.end('hangup');
        await service.closed;
      }
    },
  },
  {
    name: 'npm run simulate, piped',
    first: "$ printf 'What are your opening hours?",
    run: async (block) => {
      const hotline = await plainHotline();
      await runCommands(block, `npm run simulate (${block.file}:${block.line})`, { hotlinePort: hotline.port, prelude: plainPrelude, mask: maskRun });
    },
  },
  {
    name: 'the outbound flow on one machine: the emulator',
    first: "$ printf 'Yes, now is a good time.",
    run: async (_block, context) => runOutboundFlow(context),
  },
  { name: 'the outbound flow on one machine: Hotline', first: '$ ADMIN_TOKEN=outbound-walkthrough-admin AIFLOW_API_URL=http://localhost:4000', run: async () => undefined },
  { name: 'the outbound flow on one machine: the call', first: '$ ADMIN_TOKEN=outbound-walkthrough-admin npm run call', run: async () => undefined },
  { name: 'the outbound flow on one machine: what the emulator shows', first: '> hotline@0.1.0 simulate', run: async () => undefined },
  { name: 'a scenario', first: 'name: barge-in', notRun: 'a scenario file: npm run scenarios (scenarios.test.ts) runs the shipped ones, this one among them (scenarios/barge-in.yaml)' },
  { name: 'a scenario with tools', first: 'tools:', notRun: 'an excerpt of scenarios/tools.yaml, which scenarios.test.ts runs' },
  {
    name: 'an eval file',
    first: 'name: order-status',
    // Not played (the shipped prompts/evals/order-status.yaml is, by eval.test.ts), but it must be an eval as written.
    run: async (block) => {
      expect(parseEval(block.lines.join('\n'), 'README.md').caller.max_turns).toBe(6);
    },
  },
  { name: 'an eval against Ollama', first: 'ollama pull', notRun: 'needs Ollama and its models; eval.test.ts runs npm run eval against an OpenAI-compatible server' },
  { name: 'transcript lines', first: '{"ts":', notRun: 'an illustration with elided numbers (…); transcripts.test.ts checks real transcripts' },
  {
    name: 'npm run db',
    first: 'npm run db -- status     # schema version, calls (and in progress), reports, deliveries, campaigns, the write queue',
    notRun: 'the store commands with a PostgreSQL server of the reader\'s; db-cli.test.ts runs each of them, the move from SQLite to PostgreSQL too',
  },
  { name: 'npm run bench', first: 'npm run bench', notRun: 'takes minutes and measures the machine; bench-stats.test.ts covers its arithmetic' },
  { name: 'development commands', first: 'npm run typecheck', notRun: 'the commands of development (typecheck, test, bench, scenarios, soak, dev, start): each is run by its own tests or is the test run itself' },
  { name: 'the source tree', first: 'bench/, soak/', notRun: 'a map of the folders, not a command' },
  { name: 'the order of the features', first: 'call files (and the language detector, loading) → model', notRun: 'a diagram of docs/architecture.md; failed-start.test.ts and the shutdown tests check the order' },
  { name: 'a second Hotline on one SQLite file', first: 'DATABASE_FILE /srv/hotline/data/hotline.db is in use', notRun: 'an error as a reader sees it, with elided parts (…); startup.test.ts starts a second Hotline on one file and checks the message' },
  { name: 'Docker', first: 'docker build -t hotline .', notRun: 'needs Docker, which the test machines do not have' },
];

/**
 * A file example, written where it belongs into a copy of the shipped prompts folder (with the
 * `${NAME}` variables it names set), must pass `npm run prompts:check`: it is listed, with no
 * problem of its own. `content` makes the file from the shipped one it replaces.
 */
async function checkFileExample(
  block: Block,
  file: string,
  content?: (shipped: string) => Promise<string> | string,
  elsewhere?: RegExp,
): Promise<void> {
  const folder = await tempFolder('hotline-readme-prompts-');
  await cp(path.join(repoRoot, 'prompts'), folder, { recursive: true });
  const target = path.join(folder, file);
  await mkdir(path.dirname(target), { recursive: true });
  const shipped = await readFile(target, 'utf8').catch(() => '');
  await writeFile(target, content ? await content(shipped) : `${block.lines.join('\n')}\n`);
  const names = [...new Set([...block.lines.join('\n').matchAll(/\$\{([A-Z][A-Z0-9_]*)\}/g)].map((m) => m[1]!))];
  const env = Object.fromEntries(names.map((name) => [name, name.endsWith('_URL') ? 'https://example.com' : 'an-example-value']));
  const ran = await runCommand(`npm run prompts:check -- ${JSON.stringify(folder)}`, { cwd: await workFolder(), prelude: await npmPrelude(undefined), env });
  const lines = ran.stdout.split('\n');
  const at = lines.findIndex((line) => line.startsWith(`${file}: `));
  expect(at, `${block.file}:${block.line} (${file}): prompts:check does not list it:\n${ran.stdout}${ran.stderr}`).toBeGreaterThanOrEqual(0);
  const problems: string[] = [];
  for (let i = at + 1; i < lines.length && lines[i]!.startsWith('  '); i++) problems.push(lines[i]!.trim());
  // `elsewhere`: problems of what the file names (a server of the reader's), not of the file.
  if (elsewhere) problems.splice(0, problems.length, ...problems.filter((problem) => !elsewhere.test(problem)));
  expect(problems, `${block.file}:${block.line} (under "${block.heading}"), written as ${file}: prompts:check finds problems`).toEqual([]);
}

/**
 * The outbound flow on one machine, as the README tells it in three terminals: the emulator with
 * the person's lines piped in, Hotline pointed at it, and the call; the emulator's output is compared.
 */
async function runOutboundFlow(context: Context): Promise<void> {
  const find = (name: string) => blockOf(context, EXAMPLES.find((e) => e.name === name)!);
  const emulatorBlock = find('the outbound flow on one machine: the emulator');
  const hotlineBlock = find('the outbound flow on one machine: Hotline');
  const callBlock = find('the outbound flow on one machine: the call');
  const shown = find('the outbound flow on one machine: what the emulator shows');
  const ports: Ports = { 3000: await freePort(), 4000: await freePort() };
  const prelude = await npmPrelude(ports[3000]);
  const cwd = await workFolder();
  const env = { BOT_URL: `http://localhost:${ports[3000]}` };

  // Terminal 1: the emulator, waiting for the call.
  const [emulatorCommand] = commandsOf(emulatorBlock);
  const { child: emulator } = spawnShell(`${prelude}\n${withPorts(emulatorCommand!.text, ports)}`, { cwd, env });
  const emulated = watch(emulator);
  await emulated.line(/placed calls ring Hotline/);

  // Terminal 2: Hotline, with the variables the README sets.
  const [start] = commandsOf(hotlineBlock);
  await startHotline(envOfStart(start!), ports);

  // Terminal 3: the call.
  const [call] = commandsOf(callBlock);
  const placed = await runCommand(withPorts(call!.text, ports), { cwd, prelude, env });
  expectOutput(`the call (${callBlock.file}:${callBlock.line})`, call!, placed.stdout.split('\n'), call!.expected.map((l) => withPorts(l, ports)), placed.stderr);

  // Terminal 1 shows the call and exits 0 when it is over.
  const code = await Promise.race([emulated.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running after 45 s'), 45_000))]);
  expect(code, `the emulator (${emulatorBlock.file}:${emulatorBlock.line}):\n${emulated.stdout()}${emulated.stderr()}`).toBe(0);
  const expected = shown.lines.map((l) => maskRun(withPorts(l, ports)));
  expectOutput(
    `the emulator's output (${shown.file}:${shown.line})`,
    { file: shown.file, line: shown.line, text: emulatorCommand!.text, expected },
    // The block shows the terminal from npm's header on.
    emulated.stdout().replace(/^\n+/, '').split('\n').map(maskRun),
    expected,
    emulated.stderr(),
  );
}

/**
 * `npm start` as a reader runs it the first time, on a terminal: in a copy of the project (its dist/
 * empty, node_modules a link to this one's) under `script`, which gives it a terminal, so the log is
 * pino-pretty's lines and the launcher's. The colours are taken out; times, the count of files and the
 * compile's seconds are masked; a line `…` on the page stands for any lines left out there.
 */
async function runStartOnATerminal(block: Block): Promise<void> {
  const [command] = commandsOf(block);
  const project = await tempFolder('hotline-readme-start-');
  for (const part of PROJECT_TO_START) await cp(path.join(repoRoot, part), path.join(project, part), { recursive: true });
  for (const part of ['node_modules', 'prompts']) await symlink(path.join(repoRoot, part), path.join(project, part));
  const port = await freePort();
  const data = await tempFolder('hotline-readme-data-');
  const { child, kill } = spawnShell(`script -qec ${JSON.stringify(command!.text)} /dev/null`, {
    cwd: project,
    env: { PORT: String(port), TRANSCRIPTS_DIR: data, TERM: 'xterm' },
  });
  const started = watch(child);
  await started.line(/Dashboard: /);
  kill();
  // What the terminal shows of a line: npm's spinner (`⠙`, then back to column 1 and the line cleared)
  // and any text a carriage return went back over are gone; colours are taken out.
  const plain = (line: string) =>
    line
      .replace(/\r$/, '')
      .split(/\x1b\[1?G|\r/)
      .at(-1)!
      .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  const mask = (line: string) =>
    line
      .replace(/^\[\d\d:\d\d:\d\d\.\d{3}\]/, '[hh:mm:ss.mmm]')
      .replace(/compiled \d+ files in [\d.]+ s/, 'compiled N files in N s');
  // A part of the start that takes over a second says so (`still starting: …`, then `…: done in`): on a
  // busy machine only, as the page says; the lines it shows are the ones a quick start prints.
  const slowOnly = /^\[hh:mm:ss\.mmm\] INFO: (still starting: |.*: done in [\d.]+ s$)/;
  const actual: string[] = [];
  let dropping = false;
  for (const line of started.stdout().split('\n').map((l) => mask(plain(l)))) {
    // Such a line goes with its fields, pino-pretty's indented lines under it.
    dropping = slowOnly.test(line) || (dropping && line.startsWith('    '));
    if (!dropping) actual.push(line);
  }
  const expected = command!.expected.map((line) => mask(withPorts(line, { 3000: port })));
  // Walk the page's lines: each must be the next line printed, but `…` skips to the line after it.
  let at = 0;
  for (const [i, want] of expected.entries()) {
    if (want === '…') continue;
    const skipping = expected[i - 1] === '…';
    const found = skipping ? actual.indexOf(want, at) : actual[at] === want ? at : -1;
    if (found < 0) {
      expect.fail(
        `${block.file}:${command!.line + 1 + i}: ${JSON.stringify(want)} is not ${skipping ? 'among the lines printed after' : 'the line printed after'} ${JSON.stringify(actual[at - 1] ?? '(the start)')}\n` +
          `--- the terminal showed:\n${actual.join('\n')}\n--- stderr:\n${started.stderr()}`,
      );
    }
    at = found + 1;
  }
}

/**
 * The report walkthrough, in three terminals: the shipped receiver, Hotline sending it the reports,
 * and a call. What the receiver prints is compared, the session and the call's duration masked.
 */
async function runReportWalkthrough(context: Context): Promise<void> {
  const find = (name: string) => blockOf(context, EXAMPLES.find((e) => e.name === name)!);
  const receiverBlock = find('the report walkthrough: the receiver');
  const rest = find('the report walkthrough: Hotline and a call');
  const ports: Ports = { 3000: await freePort(), 4500: await freePort() };
  const cwd = await workFolder();
  const [receiverCommand] = commandsOf(receiverBlock);
  const [start, call] = commandsOf(rest);
  expect(call, `${rest.file}:${rest.line}: Hotline's start, then the call`).toBeDefined();

  // The receiver reads PORT (4500 by default, the page's): here a free one.
  const { child } = spawnShell(withPorts(receiverCommand!.text, ports), { cwd, env: { PORT: String(ports[4500]) } });
  const receiver = watch(child);
  await receiver.line(/receiving reports on/);
  await startHotline(envOfStart(start!), ports);
  const ran = await runCommand(call!.text, { cwd, prelude: await npmPrelude(ports[3000]) });
  expect(ran.code, `${rest.file}:${call!.line}: the call failed:\n${ran.stdout}${ran.stderr}`).toBe(0);
  await receiver.line(/^ {2}fields:/);

  const mask = (line: string) => line.replace(UUID, '<id>').replace(/after \d+ s/, 'after … s');
  const expected = receiverCommand!.expected.map((line) => mask(withPorts(line, ports)));
  expectOutput(`the report receiver (${receiverBlock.file}:${receiverBlock.line})`, receiverCommand!, receiver.stdout().split('\n').map(mask), expected, receiver.stderr());
}

/**
 * The campaign on one machine: the emulator playing every person from a script, Hotline pointed at
 * it, spring.yaml and its people.csv, then the commands. About a minute of real time: an unanswered
 * number is tried three times, 15 s apart, each attempt waiting 10 s for an answer.
 *
 * What is compared: the start's line and the results as the README shows them (ids masked), and
 * the --watch lines' last one. The lines before it depend on how the calls interleave: each is
 * compared in its shape (every number masked) with the README's.
 */
async function runCampaignWalkthrough(context: Context): Promise<void> {
  const find = (name: string) => blockOf(context, EXAMPLES.find((e) => e.name === name)!);
  const setup = find('the campaign walkthrough: emulator and Hotline');
  const definition = find('the walkthrough campaign');
  const shown = find('the campaign walkthrough: the commands');
  const ports: Ports = { 3300: await freePort(), 4400: await freePort() };
  const prelude = await npmPrelude(ports[3300]);
  const cwd = await workFolder();
  const [emulatorCommand, startCommand] = commandsOf(setup);
  expect(startCommand, `${setup.file}:${setup.line}: the emulator's command, then Hotline's`).toBeDefined();

  // It plays the people called until it is stopped (Ctrl-C in the README): ended with the test.
  const { child: emulator, kill: stopEmulator } = spawnShell(`${prelude}\n${withPorts(emulatorCommand!.text, ports)}`, { cwd, env: {} });
  onTestFinished(stopEmulator);
  await watch(emulator).line(/placed calls ring Hotline/);
  const hotlineVars = envOfStart(startCommand!);
  await startHotline(hotlineVars, ports);

  // The files the walkthrough names ship in examples/ (linked into the folder the commands run in): the
  // page shows spring.yaml as it is, and the results it shows are of the people in people.csv.
  const shipped = await readFile(path.join(repoRoot, 'examples', 'spring.yaml'), 'utf8');
  expect(`${definition.lines.join('\n')}\n`, `${definition.file}:${definition.line}: examples/spring.yaml as shipped`).toBe(shipped);
  const commands = commandsOf(shown);
  const results = commands.find((c) => /\bresults\b/.test(c.text));
  expect(results, `${shown.file}:${shown.line}: a results command`).toBeDefined();
  const rows = results!.expected.slice(1).map((line) => line.split(','));
  const people = rows.map((row) => `+49 151 ${row[0]!.slice(-7)},${row.at(-2)},${row.at(-1)}`);
  expect(await readFile(path.join(repoRoot, 'examples', 'people.csv'), 'utf8'), 'examples/people.csv: the people of the results shown').toBe(`phone,name,topic\n${people.join('\n')}\n`);

  // The README's commands print without npm's header (pasted so); the id is the one the start printed.
  const env = { BOT_URL: `http://localhost:${ports[3300]}`, ADMIN_TOKEN: hotlineVars.ADMIN_TOKEN ?? '' };
  const withoutHeader = (out: string) => out.replace(/^\n> [^\n]*\n> [^\n]*\n\n/, '').split('\n');
  const shownId = UUID.exec(commands[0]!.expected.join('\n'))?.[0];
  UUID.lastIndex = 0;
  let id = '';
  for (const command of commands) {
    const text = shownId && id ? command.text.replaceAll(shownId, id) : command.text;
    const ran = await runCommand(text, { cwd, prelude, env, timeoutMs: 180_000 });
    const where = `the campaign walkthrough (${shown.file}:${shown.line})`;
    const actual = withoutHeader(ran.stdout);
    if (!id) {
      id = /campaign ([0-9a-f-]{36}) started/.exec(ran.stdout)?.[1] ?? '';
      expect(id, `${where}: the start printed no campaign id:\n${ran.stdout}${ran.stderr}`).not.toBe('');
    }
    if (!/--watch/.test(command.text)) {
      expectOutput(where, command, actual.map((l) => l.replace(UUID, '<id>')), command.expected.map((l) => l.replace(UUID, '<id>')), ran.stderr);
      continue;
    }
    const shape = (line: string) => line.replace(/\d+/g, 'N');
    const shapes = new Set(command.expected.map(shape));
    const got = trimBlankEnd(actual);
    for (const line of got) {
      expect(shapes.has(shape(line)), `${where}: a --watch line of a shape the README does not show: ${JSON.stringify(line)}\n${got.join('\n')}`).toBe(true);
    }
    expect(got.at(-1), `${where}: the last --watch line`).toBe(command.expected.at(-1));
  }
}

let context: Context;
beforeAll(async () => {
  const docs = (await readdir(path.join(repoRoot, 'docs'))).filter((f) => f.endsWith('.md')).sort();
  const files = ['README.md', ...docs.map((f) => `docs/${f}`)];
  const blocks = await Promise.all(files.map(async (file) => readmeBlocks(await readFile(path.join(repoRoot, file), 'utf8'), file)));
  context = { blocks: blocks.flat() };
});

describe('the examples of README.md and docs/', () => {
  test('every block is run here, or marked not runnable with the reason', () => {
    const problems: string[] = [];
    for (const block of context.blocks) {
      const by = EXAMPLES.filter((e) => claims(e, block));
      const first = block.lines.find((l) => l.trim() !== '') ?? '';
      if (by.length === 0) {
        problems.push(
          `${block.file}:${block.line} (under "${block.heading}", starting ${JSON.stringify(first.slice(0, 70))}): a new example no test runs — ` +
            'add it to EXAMPLES in test/readme-examples.test.ts with how it is run, or mark it notRun with the reason',
        );
      }
    }
    for (const example of EXAMPLES) {
      if (!context.blocks.some((b) => claims(example, b))) problems.push(`no block of the README or docs/ starts with ${String(example.first)} any more (${example.name}): update EXAMPLES`);
    }
    expect(problems).toEqual([]);
  });

  for (const example of [...EXAMPLES.filter((e) => !e.late), ...EXAMPLES.filter((e) => e.late)]) {
    if (!example.run) continue;
    test(example.name, { timeout: 4 * CHILD_TEST_TIMEOUT_MS }, async () => {
      const blocks = context.blocks.filter((b) => claims(example, b));
      expect(blocks.length, `no block of the README or docs/ starts with ${String(example.first)} (${example.name})`).toBeGreaterThan(0);
      for (const block of blocks) await example.run!(block, context);
    });
  }
});
