/**
 * Child processes that never see the user's configuration: an environment built from scratch and
 * a working directory without a .env file, so a key in the shell or in the project's .env can
 * neither change a test's outcome nor reach a real API.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

/**
 * The time limit of a test that starts Hotline or a command in a child process. Each tsx start
 * compiles on the fly: about a second alone, many on a busy two-core CI machine running other files.
 */
export const CHILD_TEST_TIMEOUT_MS = 60_000;

/** tsx's loader by URL: `--import tsx` is resolved from the working directory, which has no node_modules. */
export const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Enough of the parent's environment to run node and npx, and nothing that configures Hotline or its tools. */
const PASSED_ON = ['PATH', 'HOME', 'TMPDIR', 'TEMP', 'TMP', 'SYSTEMROOT', 'LANG', 'TEST_LOG_LEVEL'];

export function childEnv(vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_ON) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...vars };
}

let workdir: string | undefined;

/** An empty folder to run in: dotenv reads .env from the working directory. One per test file. */
export function isolatedCwd(): string {
  workdir ??= mkdtempSync(path.join(tmpdir(), 'hotline-cwd-'));
  return workdir;
}

/** Called after each test file by test/setup/isolate-env.ts (a worker is killed, so no exit handler would run). */
export function removeIsolatedCwd(): void {
  if (workdir) rmSync(workdir, { recursive: true, force: true });
  workdir = undefined;
}

/**
 * Where test/setup/build.ts puts the product compiled for child processes: `src/x/y.ts` is
 * `.test-build/x/y.js`, one folder below the repository as `src/` and `dist/` are.
 */
export const BUILT_DIR = path.join(repoRoot, '.test-build');

/** What node runs for `script`: the product's own code compiled (`src/…`), anything else (a test's fixture) under tsx. */
export function tsxArgs(script: string, ...args: string[]): string[] {
  if (script.startsWith('src/') && script.endsWith('.ts')) return [path.join(BUILT_DIR, script.slice('src/'.length, -'.ts'.length) + '.js'), ...args];
  return ['--import', tsxLoader, path.join(repoRoot, script), ...args];
}

export interface HotlineProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Exit code, or the signal's name when it was killed by one. */
  readonly exited: Promise<number | string>;
  /** Everything written to stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** The first match of `pattern` in a stdout line, waiting for it if it has not come yet. */
  line(pattern: RegExp): Promise<RegExpExecArray>;
}

/**
 * src/main.ts in a child process, on an address of its own (127.0.0.1, port 0) with its
 * transcripts in a temporary folder, the demo model and nothing else unless `vars` says so.
 */
export function spawnHotline(vars: Record<string, string> = {}): HotlineProcess {
  const transcriptsDir = path.join(isolatedCwd(), 'transcripts');
  mkdirSync(transcriptsDir, { recursive: true });
  const child = spawn(process.execPath, tsxArgs('src/main.ts'), {
    cwd: isolatedCwd(),
    env: childEnv({
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      TRANSCRIPTS_DIR: transcriptsDir,
      DEMO_TTFT_MS: '0',
      DEMO_TOKEN_DELAY_MS: '0',
      LOG_LEVEL: 'info',
      ...vars,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiting: { pattern: RegExp; resolve: (match: RegExpExecArray) => void }[] = [];
  const seen: string[] = [];
  createInterface({ input: child.stdout }).on('line', (text) => {
    out += `${text}\n`;
    seen.push(text);
    for (const wait of waiting.slice()) {
      const match = wait.pattern.exec(text);
      if (match) {
        waiting.splice(waiting.indexOf(wait), 1);
        wait.resolve(match);
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (piece: string) => (err += piece));
  // 'close', not 'exit': by then stdout and stderr have been read to the end.
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    line(pattern) {
      for (const text of seen) {
        const match = pattern.exec(text);
        if (match) return Promise.resolve(match);
      }
      return new Promise((resolve, reject) => {
        waiting.push({ pattern, resolve });
        void exited.then((code) => reject(new Error(`Hotline exited (${code}) before printing ${pattern}:\n${out}${err}`)));
      });
    },
  };
}

/** What `npm start` and `npm run build` need of the project, copied where a test starts them apart from this checkout's dist/. */
export const PROJECT_TO_START = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'src'] as const;
