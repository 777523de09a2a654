/**
 * Three Hotline processes on one PostgreSQL behind Debian's nginx, run from the shipped
 * `deploy/nginx.conf` with only its addresses changed. nginx has no readiness checks: it keeps
 * sending a stopping replica requests until that replica stops listening, and it passes a POST on
 * to the next replica only as that file tells it to. A rolling restart there must lose nothing.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { CHILD_TEST_TIMEOUT_MS, repoRoot } from './helpers/child-process.js';
import { nginxPath, startNginx } from './helpers/nginx.js';
import { freePort } from './helpers/ports.js';
import { scriptedReplicaEnv, startReplica, type StartedReplica } from './helpers/replica.js';
import { expectEveryCallKept, rollingRestartUnderCalls } from './helpers/rolling-restart.js';
import { freshStoreLocation, postgresReachable } from './helpers/stores.js';
import { countingModel } from './helpers/webhook-caller.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withPostgres = await postgresReachable();
/**
 * Rolling restarts of all three, one after another: one in `npm test`; the five with
 * `ROLLING_RESTARTS=5 npx vitest run test/replicas-nginx.test.ts` (a count, never a setting of Hotline's).
 */
const ROUNDS = Number(process.env.ROLLING_RESTARTS ?? 1);
const GRACE_MS = 30_000;
const nginx = nginxPath();
if (!nginx) console.warn('nginx is not installed: the rolling restart behind nginx is skipped (Debian: apt-get install nginx-light)');

describe.skipIf(!withPostgres || !nginx)('replicas behind nginx as deploy/nginx.conf ships it', () => {
  test(
    `${ROUNDS} rolling restart(s) of three replicas under steady webhook calls: no answer but 200 or 204, every call one record with every turn and one report`,
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await countingModel();
      cleanups.push(() => llm.close());
      const ids = ['n1', 'n2', 'n3'];
      const ports = await Promise.all(ids.map(() => freePort()));
      const env = (index: number): Record<string, string> => ({
        ...scriptedReplicaEnv(place, llm.baseURL, ids[index]!),
        PORT: String(ports[index]),
        CLUSTER_SECRET: 'cluster-secret-of-the-nginx-test',
        WEBHOOK_HOLD_MS: '0',
        // Every request comes from nginx's one address, as a real service's come from its few.
        RATE_LIMIT_WEBHOOK_PER_MINUTE: '0',
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
      });
      const replicas: StartedReplica[] = await Promise.all(ids.map((_, index) => startReplica(env(index), cleanups)));
      const front = await startNginx(ports);
      cleanups.push(() => front.close());
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());

      const turns = 2;
      const stoppedInMs: number[] = [];
      const { callers, handedOver } = await rollingRestartUnderCalls({
        front: front.url,
        steady: 30,
        turns,
        replicas: ids.length,
        rounds: ROUNDS,
        onCleanup: (stop) => cleanups.push(stop),
        // One replica at a time, no faster than the shipped file's fail_timeout (and a little): the one before is back in nginx's rotation.
        gapMs: (await shippedFailTimeoutS()) * 1000 + 500,
        async restart(index) {
          const old = replicas[index]!;
          const stopAt = Date.now();
          old.child.child.kill('SIGTERM');
          expect(await old.child.exited).toBe(0);
          // Gone once its calls were handed over, not at the end of its grace: nginx never lets it be quiet.
          stoppedInMs.push(Date.now() - stopAt);
          // Its id and port again, once it has left, as a container restarted in place.
          replicas[index] = await startReplica(env(index), cleanups);
          return old.child.stdout().split('\n').filter((line) => line.includes('webhook call handed over')).length;
        },
      });

      // nginx answered every request with what a replica answered: nothing lost on the way.
      const statuses = await front.statuses();
      console.info(`${ROUNDS} rolling restart(s) behind nginx: ${callers.length} calls, ${statuses.length} requests, stops took ${stoppedInMs.join(', ')} ms`);
      expect(statuses.filter((status) => status !== 200 && status !== 204), (await front.errors()).join('\n')).toEqual([]);
      await expectEveryCallKept(db, callers, turns);
      // Each stopping replica handed calls on rather than ending them.
      expect(handedOver.every((n) => n > 0), JSON.stringify(handedOver)).toBe(true);
      expect(stoppedInMs.every((ms) => ms < GRACE_MS / 2), JSON.stringify(stoppedInMs)).toBe(true);
    },
    CHILD_TEST_TIMEOUT_MS * (3 + 2 * ROUNDS),
  );
});

/** The fail_timeout of deploy/nginx.conf's servers, in seconds. */
async function shippedFailTimeoutS(): Promise<number> {
  const timeouts = [...(await readFile(path.join(repoRoot, 'deploy/nginx.conf'), 'utf8')).matchAll(/fail_timeout=(\d+)s/g)].map((m) => Number(m[1]));
  expect(timeouts.length, 'deploy/nginx.conf gives its servers a fail_timeout').toBeGreaterThan(0);
  return Math.max(...timeouts);
}
