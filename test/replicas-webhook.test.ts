/**
 * Webhook calls across three Hotline processes on one PostgreSQL, behind a round-robin balancer
 * with no stickiness (the service names the session only in the body): each event lands on
 * another replica, and is answered by the one that saw the call's session_start.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { startScriptedLlmServer } from '../src/llm/scripted-server.js';
import { CHILD_TEST_TIMEOUT_MS, spawnHotline } from './helpers/child-process.js';
import { scriptedReplicaEnv, startReplica } from './helpers/replica.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, postgresReachable } from './helpers/stores.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SECRET = 'cluster-secret-of-the-test-1';
const withPostgres = await postgresReachable();
const twoSentences = 'We open at nine. We close at six.';

interface Answer {
  status: number;
  body: unknown;
}

type Post = (event: unknown) => Promise<Answer>;

const poster =
  (url: string): Post =>
  async (event) => {
    const res = await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

/** A load balancer in its simplest form: each request to the next backend in turn, nothing sticky. */
async function roundRobin(backends: readonly string[]): Promise<{ url: string; hits: number[] }> {
  const hits = backends.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = next++ % backends.length;
      hits[index]! += 1;
      fetch(`${backends[index]}${req.url ?? '/'}`, {
        method: req.method ?? 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: Buffer.concat(chunks),
      })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/** The model of these tests: it answers the one question they ask. */
async function openingHoursModel() {
  const llm = await startScriptedLlmServer({
    script: scriptByUserText({ 'When are you open?': { content: twoSentences } }),
    host: '127.0.0.1',
    ttftMs: 1,
    tokenDelayMs: 0,
  });
  cleanups.push(() => llm.close());
  return llm;
}

/** One call as the service plays it over the webhook: the greeting, a question, the reply, the hangup. */
async function playCall(post: Post, id: string): Promise<Answer[]> {
  const session = { id };
  const events = [
    { type: 'session_start', session: { ...session, direction: 'inbound', from_phone_number: '4915112345678', to_phone_number: '4930123456' } },
    { type: 'assistant_speech_ended', session },
    { type: 'user_speak', session, text: 'When are you open?', barged_in: false },
    { type: 'assistant_speak', session, text: twoSentences, duration_ms: 500, speech_started_at: 0 },
    { type: 'assistant_speech_ended', session },
    { type: 'session_end', session, reason: 'hangup' },
  ];
  const answers: Answer[] = [];
  for (const event of events) answers.push(await post(event));
  // The session id is the call's own; everything else must be the same whichever way the events went.
  return JSON.parse(JSON.stringify(answers).replaceAll(id, '<session>')) as Answer[];
}

describe.skipIf(!withPostgres)('webhook calls across three replicas behind a round-robin balancer', () => {
  test(
    'the events of one call land on all three replicas in turn and are answered exactly as one Hotline answers them; the call is recorded once, by the replica that saw its start',
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await openingHoursModel();
      const replicas = await Promise.all(
        ['r1', 'r2', 'r3'].map((id) => startReplica({ ...scriptedReplicaEnv(place, llm.baseURL, id), CLUSTER_SECRET: SECRET }, cleanups)),
      );
      const urls = replicas.map((replica) => replica.url);
      const balancer = await roundRobin(urls);

      const balanced = await playCall(poster(balancer.url), 'call-balanced');
      expect(balancer.hits).toEqual([2, 2, 2]);
      const direct = await playCall(poster(urls[0]!), 'call-direct');
      expect(balanced).toEqual(direct);
      expect(balanced[0]).toMatchObject({ status: 200, body: { type: 'speak' } });
      expect(balanced[2]).toMatchObject({ status: 200, body: { type: 'speak', session_id: '<session>', text: twoSentences } });
      // One model request per call: the question was answered once, by the owner.
      expect(llm.requests).toHaveLength(2);

      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());
      const stored = async () =>
        (await db.query<{ session_id: string; owner: string; end_reason: string | null }>("SELECT session_id, owner, end_reason FROM calls WHERE session_id = 'call-balanced'")).rows;
      // Written as it happens: the row reaches its end a moment after the last answer.
      while ((await stored())[0]?.end_reason == null) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await stored()).toEqual([{ session_id: 'call-balanced', owner: 'r1', end_reason: 'caller_hung_up' }]);
      // Both calls are over: nobody owns them any more (each owner lets go as its call ends).
      while (((await db.query('SELECT session_id FROM webhook_sessions')).rowCount ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, 50));

      // The replicas' door to each other opens only to the cluster's secret, and only on their own listener.
      const forge = (base: string | undefined) =>
        fetch(`${base}/internal/webhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-hotline-cluster-secret': 'guess' },
          body: JSON.stringify({ type: 'session_end', session: { id: 'x' } }),
        });
      expect((await forge(replicas[1]!.internalUrl)).status).toBe(401);
      expect((await forge(urls[1])).status).toBe(404);
    },
    CHILD_TEST_TIMEOUT_MS * 2,
  );
});

/** Each event on a connection of its own, as the service's requests may come: node:cluster hands each to the next worker. */
const freshConnectionPoster =
  (url: string): Post =>
  (event) =>
    new Promise((resolve, reject) => {
      const req = request(`${url}/webhook`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined });
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify(event));
    });

describe('WORKERS', () => {
  test('WORKERS=2 without DATABASE_URL does not start, and says it needs PostgreSQL', async () => {
    const child = spawnHotline({ WORKERS: '2' });
    expect(await child.exited).toBe(1);
    expect(child.stderr()).toMatch(/WORKERS=2 runs 2 processes, and they must share one store: set DATABASE_URL \(PostgreSQL\)/);
  }, CHILD_TEST_TIMEOUT_MS);

  test.skipIf(!withPostgres)(
    'WORKERS=2: two processes on one port, each a replica; a webhook call whose events reach both is answered as one Hotline answers it; SIGTERM stops both',
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await openingHoursModel();
      const { child, url } = await startReplica(
        { ...scriptedReplicaEnv(place, llm.baseURL, 'box'), WORKERS: '2' },
        cleanups,
      );
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());
      const replicas = async () => (await db.query<{ id: string }>('SELECT id FROM replicas ORDER BY id')).rows.map((r) => r.id);
      // Both workers are up once both are registered (each logs its own start, on the same port).
      while ((await replicas()).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await replicas()).toEqual(['box-1', 'box-2']);

      const answers = await playCall(freshConnectionPoster(url), 'call-on-workers');
      expect(answers.map((a) => a.status)).toEqual([200, 204, 200, 204, 204, 204]);
      expect(answers[2]).toMatchObject({ body: { type: 'speak', text: twoSentences } });
      expect(llm.requests).toHaveLength(1);
      // One call, held by one worker: the other forwarded what reached it (one adopting the call would make a second row).
      const rows = async () => (await db.query<{ owner: string; end_reason: string | null }>("SELECT owner, end_reason FROM calls WHERE session_id = 'call-on-workers'")).rows;
      while ((await rows())[0]?.end_reason == null) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await rows()).toEqual([{ owner: expect.stringMatching(/^box-[12]$/), end_reason: 'caller_hung_up' }]);
      // Each worker's own loopback port serves what the replicas ask of each other, and nothing of the public app.
      const internals = (await db.query<{ internal_url: string }>('SELECT internal_url FROM replicas ORDER BY id')).rows.map((r) => r.internal_url);
      expect(internals).toHaveLength(2);
      for (const internal of internals) {
        expect(internal).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect((await fetch(`${internal}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
        expect((await fetch(`${internal}/healthz`)).status).toBe(200);
      }
      expect((await fetch(`${url}/internal/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);

      child.child.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      expect(await replicas()).toEqual([]);
    },
    CHILD_TEST_TIMEOUT_MS * 2,
  );
});
