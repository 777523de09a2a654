/**
 * A start that fails halfway closes what it opened, through the same stack a shutdown closes: with
 * the port taken, found only after the store, the replica, the demo model and shop, the prompt and
 * tool folders' watchers, the internal listener and the timers are open, nothing of them is left.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startHotline } from '../src/server.js';
import { POSTGRES_SERVER, freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What keeps this process busy, by kind: sockets, servers, watchers, timers, threads. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** What is open now beyond `before`: a kind with more of it than then. */
function beyond(before: Record<string, number>): Record<string, number> {
  const more: Record<string, number> = {};
  for (const [kind, n] of Object.entries(resources())) if (n > (before[kind] ?? 0)) more[kind] = n - (before[kind] ?? 0);
  return more;
}

/**
 * A socket's or a watcher's close is reported a turn or two of the event loop after it was asked
 * for; a socket the other end closes (a pooled connection to the demo model, a database's), once
 * that end has got round to it, which on a loaded runner took longer than 500 turns. Nothing
 * announces it, so this looks again until a deadline: what is still open then was left open.
 */
async function leftOpen(before: Record<string, number>): Promise<Record<string, number>> {
  const deadline = Date.now() + 10_000;
  for (let turn = 0; Object.keys(beyond(before)).length > 0 && Date.now() < deadline; turn += 1) {
    await new Promise((resolve) => (turn < 500 ? setImmediate(resolve) : setTimeout(resolve, 20)));
  }
  return beyond(before);
}

async function takenPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

async function place(kind: 'sqlite' | 'postgres'): Promise<{ env: Record<string, string>; location: TestStoreLocation }> {
  const location = await freshStoreLocation(kind);
  cleanups.push(() => location.remove());
  const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-failed-start-'));
  cleanups.push(() => rm(transcriptsDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    TRANSCRIPTS_DIR: transcriptsDir,
    REPORT_FIELDS: 'false',
    ...location.env,
    // Among replicas the internal listener opens before the public port: it must close too.
    ...(kind === 'postgres' && { CLUSTER_SECRET: 'a cluster secret for this test only' }),
  };
  return { env, location };
}

describe.each(await storeKinds())('a start that fails at the public port (%s)', (kind) => {
  it('leaves nothing open: no socket, watcher, timer or thread, no replica on record, and the store can be opened again', async () => {
    const { env, location } = await place(kind);
    const port = await takenPort();
    const before = resources();
    // No LLM configured: the demo model and its shop start too, each on a port of its own.
    const config = loadConfig({ ...env, PORT: String(port) });
    await expect(startHotline(config, logger, { env })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(await leftOpen(before)).toEqual({});

    if (location.database) {
      const admin = new pg.Client({ connectionString: `${POSTGRES_SERVER}/postgres` });
      await admin.connect();
      try {
        const connections = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [location.database]);
        expect(Number(connections.rows[0]!.n)).toBe(0);
      } finally {
        await admin.end();
      }
    }
    // The store's claim (a second Hotline on one SQLite file is refused) and the replica's row are gone:
    // a Hotline on a free port starts on the same store and finds no other replica.
    const again = await startHotline(loadConfig({ ...env, PORT: '0' }), logger, { env });
    try {
      expect((await again.replica.alive()).map((r) => r.id)).toEqual([again.replica.id]);
    } finally {
      await again.close();
    }
  }, 60_000);
});
