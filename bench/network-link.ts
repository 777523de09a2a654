/**
 * The network between Hotline and the far side (the model and the business system) in the
 * network phase, with a set round-trip time, made in one of two ways:
 * - netns: a Linux network namespace for the far side, a veth pair to it and netem delaying each
 *   direction by half the round trip: the kernel's own TCP, with its handshake, slow start and
 *   acknowledgements, as on a real network. Needs root, `ip`, `tc` and the kernel's netem.
 * - proxy: a delaying TCP proxy on 127.0.0.1 in front of each server (delay-proxy.ts), where the
 *   namespace cannot be made; it models the round trips, not TCP's own behaviour.
 * The namespace is removed when the link closes, and if the bench dies or is stopped first.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DelayProxy } from './delay-proxy.js';
import { cleanUpOnExit, runQuietly } from './exit-cleanup.js';

const run = promisify(execFile);

export type LinkKind = 'netns' | 'proxy';

export interface NetworkLink {
  readonly kind: LinkKind;
  /** How the round trip is made, in a sentence, and why the proxy when the namespace was wanted. */
  readonly description: string;
  /** Where the far side's servers listen. */
  readonly listenHost: string;
  /** The command the far side runs under (`ip netns exec <name>`), or none. */
  readonly prefix: readonly string[];
  /** The address Hotline and the baseline client reach a far-side server listening on `port` at. */
  reach(port: number): Promise<{ host: string; port: number }>;
  close(): Promise<void>;
}

/** The namespaces of this bench are named with its pid, so a run killed outright is cleaned up by the next. */
const NAMESPACE_PREFIX = 'hotline-bench-';

/** Thrown when the namespace link cannot be made here; the reason is said in the output. */
export class LinkUnavailable extends Error {
  override readonly name = 'LinkUnavailable';
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

function commandError(error: unknown): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  if (typeof stderr === 'string' && stderr.trim() !== '') return (stderr.trim().split('\n')[0] ?? '').replace(/^Error: /, '').replace(/\.$/, '');
  return error instanceof Error ? error.message : String(error);
}

/** Namespaces left by a bench that was killed before it could remove them. */
async function removeStaleNamespaces(): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'list']);
  for (const line of stdout.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (!name.startsWith(NAMESPACE_PREFIX)) continue;
    const pid = Number(name.slice(NAMESPACE_PREFIX.length));
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) await ip('netns', 'del', name).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A namespace with a veth pair to it, each end delaying what it sends by half the round trip. */
export async function namespaceLink(rttMs: number): Promise<NetworkLink> {
  if (process.platform !== 'linux') throw new LinkUnavailable('network namespaces are Linux only');
  if (process.getuid?.() !== 0) throw new LinkUnavailable('making a network namespace needs root');
  try {
    await removeStaleNamespaces();
  } catch (error) {
    throw new LinkUnavailable(`ip netns: ${commandError(error)}`);
  }
  const name = `${NAMESPACE_PREFIX}${process.pid}`;
  // Interface names are at most 15 characters; the pid keeps two benches' apart.
  const outside = `hlb${process.pid}a`;
  const inside = `hlb${process.pid}b`;
  const subnet = `10.213.${process.pid % 256}`;
  const forget = cleanUpOnExit(() => runQuietly('ip', ['netns', 'del', name]));
  const remove = async (): Promise<void> => {
    // Removing the namespace removes the veth end inside it, and with it the pair.
    await ip('netns', 'del', name).catch(() => undefined);
    forget();
  };
  const half = `${rttMs / 2}ms`;
  const step = async (what: string, command: () => Promise<void>): Promise<void> => {
    try {
      await command();
    } catch (error) {
      await remove();
      throw new LinkUnavailable(`${what}: ${commandError(error)}`);
    }
  };
  await step('ip netns add', () => ip('netns', 'add', name));
  await step('a veth pair', async () => {
    await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside, 'netns', name);
    await ip('addr', 'add', `${subnet}.1/30`, 'dev', outside);
    await ip('link', 'set', outside, 'up');
    await ip('-n', name, 'addr', 'add', `${subnet}.2/30`, 'dev', inside);
    await ip('-n', name, 'link', 'set', inside, 'up');
    await ip('-n', name, 'link', 'set', 'lo', 'up');
  });
  await step('tc qdisc … netem', async () => {
    await run('tc', ['qdisc', 'add', 'dev', outside, 'root', 'netem', 'delay', half]);
    await run('ip', ['netns', 'exec', name, 'tc', 'qdisc', 'add', 'dev', inside, 'root', 'netem', 'delay', half]);
  });
  return {
    kind: 'netns',
    description: `a network namespace and a veth pair, netem delaying each direction by ${half} (the kernel's TCP)`,
    listenHost: `${subnet}.2`,
    prefix: ['ip', 'netns', 'exec', name],
    reach: (port) => Promise.resolve({ host: `${subnet}.2`, port }),
    close: remove,
  };
}

/** A delaying proxy on 127.0.0.1 in front of each far-side server. `why`: why not the namespace, said in the output. */
export function proxyLink(rttMs: number, why: string | undefined): NetworkLink {
  const proxies: DelayProxy[] = [];
  return {
    kind: 'proxy',
    description:
      `a delaying TCP proxy on 127.0.0.1: each direction ${rttMs / 2} ms, a new connection's first bytes a round trip later ` +
      `(TCP's handshake)${why === undefined ? '' : `; no namespace: ${why}`}`,
    listenHost: '127.0.0.1',
    prefix: [],
    reach: async (port) => {
      const proxy = await DelayProxy.start({ host: '127.0.0.1', port }, rttMs);
      proxies.push(proxy);
      return { host: '127.0.0.1', port: proxy.port };
    },
    close: async () => {
      await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    },
  };
}

/** The namespace where it can be made, else the proxy; `kind` forces one. */
export async function makeLink(rttMs: number, kind: LinkKind | 'auto'): Promise<NetworkLink> {
  if (kind === 'proxy') return proxyLink(rttMs, undefined);
  try {
    return await namespaceLink(rttMs);
  } catch (error) {
    if (kind === 'netns' || !(error instanceof LinkUnavailable)) throw error;
    return proxyLink(rttMs, error.message);
  }
}
