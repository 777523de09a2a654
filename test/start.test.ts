/**
 * `npm start` runs what the Docker image runs: the compiled JavaScript, built
 * on demand. The build must give a Hotline that starts and answers with no
 * TypeScript loader in sight.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { childEnv, isolatedCwd, repoRoot } from './helpers/child-process.js';

// A whole tsc build of the product, on a runner whose two cores the other test files share: two minutes.
test('npm start builds to dist/ and runs node dist/main.js; the compiled Hotline starts and answers', async () => {
  const { scripts } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(scripts.start).toMatch(/^npm run build\b.* && node dist\/main\.js$/);
  expect(scripts.build).toMatch(/^tsc -p tsconfig\.build\.json\b/);

  // The same compilation, into a folder of its own so the developer's dist/ is left alone; inside the
  // project, so the compiled code finds its packages in node_modules as dist/ would.
  const cache = path.join(repoRoot, 'node_modules', '.cache');
  await mkdir(cache, { recursive: true });
  const out = await mkdtemp(path.join(cache, 'hotline-dist-'));
  try {
    await promisify(execFile)(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', out], {
      cwd: repoRoot,
    });
    const child = spawn(process.execPath, [path.join(out, 'main.js')], {
      cwd: isolatedCwd(),
      env: childEnv({
        HOST: '127.0.0.1',
        PORT: '0',
        PROMPTS_DIR: path.join(repoRoot, 'prompts'),
        TRANSCRIPTS_DIR: path.join(out, 'transcripts'),
        LOG_LEVEL: 'info',
      }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const health = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const match = /"healthUrl":"([^"]+)"/.exec(line);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`the compiled Hotline exited (${code}) before listening`)));
      });
      expect(await (await fetch(health)).json()).toMatchObject({ status: 'ok', llm: { mode: 'demo' } });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}, 120_000);
