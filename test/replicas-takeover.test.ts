/**
 * Webhook calls going on from another replica: their owner killed mid-call, and a rolling restart
 * of three replicas under steady calls. Three Hotline processes on one PostgreSQL behind a
 * round-robin balancer that, like nginx's `proxy_next_upstream`, tries the next backend when one
 * refuses the connection or answers 503.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, test } from 'vitest';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { scriptedReplicaEnv, startReplica, type StartedReplica } from './helpers/replica.js';
import { lastUserText, userTexts } from './helpers/scripts.js';
import { freshStoreLocation, postgresReachable } from './helpers/stores.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SECRET = 'cluster-secret-of-the-test-2';
const withPostgres = await postgresReachable();

interface Answer {
  status: number;
  body: unknown;
}

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
          // As nginx does with a POST: passed on only when it never reached the backend (connection refused).
          const code = (error as { cause?: { code?: string } }).cause?.code;
          if (code === 'ECONNREFUSED' && tried + 1 < backends.length * 2) {
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

const post = async (url: string, event: unknown): Promise<Answer> => {
  const res = await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as unknown) : text || undefined };
};

/** The model answers each question naming how many the caller has asked so far: a call that lost its past answers wrongly. */
async function countingModel(): Promise<ScriptedLlmServer> {
  const llm = await startScriptedLlmServer({
    script: (request) => ({ content: `Answer ${userTexts(request).length} to ${lastUserText(request)}.` }),
    host: '127.0.0.1',
    ttftMs: 1,
    tokenDelayMs: 0,
    record: false,
  });
  cleanups.push(() => llm.close());
  return llm;
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

/** A webhook call as the service plays it, one event after another; what the caller heard, in order. */
class WebhookCaller {
  readonly heard: string[] = [];
  readonly problems: string[] = [];

  constructor(
    private readonly url: string,
    readonly id: string,
  ) {}

  private get session() {
    return { id: this.id };
  }

  private async send(event: Record<string, unknown>): Promise<Answer> {
    const answer = await post(this.url, { ...event, session: this.session });
    if (answer.status !== 200 && answer.status !== 204) this.problems.push(`${String(event.type)}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer;
  }

  /** Plays every speak an answer carries, and the ones the answers to its playback events bring. */
  private async play(answer: Answer): Promise<void> {
    let pending: Answer | undefined = answer;
    while (pending?.status === 200) {
      const action = pending.body as { type?: string; text?: string };
      if (action.type !== 'speak' || typeof action.text !== 'string') {
        this.problems.push(`unexpected action ${JSON.stringify(action)}`);
        return;
      }
      this.heard.push(action.text);
      await this.send({ type: 'assistant_speak', text: action.text, duration_ms: 200, speech_started_at: 0 });
      pending = await this.send({ type: 'assistant_speech_ended' });
    }
  }

  async start(): Promise<void> {
    await this.play(
      await this.send({ type: 'session_start', session: { ...this.session, direction: 'inbound', from_phone_number: '4915112345678', to_phone_number: '4930123456' } }),
    );
  }

  async ask(question: string): Promise<void> {
    await this.play(await this.send({ type: 'user_speak', text: question, barged_in: false }));
  }

  async hangUp(): Promise<void> {
    await this.send({ type: 'session_end', reason: 'hangup' });
  }
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(value).slice(0, 400)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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
      const ids = ['s1', 's2', 's3'];
      const replicas: StartedReplica[] = await Promise.all(ids.map((id) => startReplica(replicaEnv(place, llm, id), cleanups)));
      const backends = replicas.map((r) => r.url);
      const front = await balancer(backends);
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());

      const TURNS = 2;
      const STEADY = 50;
      const callers: WebhookCaller[] = [];
      let restarting = true;
      const pause = () => new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 300));
      // Each of the 50 places starts a new call as soon as its last one hung up, until the restart is over.
      // A failing test stops the callers too, so none posts on into a torn-down balancer.
      cleanups.push(() => (restarting = false));
      const steady = Array.from({ length: STEADY }, async (_, place) => {
        for (let round = 0; restarting; round++) {
          const caller = new WebhookCaller(front.url, `steady-${place}-${round}`);
          callers.push(caller);
          await caller.start();
          for (let turn = 1; turn <= TURNS; turn++) {
            await pause();
            await caller.ask(`Question ${turn} of ${caller.id}`);
          }
          await pause();
          await caller.hangUp();
        }
      });

      // Awaited below; marked handled now so a failure before then is the test's, not an unhandled rejection.
      for (const caller of steady) caller.catch(() => undefined);
      const handedOver: number[] = [];
      for (const [index, id] of ids.entries()) {
        // Calls of every replica in progress before it is told to stop.
        await until(async () => callers.length, (n) => n >= STEADY + 15 * (index + 1), 'calls under way');
        const old = replicas[index]!;
        old.child.child.kill('SIGTERM');
        expect(await old.child.exited).toBe(0);
        handedOver.push(old.child.stdout().split('\n').filter((line) => line.includes('webhook call handed over')).length);
        // The same replica id again: its successor starts once it has left (a StatefulSet's rolling update).
        const fresh = await startReplica(replicaEnv(place, llm, id), cleanups);
        replicas[index] = fresh;
        backends[index] = fresh.url;
      }
      restarting = false;
      await Promise.all(steady);

      // Nothing the callers did went wrong, and every question had its one right answer, with the call's past.
      expect(callers.flatMap((c) => c.problems.map((p) => `${c.id}: ${p}`))).toEqual([]);
      for (const caller of callers) {
        expect(caller.heard.slice(1)).toEqual(Array.from({ length: TURNS }, (_, i) => `Answer ${i + 1} to Question ${i + 1} of ${caller.id}.`));
      }
      // Each stopping replica handed calls on rather than ending them.
      expect(handedOver.every((n) => n > 0)).toBe(true);

      // One record per call, each ended by its caller, with every turn.
      const rows = await until(
        async () => (await db.query<CallRow>('SELECT * FROM calls')).rows,
        (all) => all.length >= callers.length && all.every((row) => row.end_reason !== null),
        'every call\'s end on record',
      ).catch(async (error: unknown) => {
        const { rows: open } = await db.query<CallRow>('SELECT session_id, end_reason, owner FROM calls WHERE end_reason IS DISTINCT FROM \'caller_hung_up\'');
        throw new Error(`${String(error)}; not ended by their callers: ${JSON.stringify(open)}`);
      });
      expect(rows).toHaveLength(callers.length);
      for (const row of rows) {
        expect({ session: row.session_id, end: row.end_reason, turns: (JSON.parse(row.turns) as unknown[]).length }).toEqual({
          session: row.session_id,
          end: 'caller_hung_up',
          turns: TURNS,
        });
      }
      // And one report each.
      await until(async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM reports')).rows[0]!.n), (n) => n >= callers.length, 'every report');
      expect(Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM reports')).rows[0]!.n)).toBe(callers.length);
    },
    CHILD_TEST_TIMEOUT_MS * 4,
  );
});
