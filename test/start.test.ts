/**
 * `npm start` as a person runs it: scripts/start.mjs compiles src/ to dist/ with esbuild (only what
 * changed since the last start) and runs dist/main.js. And `npm run build`, what the Docker image
 * runs: tsc's dist/ starts and answers with no TypeScript loader in sight, and the next `npm start`
 * does not trust it.
 *
 * Both run in a copy of the project in a temporary folder (its node_modules a link to this one's),
 * so the developer's dist/ is left alone and a source can be changed and deleted.
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, appendFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { childEnv, PROJECT_TO_START, repoRoot } from './helpers/child-process.js';

let project: string;
let starts = 0;

beforeAll(() => {
  project = mkdtempSync(path.join(tmpdir(), 'hotline-start-'));
  for (const part of PROJECT_TO_START) cpSync(path.join(repoRoot, part), path.join(project, part), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(project, 'node_modules'));
  // A source nothing imports, deleted before a later start: its output must go with it.
  writeFileSync(path.join(project, 'src/start-test-leftover.ts'), 'export const leftover: number = 1;\n');
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

interface Started {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** The first stdout line matching `pattern`, waiting for it. */
  line(pattern: RegExp): Promise<string>;
  /** What scripts/start.mjs said (its JSON lines' messages). */
  said(): string[];
  stop(): Promise<void>;
}

/** `npm <args>` in the copy, piped (so the log is JSON lines), on a port of its own, in a process group of its own. */
function npm(args: readonly string[]): Started {
  const transcripts = path.join(project, `transcripts-${++starts}`);
  const child = spawn('npm', args, {
    cwd: project,
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', PROMPTS_DIR: path.join(repoRoot, 'prompts'), TRANSCRIPTS_DIR: transcripts, LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (piece: string) => (stderr += piece));
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const wait of waiting.filter((w) => w.pattern.test(line))) {
      waiting.splice(waiting.indexOf(wait), 1);
      wait.resolve(line);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    line: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const seen = lines.find((line) => pattern.test(line));
        if (seen) return resolve(seen);
        waiting.push({ pattern, resolve });
        void exited.then((code) => reject(new Error(`npm ${args.join(' ')} exited (${code}) before printing ${pattern}:\n${lines.join('\n')}\n${stderr}`)));
      }),
    // A wait of over a second adds its `still starting: …` line: a busy machine's, not what is checked here.
    said: () =>
      lines
        .filter((line) => line.includes('"component":"start"'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg)
        .filter((msg) => !msg.startsWith('still starting: ')),
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
      await exited;
    },
  };
}

const sources = (): string[] => readdirSync(path.join(project, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
const dist = (file: string): string => path.join(project, 'dist', file);

/** The health URL of the Hotline a start announced. */
async function healthOf(started: Started): Promise<string> {
  const line = await started.line(/"healthUrl":"/);
  return (JSON.parse(line) as { healthUrl: string }).healthUrl;
}

describe('npm start', () => {
  test('compiles src/ once, then only what changed, saying so; a deleted source leaves no output; the Hotline it runs answers', async () => {
    const { scripts } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe('node scripts/start.mjs');

    // The first start: all of src/, said before and after.
    const first = npm(['start']);
    try {
      const health = await healthOf(first);
      expect(first.said()).toEqual(['compiling src/ to dist/ (first start) …', expect.stringMatching(new RegExp(`^compiled ${sources().length} files in \\d+\\.\\d s; starting dist/main\\.js$`))]);
      expect(await (await fetch(health)).json()).toMatchObject({ status: 'ok', llm: { mode: 'demo' } });
      // The README's first walkthrough: a call answered with its greeting.
      const answer = await fetch(health.replace(/healthz$/, 'webhook'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'session_start', session: { id: 'start-1', direction: 'inbound' } }),
      });
      expect(await answer.json()).toMatchObject({ type: 'speak', session_id: 'start-1' });
      expect(existsSync(dist('start-test-leftover.js'))).toBe(true);
    } finally {
      await first.stop();
    }

    // Nothing changed: nothing compiled, one short line.
    const second = npm(['start']);
    try {
      await healthOf(second);
      expect(second.said()).toEqual([expect.stringMatching(/^dist\/ is up to date with src\/ \(checked in \d+\.\d s\); starting dist\/main\.js$/)]);
    } finally {
      await second.stop();
    }

    // One source changed, one deleted: that one compiled, the other's output removed.
    appendFileSync(path.join(project, 'src/startup/announce.ts'), "\nexport const startTestMark = 'changed since the last start';\n");
    unlinkSync(path.join(project, 'src/start-test-leftover.ts'));
    const third = npm(['start']);
    try {
      await healthOf(third);
      expect(third.said()).toEqual([
        expect.stringMatching(/^compiled 1 changed file and removed the output of 1 deleted source in \d+\.\d s; starting dist\/main\.js$/),
      ]);
      expect(readFileSync(dist('startup/announce.js'), 'utf8')).toContain('changed since the last start');
      expect(existsSync(dist('start-test-leftover.js'))).toBe(false);
      expect(existsSync(dist('start-test-leftover.js.map'))).toBe(false);
    } finally {
      await third.stop();
    }
  }, 120_000);

  // A whole tsc build, on a runner whose two cores the other test files share: two minutes.
  test('npm run build (tsc, as the Docker image builds) gives a Hotline that starts and answers; the next npm start compiles all of src/ again', async () => {
    const { scripts } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.build).toMatch(/^tsc -p tsconfig\.build\.json\b/);
    await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: project, env: childEnv() });
    expect(existsSync(dist('.tsbuildinfo'))).toBe(true);

    const built = spawn(process.execPath, [dist('main.js')], {
      cwd: project,
      env: childEnv({ HOST: '127.0.0.1', PORT: '0', PROMPTS_DIR: path.join(repoRoot, 'prompts'), TRANSCRIPTS_DIR: path.join(project, 'transcripts-tsc'), LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => built.on('exit', (code) => resolve(code)));
    try {
      const health = await new Promise<string>((resolve, reject) => {
        createInterface({ input: built.stdout }).on('line', (line) => {
          const match = /"healthUrl":"([^"]+)"/.exec(line);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`the compiled Hotline exited (${code}) before listening`)));
      });
      expect(await (await fetch(health)).json()).toMatchObject({ status: 'ok', llm: { mode: 'demo' } });
      built.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      built.kill('SIGKILL');
    }

    // tsc's dist/ is not npm start's: it is emptied and compiled whole, and tsc's record goes with it.
    const after = npm(['start']);
    try {
      await after.line(/starting dist\/main\.js/);
      expect(after.said()).toEqual(['compiling src/ to dist/ (dist/ was built by npm run build) …', expect.stringMatching(/^compiled \d+ files in /)]);
      expect(existsSync(dist('.tsbuildinfo'))).toBe(false);
    } finally {
      await after.stop();
    }
  }, 120_000);
});
