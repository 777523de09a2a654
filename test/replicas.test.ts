/**
 * Several Hotlines on one store: they know each other by their heartbeats, a start settles only
 * what its own earlier start left, and what a dead replica left is settled by a live one, once.
 */
import { hostname } from 'node:os';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { ReplicaRegistry } from '../src/cluster/replica-registry.js';
import { sharedFailureCount } from '../src/cluster/shared-failures.js';
import { LiveRelay } from '../src/cluster/live-relay.js';
import type { CallActivity } from '../src/call/ports/call-activity.js';
import { postgresPool } from '../src/store/postgres/postgres-dialect.js';
import { FailureBudget } from '../src/transport/rate-limit.js';
import { startScriptedLlmServer } from '../src/llm/scripted-server.js';
import { startFakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { startReplica } from './helpers/replica.js';
import { startReportReceiver } from './helpers/report-receiver.js';
import { eventsOf } from './helpers/sse-events.js';
import { freshStore, freshStoreLocation, postgresReachable, storeKinds } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FAST = { heartbeatMs: 50, deadAfterMs: 300 };

/** pg warns once per process when a client is sent a query while busy (an error in pg 9): caught from the file's start. */
const busyClientWarnings: string[] = [];
process.on('warning', (warning) => {
  if (/already executing a query/.test(warning.message)) busyClientWarnings.push(warning.message);
});

describe.each(await storeKinds())('the replica registry on %s', (kind) => {
  test('a replica registers, sees itself alive, and leaves without a trace', async () => {
    const store = await freshStore(kind);
    cleanups.push(() => store.close());
    const one = await ReplicaRegistry.join(store, { id: 'hotline-1', internalUrl: 'http://10.0.0.1:3000', ...FAST }, logger);
    const two = await ReplicaRegistry.join(store, { id: 'hotline-2', ...FAST }, logger);
    expect((await one.alive()).map((r) => [r.id, r.internalUrl, r.stopping])).toEqual([
      ['hotline-1', 'http://10.0.0.1:3000', false],
      ['hotline-2', null, false],
    ]);
    await two.stopping();
    expect((await one.alive()).find((r) => r.id === 'hotline-2')?.stopping).toBe(true);
    await two.leave();
    await one.leave();
    expect(await store.db.selectFrom('replicas').selectAll().execute()).toEqual([]);
  });

  test('an id held by a replica that still beats elsewhere is refused, saying what to set; one that stopped beating is taken over', async () => {
    const store = await freshStore(kind);
    cleanups.push(() => store.close());
    const row = { instance: 'other', host: `not-${hostname()}`, pid: 1, internal_url: null, started_at: new Date().toISOString() };
    await store.db.insertInto('replicas').values({ ...row, id: 'taken', heartbeat_at: Date.now() }).execute();
    // The other process goes on beating while this one waits to see whether it is gone. A beat that failed
    // shows as the join below succeeding; the last one is awaited before the store closes under it.
    let lastBeat: Promise<unknown> = Promise.resolve();
    const beating = setInterval(() => {
      lastBeat = store.db.updateTable('replicas').set({ heartbeat_at: Date.now() }).where('id', '=', 'taken').execute().catch(() => undefined);
    }, 20);
    cleanups.push(async () => {
      clearInterval(beating);
      await lastBeat;
    });
    await expect(ReplicaRegistry.join(store, { id: 'taken', ...FAST }, logger)).rejects.toThrow(
      kind === 'postgres'
        ? /REPLICA_ID taken is held by a Hotline that is running \(on not-.*, pid 1\): give each process sharing DATABASE_URL a REPLICA_ID of its own/
        : // A SQLite file is one process's: no REPLICA_ID or DATABASE_URL of its own would make the other go.
          /^DATABASE_FILE .* is in use by a Hotline that is running \(on not-.*, pid 1\): stop that one first, or give this one a DATABASE_FILE \(or TRANSCRIPTS_DIR\) of its own/,
    );

    await store.db.insertInto('replicas').values({ ...row, id: 'gone', heartbeat_at: Date.now() - 60_000 }).execute();
    const taker = await ReplicaRegistry.join(store, { id: 'gone', ...FAST }, logger);
    cleanups.push(() => taker.leave());
    const held = await store.db.selectFrom('replicas').select(['instance', 'host']).where('id', '=', 'gone').executeTakeFirstOrThrow();
    expect(held).toEqual({ instance: taker.instance, host: hostname() });
  });

  test('a replica judges others dead only once it has reached the store for a whole dead window', async () => {
    const store = await freshStore(kind);
    cleanups.push(() => store.close());
    const one = await ReplicaRegistry.join(store, { id: 'judge', ...FAST }, logger);
    cleanups.push(() => one.leave());
    expect(one.judges).toBe(false);
    await new Promise<void>((resolve) => {
      const stop = one.onBeat(() => {
        if (!one.judges) return;
        stop();
        resolve();
      });
    });
    expect(one.judges).toBe(true);
  });
});

describe.skipIf(!(await postgresReachable()))('two Hotline processes on one PostgreSQL', () => {
  test(
    'a replica killed with a call on the line: a live one records it cut off and reports it once; its restart leaves the live one\'s call alone',
    async () => {
      const place = await freshStoreLocation('postgres');
      cleanups.push(() => place.remove());
      const llm = await startScriptedLlmServer({ script: () => ({ content: 'Gern. Was kann ich noch tun?' }), host: '127.0.0.1', ttftMs: 1, tokenDelayMs: 0 });
      cleanups.push(() => llm.close());
      const receiver = await startReportReceiver('report-secret-1');
      cleanups.push(() => receiver.close());
      // Each replica has its own disk for transcripts and journal, as each pod would.
      const start = (id: string) =>
        startReplica(
          {
            ...place.env,
            REPLICA_ID: id,
            OPENAI_API_KEY: 'test-key',
            OPENAI_BASE_URL: llm.baseURL,
            LLM_MODEL: 'test-model',
            REPORT_FIELDS: 'false',
            REPORT_WEBHOOK_URL: receiver.url,
            REPORT_WEBHOOK_SECRET: 'report-secret-1',
          },
          cleanups,
        );
      const talk = async (wsUrl: string, sessionId: string): Promise<FakeVoiceService> => {
        const client = await FakeVoiceService.connect(wsUrl, { sessionId });
        cleanups.push(() => client.close());
        client.start();
        await client.nextOfType('speak');
        await client.whenQuiet();
        client.say('Ich rufe wegen meiner Bestellung an.');
        await client.nextOfType('speak');
        return client;
      };
      const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
      await db.connect();
      cleanups.push(() => db.end());
      const calls = async () =>
        (await db.query<{ session_id: string; end_reason: string | null; owner: string }>('SELECT session_id, end_reason, owner FROM calls ORDER BY session_id')).rows;
      const until = async (holds: () => Promise<boolean>): Promise<void> => {
        // No event crosses the processes: the store is looked at, as an operator would.
        while (!(await holds())) await new Promise((resolve) => setTimeout(resolve, 100));
      };

      const a = await start('replica-a');
      const b = await start('replica-b');
      const onA = await talk(a.wsUrl, 'call-on-a');
      await talk(b.wsUrl, 'call-on-b');
      await until(async () => (await calls()).length === 2);
      expect((await db.query('SELECT id FROM replicas ORDER BY id')).rows.map((r: { id: string }) => r.id)).toEqual(['replica-a', 'replica-b']);

      b.child.child.kill('SIGKILL');
      await b.child.exited;
      // Within seconds of b's last heartbeat, a takes b's call over and records it cut off; its own call goes on.
      const report = JSON.parse((await receiver.request(0)).body) as { session_id: string; end_reason: string };
      expect(report).toMatchObject({ session_id: 'call-on-b', end_reason: 'cut_off' });
      expect(await calls()).toEqual([
        { session_id: 'call-on-a', end_reason: null, owner: 'replica-a' },
        { session_id: 'call-on-b', end_reason: 'cut_off', owner: 'replica-a' },
      ]);

      // b starts again: what its earlier start left is settled already, and a's call in progress is a's.
      const again = await start('replica-b');
      await until(async () => (await db.query('SELECT 1 FROM replicas WHERE id = $1', ['replica-b'])).rowCount === 1);
      expect((await calls())[0]).toEqual({ session_id: 'call-on-a', end_reason: null, owner: 'replica-a' });

      onA.end();
      const second = JSON.parse((await receiver.request(1)).body) as { session_id: string; end_reason: string };
      expect(second).toMatchObject({ session_id: 'call-on-a', end_reason: 'caller_hung_up' });
      for (const { child } of [a, again]) {
        child.child.kill('SIGTERM');
        await child.exited;
      }
      // Each report went exactly once, and both replicas left the store cleanly.
      expect(receiver.received.map((r) => (JSON.parse(r.body) as { session_id: string }).session_id)).toEqual(['call-on-b', 'call-on-a']);
      expect((await db.query('SELECT id FROM replicas')).rowCount).toBe(0);
    },
    CHILD_TEST_TIMEOUT_MS * 2,
  );

  test('an outbound call requested on one replica is greeted with its variables on the other; a second request for the number is refused by either', async () => {
    const place = await freshStoreLocation('postgres');
    cleanups.push(() => place.remove());
    const api = await startFakeAiFlowApi({ token: 'platform-token', flows: { 'flow-1': { phoneNumber: true } } });
    cleanups.push(() => api.close());
    const start = (id: string) =>
      startReplica(
        {
          ...place.env,
          REPLICA_ID: id,
          ADMIN_TOKEN: 'admin-secret-1',
          AIFLOW_API_URL: api.url,
          AIFLOW_ACCESS_TOKEN: 'platform-token',
          AIFLOW_ID: 'flow-1',
          AIFLOW_BILLING_DEVICE: 'dev-1',
        },
        cleanups,
      );
    const call = (on: { url: string }, variables: Record<string, string>) =>
      fetch(`${on.url}/api/calls`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-secret-1', 'content-type': 'application/json' },
        body: JSON.stringify({ toPhoneNumber: '+49 151 1234567', variables }),
      });
    const [a, b] = await Promise.all([start('replica-a'), start('replica-b')]);

    expect((await call(a, { name: 'Anna', topic: 'your order 42' })).status).toBe(201);
    // The number is being rung: the other replica knows it from the store.
    const again = await call(b, { name: 'Ben' });
    expect(again.status).toBe(409);
    expect(api.calls).toHaveLength(1);

    // The service's load balancer sends the answered call to b.
    const service = await FakeVoiceService.connect(b.wsUrl);
    cleanups.push(() => service.close());
    service.start({ direction: 'outbound', to_phone_number: '491511234567', from_phone_number: '4930123456' });
    const greeting = (await service.nextOfType('speak')).text ?? '';
    expect(greeting).toContain('Anna');
    expect(greeting).toContain('your order 42');
  }, CHILD_TEST_TIMEOUT_MS * 2);
});

