/**
 * The command-line tools run as users run them: a child process started in a
 * folder of the test's own (where dotenv looks for .env, so a test that wants
 * one writes it there and the developer's own is never read), with an
 * environment built from scratch (test/helpers/child-process.ts).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { childEnv, isolatedCwd, tsxArgs } from './child-process.js';

export interface CliOptions {
  /** Where it runs; by default the test file's empty folder (no .env). */
  cwd?: string;
  /** Its environment beside PATH, HOME and the like: never the developer's. */
  env?: Record<string, string>;
  /** Piped to its stdin, which then ends. */
  input?: string;
  /** Leave stdin open for the test to write to (`child.stdin`). */
  keepInputOpen?: boolean;
}

export interface CliProcess {
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Exit code, or the signal's name; resolves once stdout and stderr have been read to the end. */
  readonly exited: Promise<number | string>;
  /** The stdout lines so far. */
  readonly lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line matching `pattern`, waiting for it if need be. */
  line(pattern: RegExp): Promise<string>;
}

/** Starts `script` (e.g. src/cli/call.ts) with `args`. */
export function startCli(script: string, args: readonly string[], options: CliOptions = {}): CliProcess {
  const child = spawn(process.execPath, tsxArgs(script, ...args), {
    cwd: options.cwd ?? isolatedCwd(),
    env: childEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin.write(options.input);
  if (!options.keepInputOpen) child.stdin.end();
  // A child that exits before reading its input closes the pipe: that is no error of the test's.
  child.stdin.on('error', () => undefined);
  const lines: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const wait of waiting.slice()) {
      if (!wait.pattern.test(line)) continue;
      waiting.splice(waiting.indexOf(wait), 1);
      wait.resolve(line);
    }
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (piece: string) => (err += piece));
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    child,
    exited,
    lines,
    stderr: () => err,
    line(pattern) {
      const seen = lines.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve });
        void exited.then((code) => reject(new Error(`exited (${code}) before printing ${pattern}:\n${lines.join('\n')}\n${err}`)));
      });
    },
  };
}

export interface CliRun {
  code: number | string;
  stdout: string;
  lines: string[];
  stderr: string;
}

/** Runs `script` to its end. */
export async function runCli(script: string, args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
  const cli = startCli(script, args, options);
  const code = await cli.exited;
  return { code, stdout: cli.lines.map((line) => `${line}\n`).join(''), lines: cli.lines, stderr: cli.stderr() };
}

/** A fresh folder with a .env of these variables, as a user's checkout has one; `remove()` when done. */
export async function folderWithEnv(vars: Record<string, string>): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-dotenv-'));
  await writeFile(path.join(dir, '.env'), Object.entries(vars).map(([name, value]) => `${name}=${value}\n`).join(''));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
