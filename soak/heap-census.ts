import { readFile } from 'node:fs/promises';

/** What a heap snapshot holds, counted. */
export interface Census {
  /** Objects by constructor name, closures by function name. */
  readonly counts: Record<string, number>;
  /** The bytes of every object, string and array, without compiled code and V8's own bookkeeping. */
  readonly bytes: number;
}

interface SnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/**
 * Counts a `.heapsnapshot` file's objects by constructor name. Two censuses
 * taken some thousand calls apart name what is kept per ended call: a class
 * whose count grows with the calls is a leak, whatever its size, where the
 * heap's bytes also move with the JIT's code and caches.
 */
export async function censusOf(file: string): Promise<Census> {
  const snapshot = JSON.parse(await readFile(file, 'utf8')) as SnapshotFile;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const { nodes, strings } = snapshot;
  const counts: Record<string, number> = {};
  let bytes = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]!];
    const name = strings[nodes[i + nameAt]!] ?? '';
    // Compiled code and V8's own bookkeeping (maps, feedback, dependent code) follow the JIT, not the calls.
    if (type === 'code' || name.startsWith('system /')) continue;
    bytes += nodes[i + sizeAt]!;
    if (type !== 'object' && type !== 'closure') continue;
    const key = type === 'closure' ? `(closure) ${name || '(anonymous)'}` : name;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return { counts, bytes };
}

/** The names whose count grew by at least `atLeast` from `before` to `after`, most first. */
export function grownBy(before: Census, after: Census, atLeast: number): { name: string; grew: number }[] {
  return Object.entries(after.counts)
    .map(([name, count]) => ({ name, grew: count - (before.counts[name] ?? 0) }))
    .filter(({ grew }) => grew >= atLeast)
    .sort((a, b) => b.grew - a.grew);
}
