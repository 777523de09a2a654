/**
 * Webhook calls going on from another replica: their owner killed mid-call, and a rolling restart
 * of three replicas under steady calls. Three Hotline processes on one PostgreSQL behind a
 * round-robin balancer that checks readiness as Kubernetes does and, like the shipped nginx.conf's
 * `proxy_next_upstream`, tries the next backend when one gave no answer or answered 503.
 * (test/replicas-nginx.test.ts does the same behind nginx itself, which checks no readiness.)
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import type { ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { scriptedReplicaEnv, startReplica, type StartedReplica } from './helpers/replica.js';
import { expectEveryCallKept, rollingRestartUnderCalls } from './helpers/rolling-restart.js';
import { freshStoreLocation, postgresReachable } from './helpers/stores.js';
import { countingModel, until, WebhookCaller } from './helpers/webhook-caller.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SECRET = 'cluster-secret-of-the-test-2';
const withPostgres = await postgresReachable();

/**
 * A balancer with nothing sticky: each request to the next backend that is ready (its /readyz,
 * checked every 100 ms, as Kubernetes takes a pod out of a Service), passed on to the one after when
 * refused. Connections to the backends are kept alive, as nginx's `keepalive` does.
 */
async function balancer(backends: string[]): Promise<{ url: string; refused: () => number }> {
  let next = 0;
  let refused = 0;
  const notReady = new Set<string>();
  const probe = setInterval(() => {
    for (const backend of backends) {
      fetch(`${backend}/readyz`).then(
        (res) => (res.ok ? notReady.delete(backend) : notReady.add(backend)),
        () => notReady.add(backend),
      );
    }
  }, 100);
  cleanups.push(() => clearInterval(probe));
  const pick = (start: number, tried: number): string => {
    const ready = backends.filter((backend) => !notReady.has(backend));
    const from = ready.length > 0 ? ready : backends;
    return from[(start + tried) % from.length]!;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const start = next++;
      const attempt = async (tried: number): Promise<void> => {
        const backend = pick(start, tried);
        try {
          const answer = await fetch(`${backend}${req.url ?? '/'}`, {
            method: req.method ?? 'POST',
            headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
            body,
          });
          const bytes = Buffer.from(await answer.arrayBuffer());
          if (answer.status === 503 && tried + 1 < backends.length) {
            refused++;
            return attempt(tried + 1);
          }
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
          res.end(bytes);
        } catch (error) {
          // As deploy/nginx.conf has nginx do with the webhook's POSTs: passed on when no answer came
          // (the connection refused, or closed before an answer).
          const code = (error as { cause?: { code?: string } }).cause?.code;
          if (tried + 1 < backends.length * 2) {
            refused++;
            return attempt(tried + 1);
          }
          res.writeHead(502).end(`backend failed: ${code ?? String(error)}`);
        }
      };
      void attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refused: () => refused };
}

function replicaEnv(place: { env: Record<string, string> }, llm: ScriptedLlmServer, id: string): Record<string, string> {
  return {
    ...scriptedReplicaEnv(place, llm.baseURL, id),
    CLUSTER_SECRET: SECRET,
    WEBHOOK_HOLD_MS: '0',
    // Every request comes from the balancer's one address, as a real service's come from its few: 50 calls
    // at test speed are more than the default budget of one client, which the replicas share.
    RATE_LIMIT_WEBHOOK_PER_MINUTE: '0',
    SHUTDOWN_GRACE_MS: '20000',
    LOG_LEVEL: 'info',
  };
}

interface CallRow {
  session_id: string;
  call_id: string;
  end_reason: string | null;
  turns: string;
  conversation: string | null;
  owner: string | null;
}

