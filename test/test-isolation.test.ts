import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, onTestFinished, test } from 'vitest';
import { childEnv, repoRoot } from './helpers/child-process.js';

/** The project's user configuration, as the README tells people to set it: in the shell and in .env. */
const USER_CONFIG = {
  OPENAI_API_KEY: 'sk-bogus-from-the-user',
  // Nothing listens there: a test that reached for the user's LLM fails instead of calling a real API.
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  WS_TOKEN: 'a',
  WEBHOOK_SECRET: 'b',
};

test("npm test passes with the user's OPENAI_API_KEY, WS_TOKEN and WEBHOOK_SECRET in the shell and in .env", async () => {
  // A copy of the project, so its .env is this test's own and never the user's real one.
  const copy = await mkdtemp(path.join(tmpdir(), 'hotline-isolation-'));
  onTestFinished(() => rm(copy, { recursive: true, force: true }));
  for (const entry of ['src', 'test', 'prompts', 'package.json', 'tsconfig.json', 'vitest.config.ts', '.env.example']) {
    await cp(path.join(repoRoot, entry), path.join(copy, entry), { recursive: true });
  }
  await symlink(path.join(repoRoot, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  await writeFile(path.join(copy, '.env'), Object.entries(USER_CONFIG).map(([name, value]) => `${name}=${value}\n`).join(''));

  // One fast test that starts src/main.ts and talks to it, the way every such test does.
  const vitest = path.join(repoRoot, 'node_modules/vitest/vitest.mjs');
  const run = await promisify(execFile)(process.execPath, [vitest, 'run', 'test/operations.test.ts', '-t', 'SIGTERM'], {
    cwd: copy,
    env: childEnv({ ...USER_CONFIG, CI: 'true' }),
  }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: unknown; stdout?: unknown; stderr?: unknown }) => ({ code: error.code, stdout: `${String(error.stdout)}${String(error.stderr)}` }),
  );
  expect(run.stdout).toMatch(/1 passed/);
  expect(run.code).toBe(0);
}, 90_000);
