/**
 * A PostgreSQL server of a test's own, to stop and start again under Hotline (the shared one on
 * 5432 serves every other test file). Made with the machine's PostgreSQL binaries in a temporary
 * folder, on a free port, trusting local connections; as root, it runs as the postgres user
 * (PostgreSQL refuses root). Undefined when the binaries are not there.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);

export interface PrivatePostgres {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

function binaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(path.join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && path.join(root, versions[0], 'bin');
}

export async function startPrivatePostgres(): Promise<PrivatePostgres | undefined> {
  const bin = binaries();
  if (!bin) return undefined;
  const root = userInfo().uid === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'hotline-pg-'));
  const data = path.join(dir, 'data');
  if (root) {
    const { stdout } = await run('id', ['-u', 'postgres']).catch(() => ({ stdout: '' }));
    const uid = Number(stdout.trim());
    if (!uid) return undefined;
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  const as = (command: string, args: string[]) =>
    root ? run('runuser', ['-u', 'postgres', '--', path.join(bin, command), ...args]) : run(path.join(bin, command), args);
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`;
  const start = async () => {
    await as('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async close() {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