describe.skipIf(!(await postgresReachable()))('an operator on any replica', () => {
  test('a login on one replica holds on the others, and a logout on any ends it on all', async () => {
    const place = await freshStoreLocation('postgres');
    cleanups.push(() => place.remove());
    const start = (id: string) => startReplica({ ...place.env, REPLICA_ID: id, ADMIN_TOKEN: 'admin-secret-1', CLUSTER_SECRET: 'cluster-secret-of-the-test-1' }, cleanups);
    const [a, b] = await Promise.all([start('replica-a'), start('replica-b')]);
    const login = await fetch(`${a.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: 'admin-secret-1' }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const calls = (on: { url: string }) => fetch(`${on.url}/dashboard/calls`, { redirect: 'manual', headers: { cookie, accept: 'text/html' } });
    expect((await calls(a)).status).toBe(200);
    expect((await calls(b)).status).toBe(200);
    expect((await fetch(`${b.url}/dashboard/logout`, { method: 'POST', redirect: 'manual', headers: { cookie } })).status).toBe(303);
    expect((await calls(a)).status).toBe(303);
    expect((await calls(b)).status).toBe(303);
  }, CHILD_TEST_TIMEOUT_MS * 2);

  test('the dashboard of one replica shows a live call of another, and its hangup ends that call; a wrong cluster secret opens nothing', async () => {
    const place = await freshStoreLocation('postgres');
    cleanups.push(() => place.remove());
    const start = (id: string) =>
      startReplica({ ...place.env, REPLICA_ID: id, ADMIN_TOKEN: 'admin-secret-1', CLUSTER_SECRET: 'cluster-secret-of-the-test-1' }, cleanups);
    const [a, b] = await Promise.all([start('replica-a'), start('replica-b')]);
    // a's dashboard, watching live calls.
    const login = await fetch(`${a.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'admin-secret-1' }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const watching = new AbortController();
    cleanups.push(() => watching.abort());
    const stream = await fetch(`${a.url}/dashboard/live`, { headers: { cookie, accept: 'text/event-stream' }, signal: watching.signal });
    const events = eventsOf(stream.body!);
    expect(await events.next('snapshot')).toEqual([]);

    const service = await FakeVoiceService.connect(b.wsUrl);
    cleanups.push(() => service.close());
    service.start();
    await service.nextOfType('speak');
    type Update = { calls: { sessionId: string }[]; ended: string[] };
    await events.nextWith('update', (u) => (u as Update).calls.some((c) => c.sessionId === service.sessionId));
    // a's admin API lists it too, with the replica holding it: the session id an operator's own tool acts on.
    const listed = await fetch(`${a.url}/api/calls`, { headers: { authorization: 'Bearer admin-secret-1' } });
    expect(await listed.json()).toEqual({ calls: [expect.objectContaining({ sessionId: service.sessionId, direction: 'inbound', replica: 'replica-b' })] });
    const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
    await db.connect();
    cleanups.push(() => db.end());
    // The call's row names its replica from session_start on: a's operator finds it there.
    while (((await db.query('SELECT 1 FROM calls WHERE session_id = $1', [service.sessionId])).rowCount ?? 0) === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    // Its page on a shows the conversation so far, from the call's record (the transcript is on b's disk).
    const page = async () => (await fetch(`${a.url}/dashboard/calls/${service.sessionId}`, { headers: { cookie } })).text();
    let shown = await page();
    while (!shown.includes('How can I help you today?')) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      shown = await page();
    }
    expect(shown).not.toContain('The transcript file is gone');

    const hangUp = await fetch(`${a.url}/api/calls/${service.sessionId}/hangup`, { method: 'POST', headers: { authorization: 'Bearer admin-secret-1' } });
    expect([hangUp.status, await hangUp.json()]).toEqual([202, { status: 'ending' }]);
    // The goodbye plays by itself (automatic playback): ending it by hand raced its timer on a loaded machine.
    await service.nextOfType('speak');
    await service.nextOfType('hangup');
    service.end('hangup');
    await events.nextWith('update', (u) => (u as Update).ended.includes(service.sessionId));
    // Nobody else's: a call no replica holds is a 404 as on one Hotline.
    const none = await fetch(`${a.url}/api/calls/no-such-call/hangup`, { method: 'POST', headers: { authorization: 'Bearer admin-secret-1' } });
    expect(none.status).toBe(404);
    const forged = await fetch(`${b.internalUrl}/internal/calls/${service.sessionId}/hangup`, { method: 'POST', headers: { 'x-hotline-cluster-secret': 'guess' } });
    expect(forged.status).toBe(401);
    // The public port does not know the replicas' routes at all.
    const outside = await fetch(`${b.url}/internal/calls/${service.sessionId}/hangup`, { method: 'POST', headers: { 'x-hotline-cluster-secret': 'guess' } });
    expect(outside.status).toBe(404);
  }, CHILD_TEST_TIMEOUT_MS * 2);
});

describe.skipIf(!(await postgresReachable()))('wrong secrets across replicas', () => {
  test('a guesser spread over two replicas gets the budget once, not once per replica', async () => {
    // The table comes with the store's migrations.
    const store = await freshStore('postgres');
    cleanups.push(() => store.close());
    const url = store.location.env.DATABASE_URL!;
    const pools = [postgresPool(url, logger, 2), postgresPool(url, logger, 2)];
    cleanups.push(() => Promise.all(pools.map((pool) => pool.end())));
    const [a, b] = pools.map((pool) => new FailureBudget(3, sharedFailureCount(pool, 3, logger)));
    await a!.spend('203.0.113.9');
    await a!.spend('203.0.113.9');
    expect(await a!.exhausted('203.0.113.9')).toBe(0);
    // The third wrong secret, at the other replica: the address is out of failures, there as here.
    await b!.spend('203.0.113.9');
    expect(await b!.exhausted('203.0.113.9')).toBeGreaterThan(0);
    await a!.spend('203.0.113.9');
    expect(await a!.exhausted('203.0.113.9')).toBeGreaterThan(0);
    // Another address has its own budget.
    expect(await a!.exhausted('203.0.113.10')).toBe(0);
  });
});

describe.skipIf(!(await postgresReachable()))('live calls relayed between replicas', () => {
  test('a hundred calls with long words changing at once all reach the other replica, in notifications PostgreSQL accepts; their end too', async () => {
    const store = await freshStore('postgres');
    cleanups.push(() => store.close());
    const url = store.location.env.DATABASE_URL!;
    const [one, two] = await Promise.all([
      ReplicaRegistry.join(store, { id: 'one', ...FAST }, logger),
      ReplicaRegistry.join(store, { id: 'two', ...FAST }, logger),
    ]);
    cleanups.push(() => Promise.all([one!.leave(), two!.leave()]));
    const shown = new Map<string, CallActivity>();
    let ended = 0;
    const seen: { resolve: () => void; until: () => boolean }[] = [];
    const check = () => seen.filter((w) => w.until()).forEach((w) => w.resolve());
    const view = {
      changed: (call: CallActivity) => (shown.set(call.sessionId, call), check()),
      ended: (id: string) => (shown.delete(id), (ended += 1), check()),
    };
    const until = (holds: () => boolean) => new Promise<void>((resolve) => (holds() ? resolve() : seen.push({ resolve, until: holds })));
    const sender = new LiveRelay(url, one!, { changed: () => undefined, ended: () => undefined }, logger);
    const receiver = new LiveRelay(url, two!, view, logger);
    await Promise.all([sender.start(), receiver.start()]);
    cleanups.push(() => Promise.all([sender.close(), receiver.close()]));
    const words = 'Grüße aus München — '.repeat(30);
    for (let i = 0; i < 100; i++) {
      sender.changed({ sessionId: `call-${i}`, direction: 'inbound', from: '4915112345678', to: '4930123456', startedAt: new Date().toISOString(), phase: 'speaking', callerSaid: words, agentSaid: words });
    }
    await until(() => shown.size === 100);
    expect(shown.get('call-42')?.callerSaid?.length).toBeLessThanOrEqual(200);
    for (let i = 0; i < 100; i++) sender.ended(`call-${i}`);
    await until(() => ended === 100);
    expect(shown.size).toBe(0);
    // Many messages at once, and every hello's answer, queue on the one listening connection.
    expect(busyClientWarnings).toEqual([]);
  });
});
