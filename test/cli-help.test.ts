import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { childEnv, isolatedCwd, repoRoot, tsxArgs } from './helpers/child-process.js';

/** Every npm script with a command line: the script name users type, and its file. */
const COMMANDS = [
  { name: 'bench', file: 'bench/main.ts' },
  { name: 'soak', file: 'soak/main.ts' },
  { name: 'prompts:check', file: 'src/cli/prompts-check.ts' },
  { name: 'call', file: 'src/cli/call.ts' },
  { name: 'campaign', file: 'src/cli/campaign.ts' },
  { name: 'simulate', file: 'src/cli/simulate.ts' },
  { name: 'scenarios', file: 'src/cli/scenarios.ts' },
  { name: 'data', file: 'src/cli/data.ts' },
  { name: 'staff', file: 'src/cli/staff.ts' },
  { name: 'knowledge', file: 'src/cli/knowledge.ts' },
  { name: 'config:docs', file: 'src/cli/config-docs.ts' },
  { name: 'start', file: 'src/main.ts' },
] as const;

/** Malformed values of numeric options (and of a URL option): refused before any work, like an unknown option. */
const BAD_NUMBERS = [
  { name: 'bench', file: 'bench/main.ts', args: ['--calls', 'abc'], flag: '--calls' },
  { name: 'bench', file: 'bench/main.ts', args: ['--postgres', 'mysql://127.0.0.1/hotline'], flag: '--postgres' },
  { name: 'soak', file: 'soak/main.ts', args: ['--minutes', 'x'], flag: '--minutes' },
] as const;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: readonly string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      tsxArgs(file, ...args),
      // Never the developer's variables nor their .env: a key or a PROMPTS_DIR must not change what is tested.
      // The timeout only matters if a command starts its real work instead of answering.
      { cwd: isolatedCwd(), env: childEnv(), timeout: 30_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        // A numeric code is the exit code; a string code means the child never started.
        if (typeof error?.code === 'string') reject(error);
        else resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * As under `npm run … | head -1` once head has gone: the pipe's reading end is closed before the
 * command writes a word. Only the exit code and stderr are left to look at.
 */
function runWithOutputClosed(file: string, args: readonly string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, tsxArgs(file, ...args), { cwd: isolatedCwd(), env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (piece: string) => (stderr += piece));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: '', stderr });
    });
  });
}

/** Commands that print more than their usage, each with a reader already gone. */
const CLOSED_OUTPUT_RUNS = [
  ...COMMANDS.map(({ name, file }) => ({ name, file, args: ['--help'] })),
  { name: 'prompts:check', file: 'src/cli/prompts-check.ts', args: [path.join(repoRoot, 'prompts')] },
] as const;

const exits = new Map<string, Exit>();
const closedExits = new Map<string, Exit>();
const key = (file: string, args: readonly string[]): string => [file, ...args].join(' ');

/** At most this many children at once: a tsx start costs about a second of CPU, and CI has two cores shared with other test files. */
const AT_ONCE = 4;

/** Runs every job, AT_ONCE at a time, and resolves their results in order. */
async function inTurns<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]!();
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return results;
}

beforeAll(async () => {
  const runs: [string, readonly string[]][] = [
    ...COMMANDS.flatMap(({ file }): [string, readonly string[]][] => [
      [file, ['--help']],
      [file, ['--bogus']],
    ]),
    ['bench/main.ts', ['-h']],
    ...BAD_NUMBERS.map(({ file, args }): [string, readonly string[]] => [file, args]),
  ];
  const results = await inTurns([
    ...runs.map(([file, args]) => () => run(file, args)),
    ...CLOSED_OUTPUT_RUNS.map(({ file, args }) => () => runWithOutputClosed(file, args)),
  ]);
  runs.forEach(([file, args], i) => exits.set(key(file, args), results[i]!));
  CLOSED_OUTPUT_RUNS.forEach(({ file, args }, i) => closedExits.set(key(file, args), results[runs.length + i]!));
}, 240_000);

function exitOf(file: string, args: readonly string[]): Exit {
  const exit = exits.get(key(file, args));
  if (!exit) throw new Error(`not run: ${key(file, args)}`);
  return exit;
}

function expectOneLineRefusal(exit: Exit, name: string, problem: RegExp): void {
  expect(exit.code, exit.stderr).toBe(2);
  expect(exit.stdout).toBe('');
  expect(exit.stderr).not.toContain('    at ');
  const lines = exit.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(problem);
  expect(lines[0]).toContain(`npm run ${name} -- --help`);
}

describe.each(COMMANDS)('npm run $name', ({ name, file }) => {
  test('--help prints the usage with an example on stdout and exits 0', () => {
    const exit = exitOf(file, ['--help']);
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stderr).toBe('');
    expect(exit.stdout).toMatch(new RegExp(`^Usage:\\s+npm run ${name} --`));
    expect(exit.stdout).toContain('(default');
    expect(exit.stdout).toMatch(new RegExp(`Example:\\n +npm run ${name} -- `));
  });

  test('an unknown option is exit 2 with one line on stderr pointing at --help', () => {
    expectOneLineRefusal(exitOf(file, ['--bogus']), name, new RegExp(`^${name}: Unknown option '--bogus'`));
  });
});

test('-h is --help', () => {
  const short = exitOf('bench/main.ts', ['-h']);
  expect(short.code).toBe(0);
  expect(short.stdout).toBe(exitOf('bench/main.ts', ['--help']).stdout);
});

test.each(BAD_NUMBERS)('npm run $name -- $args.0 $args.1: exit 2 naming the option', ({ name, file, args, flag }) => {
  expectOneLineRefusal(exitOf(file, args), name, new RegExp(`^${name}: ${flag}\\b.*"${args[1]}"`));
});

test.each(CLOSED_OUTPUT_RUNS)('npm run $name -- $args.0 with nobody reading its output (| head): exit 0, nothing on stderr', ({ file, args }) => {
  const exit = closedExits.get(key(file, args));
  expect(exit?.stderr).toBe('');
  expect(exit?.code).toBe(0);
});