describe.skipIf(!withPostgres)('a webhook call goes on from another replica', () => {
  test(
    'its owner killed with SIGKILL mid-call: the next event reaches another replica, which takes the call up with everything the caller heard, as the same record',
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await countingModel();
      cleanups.push(() => llm.close());
      const replicas = await Promise.all(['k1', 'k2', 'k3'].map((id) => startReplica(replicaEnv(place, llm, id), cleanups)));
      const front = await balancer(replicas.map((r) => r.url));
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());

      const caller = new WebhookCaller(front.url, 'call-killed');
      await caller.start();
      await caller.ask('What time is it?');
      await caller.ask('Where are you?');
      const { rows: owners } = await db.query<{ replica: string }>("SELECT replica FROM webhook_sessions WHERE session_id = 'call-killed'");
      const owner = replicas[['k1', 'k2', 'k3'].indexOf(owners[0]!.replica)]!;
      // Written as it happens: the second reply, heard in full, is on record before the owner goes.
      await until(
        async () => (await db.query<CallRow>("SELECT conversation FROM calls WHERE session_id = 'call-killed'")).rows[0]?.conversation ?? '',
        (conversation) => conversation.includes('Answer 2 to Where are you?'),
        'the conversation on record',
      );
      owner.child.child.kill('SIGKILL');
      await owner.child.exited;

      await caller.ask('And who are you?');
      await caller.ask('Thank you.');
      await caller.hangUp();
      expect(caller.problems).toEqual([]);
      // The replica that took the call up knew all three questions before: its past came with it.
      expect(caller.heard.slice(1)).toEqual([
        'Answer 1 to What time is it?.',
        'Answer 2 to Where are you?.',
        'Answer 3 to And who are you?.',
        'Answer 4 to Thank you..',
      ]);

      const [row] = await until(
        async () => (await db.query<CallRow>("SELECT * FROM calls WHERE session_id = 'call-killed'")).rows,
        (rows) => rows[0]?.end_reason === 'caller_hung_up',
        'the call\'s end on record',
      );
      // One record of the whole call: four turns, the conversation as heard, held by a replica that lives.
      expect(JSON.parse(row!.turns)).toHaveLength(4);
      expect((JSON.parse(row!.conversation!) as { role: string; text: string }[]).map((line) => line.text)).toEqual([
        caller.heard[0],
        'What time is it?',
        'Answer 1 to What time is it?.',
        'Where are you?',
        'Answer 2 to Where are you?.',
        'And who are you?',
        'Answer 3 to And who are you?.',
        'Thank you.',
        'Answer 4 to Thank you..',
      ]);
      expect(row!.owner).not.toBe(owners[0]!.replica);
      expect((await db.query("SELECT call_id FROM calls")).rowCount).toBe(1);
    },
    CHILD_TEST_TIMEOUT_MS * 2,
  );

  test(
    'a rolling restart of three replicas under 50 steady webhook calls: every call, turn and record kept, each call handed on between turns',
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await countingModel();
      cleanups.push(() => llm.close());
      const ids = ['s1', 's2', 's3'];
      const replicas: StartedReplica[] = await Promise.all(ids.map((id) => startReplica(replicaEnv(place, llm, id), cleanups)));
      const backends = replicas.map((r) => r.url);
      const front = await balancer(backends);
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());

      const turns = 2;
      const { callers, handedOver } = await rollingRestartUnderCalls({
        front: front.url,
        steady: 50,
        turns,
        replicas: ids.length,
        rounds: 1,
        onCleanup: (stop) => cleanups.push(stop),
        async restart(index) {
          const old = replicas[index]!;
          old.child.child.kill('SIGTERM');
          expect(await old.child.exited).toBe(0);
          // The same replica id again: its successor starts once it has left (a StatefulSet's rolling update).
          const fresh = await startReplica(replicaEnv(place, llm, ids[index]!), cleanups);
          replicas[index] = fresh;
          backends[index] = fresh.url;
          return old.child.stdout().split('\n').filter((line) => line.includes('webhook call handed over')).length;
        },
      });
      await expectEveryCallKept(db, callers, turns);
      // Each stopping replica handed calls on rather than ending them.
      expect(handedOver.every((n) => n > 0), JSON.stringify(handedOver)).toBe(true);
    },
    CHILD_TEST_TIMEOUT_MS * 4,
  );
});
