/**
 * The house's layers (.dependency-cruiser.cjs, explained in docs/architecture.md): no import points
 * up a layer, no circle of imports, no circle of folders, and nothing in the product reaches the
 * instruments or the tests. Checked by dependency-cruiser over the real tree, and shown to catch a
 * deliberate back import and a deliberate circle in a small tree of its own.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const CLI = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

const Cruise = z.object({
  modules: z.array(z.object({ source: z.string(), dependencies: z.array(z.object({ resolved: z.string() })) })),
  summary: z.object({
    violations: z.array(z.object({ from: z.string(), to: z.string(), rule: z.object({ name: z.string() }) })),
  }),
});

async function cruise(cwd: string, targets: readonly string[]): Promise<z.infer<typeof Cruise>> {
  // dependency-cruiser exits non-zero when it finds violations; the JSON is printed either way.
  const run = promisify(execFile)(process.execPath, [CLI, ...targets, '--config', CONFIG, '--output-type', 'json'], { cwd, maxBuffer: 64 * 1024 * 1024 });
  const { stdout } = await run.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return Cruise.parse(JSON.parse(stdout));
}

const said = (violations: z.infer<typeof Cruise>['summary']['violations']): string[] => violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);

/** The first-level folder of a file in src/ (a file at src/'s root is its own). */
const folderOf = (file: string): string => file.replace(/^src\//, '').split('/')[0]!;

function folderCircles(modules: z.infer<typeof Cruise>['modules']): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const m of modules) {
    if (!m.source.startsWith('src/') || !m.source.slice(4).includes('/')) continue;
    for (const d of m.dependencies) {
      if (!d.resolved.startsWith('src/') || !d.resolved.slice(4).includes('/')) continue;
      const [from, to] = [folderOf(m.source), folderOf(d.resolved)];
      if (from !== to) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
    }
  }
  const circles: string[][] = [];
  const visit = (at: string, trail: string[]): void => {
    for (const next of edges.get(at) ?? []) {
      const seen = trail.indexOf(next);
      if (seen >= 0) circles.push([...trail.slice(seen), next]);
      else visit(next, [...trail, next]);
    }
  };
  for (const start of edges.keys()) visit(start, [start]);
  return circles;
}

describe('the layers', () => {
  it('hold in the product, its tools and its instruments: nothing imports up, nothing circles', async () => {
    const result = await cruise(ROOT, ['src', 'bench', 'soak']);
    expect(result.modules.length).toBeGreaterThan(300);
    expect(said(result.summary.violations)).toEqual([]);
    // Folders as well as files: two features importing each other are one feature, or need a port.
    expect(folderCircles(result.modules)).toEqual([]);
  }, 120_000);

  it('catch a deliberate back import and a deliberate circle', async () => {
    const result = await cruise(path.join(ROOT, 'test/fixtures/layers'), ['src']);
    expect(said(result.summary.violations).sort()).toEqual([
      'call-imports-up: src/call/turn.ts → src/transport/edge.ts',
      'no-circular: src/llm/one.ts → src/llm/two.ts',
    ]);
  }, 60_000);
});
