/**
 * Summarises a V8 .cpuprofile (from `tsx --cpu-prof bench/main.ts …`):
 * self time per function and per package or source folder, top first.
 *
 *   npx tsx bench/profile-summary.ts CPU.….cpuprofile [--top 30]
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** Where a frame's code lives: a package name, a folder of this project, or a V8/Node bucket. */
export function bucketOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  if (src >= 0) return url.slice(src + 1, url.lastIndexOf('/'));
  return url;
}

export function selfTimes(profile: CpuProfile, key: (frame: CallFrame) => string): SelfTime[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (!node) return;
    const name = key(node.callFrame);
    totals.set(name, (totals.get(name) ?? 0) + delta);
    all += delta;
  });
  return [...totals.entries()]
    .map(([name, us]) => ({ name, ms: us / 1000, share: all > 0 ? us / all : 0 }))
    .sort((a, b) => b.ms - a.ms);
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const src = url.indexOf('/src/');
  return src >= 0 ? url.slice(src + 1) : url;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' } } });
  const file = positionals[0];
  if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [--top N]');
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const top = Number(values.top);
  const totalS = (profile.endTime - profile.startTime) / 1e6;
  console.log(`${file}: ${totalS.toFixed(1)} s sampled`);
  const print = (title: string, rows: SelfTime[]): void => {
    console.log(`\n${title}`);
    for (const row of rows.slice(0, top)) {
      console.log(`${row.ms.toFixed(0).padStart(8)} ms ${(row.share * 100).toFixed(1).padStart(5)} %  ${row.name}`);
    }
  };
  print('self time by package / folder', selfTimes(profile, (f) => bucketOf(f.url, f.functionName)));
  print(
    'self time by function',
    selfTimes(profile, (f) => `${f.functionName || '(anonymous)'}  ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`),
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
