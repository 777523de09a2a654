import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { StopSignal } from './signals.js';

/** A worker that stopped is started again after this long, doubling while it keeps stopping, up to a minute. */
const RESTART_MS = 1_000;
const RESTART_MAX_MS = 60_000;
/** A worker that ran this long was well: its next restart waits the shortest time again. */
const HEALTHY_AFTER_MS = 30_000;

/**
 * WORKERS=N: this process starts N Hotline processes that share its port (node:cluster hands each
 * new connection to one of them), each a replica of its own on the shared PostgreSQL — named
 * `<REPLICA_ID>-<n>`, stable across its restarts, reached by the others on a loopback port of its
 * own with a cluster secret made here unless CLUSTER_SECRET says one. A worker that stops is
 * started again; SIGTERM or Ctrl-C here stops them all gracefully, a second one at once. Each
 * worker runs `main` (main.ts's own file, with this process's node options: tsx's loader under
 * npm run dev).
 */
export function runWorkers(config: Config, logger: Logger, main: string): void {
  // node:cluster runs process.argv[1] by default: under npm start that is scripts/start.mjs, not Hotline.
  cluster.setupPrimary({ exec: main });
  const secret = config.replica.clusterSecret ?? randomBytes(24).toString('base64url');
  let stopping = false;
  const workers = new Map<number, Worker>();

  const start = (index: number, wait: number): void => {
    const startedAt = Date.now();
    const worker = cluster.fork({ REPLICA_ID: `${config.replica.id}-${index}`, CLUSTER_SECRET: secret, WORKERS: '1' });
    workers.set(index, worker);
    worker.on('exit', (code, signal) => {
      workers.delete(index);
      if (stopping) {
        if (workers.size === 0) process.exit(0);
        return;
      }
      const next = Date.now() - startedAt > HEALTHY_AFTER_MS ? RESTART_MS : Math.min(wait * 2, RESTART_MAX_MS);
      logger.error({ worker: index, code, signal, restartInMs: next }, 'a worker stopped; it is started again');
      setTimeout(() => start(index, next), next);
    });
  };

  const stop = (signal: StopSignal): void => {
    if (stopping) logger.warn({ signal }, `${signal} again: the workers stop at once`);
    else logger.info({ signal }, 'stopping the workers: each lets its calls finish (SHUTDOWN_GRACE_MS)');
    stopping = true;
    if (workers.size === 0) process.exit(0);
    // Always SIGTERM: a worker takes a second one as "at once", as a person pressing Ctrl-C twice wants.
    for (const worker of workers.values()) worker.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let index = 1; index <= config.workers; index++) start(index, RESTART_MS);
  logger.info({ workers: config.workers, port: config.port }, `${config.workers} Hotline processes share port ${config.port}, each a replica of its own`);
}
