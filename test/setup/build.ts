/**
 * Runs once before the whole run: the product's TypeScript turned into JavaScript in `.test-build/`
 * (beside `src/`, so every path a module finds from its own place is the same), for the child
 * processes the tests start. Under tsx each start compiled on the fly: 2.5 s of CPU for a Hotline
 * start against 1 s, and the suite's hundreds of starts made half its time on a busy two-core runner.
 * Types are checked apart (`tsc --noEmit` in `npm test`); this only strips them, in about a second.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { BUILT_DIR, repoRoot } from '../helpers/child-process.js';
import { oncePerRun } from './once-per-run.js';

export default function buildForChildProcesses(): Promise<void> {
  return oncePerRun('build', buildOnce);
}

async function buildOnce(): Promise<void> {
  await rm(BUILT_DIR, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(repoRoot, 'src/**/*.ts')],
    outdir: BUILT_DIR,
    outbase: path.join(repoRoot, 'src'),
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // A child's stack trace names the source's lines (node --enable-source-maps is not needed to read them).
    sourcemap: 'inline',
    logLevel: 'warning',
  });
}
