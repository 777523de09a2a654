/**
 * One call per person at a time, and campaigns that do not stall, across three Hotline processes on
 * one PostgreSQL behind Debian's nginx (deploy/nginx.conf with its addresses changed). The voice
 * service's calls reach the replicas through the balancer, wherever it sends them; staff ask a
 * replica each for calls. The service is played here: it takes each dial request, tells by the
 * access token which replica asked, and lets the person pick up only when the test says so.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startScriptedLlmServer } from '../src/llm/scripted-server.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { adminApi } from './helpers/admin-api.js';
import { CHILD_TEST_TIMEOUT_MS, type HotlineProcess } from './helpers/child-process.js';
import { nginxPath, startNginx, type Nginx } from './helpers/nginx.js';
import { freePort } from './helpers/ports.js';
import { campaignReplicaEnv, startReplica, type StartedReplica } from './helpers/replica.js';
import { freshStoreLocation, postgresReachable } from './helpers/stores.js';

const withPostgres = await postgresReachable();
if (!nginxPath()) console.warn('nginx is not installed: the replicas behind a balancer are not tested (Debian: apt-get install nginx-light)');

const ADMIN = 'admin-secret-1';
const IDS = ['r1', 'r2', 'r3'] as const;
type ReplicaId = (typeof IDS)[number];

/** Looks again while `holds` is false: the replicas are other processes, and the store is where they meet. */
async function until(holds: () => Promise<boolean> | boolean, what: string | (() => Promise<string>), withinMs = 20_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await holds())) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms: ${typeof what === 'string' ? what : await what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!withPostgres || !nginxPath())('three replicas on one PostgreSQL behind nginx: one call per person, campaigns that never spin or stall', () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const replicas = new Map<ReplicaId, StartedReplica>();
  /** Every process started, the killed ones too: what they logged. */
  const processes: HotlineProcess[] = [];
  const ports = new Map<ReplicaId, number>();
  let envOf: (id: ReplicaId) => Record<string, string>;
  let service: FakeAiFlowApi;
  let balancer: Nginx;
  let db: pg.Client;
  /** Each dial request the service accepted: the number, and the replica that asked. */
  const dials: { to: string; by: ReplicaId }[] = [];
  const dialsTo = (to: string): ReplicaId[] => dials.filter((dial) => dial.to === to).map((dial) => dial.by);

  const start = async (id: ReplicaId): Promise<StartedReplica> => {
    const replica = await startReplica(envOf(id), cleanups);
    replicas.set(id, replica);
    processes.push(replica.child);
    return replica;
  };
  const replica = (id: ReplicaId): StartedReplica => replicas.get(id)!;
  /** Staff ask one replica for a call to `to`: the status it answers. */
  const ask = async (id: ReplicaId, to: string, variables: Record<string, string> = {}): Promise<number> =>
    (await adminApi(replica(id).url, ADMIN, 'POST', '/api/calls', { toPhoneNumber: to, variables })).status;
  const askEveryReplica = (to: string): Promise<number[]> => Promise.all(IDS.map((id) => ask(id, to)));
  /** The service puts a call through the balancer (a person picking up, or calling in); resolves with the greeting. */
  const connect = async (session: Record<string, unknown>): Promise<{ line: FakeVoiceService; greeting: string }> => {
    const line = await FakeVoiceService.connect(`${balancer.url.replace(/^http/, 'ws')}/ws`);
    cleanups.push(() => line.close());
    line.start(session);
    return { line, greeting: (await line.nextOfType('speak')).text ?? '' };
  };
  const campaign = async (on: ReplicaId, settings: Record<string, unknown>): Promise<string> => {
    const created = await adminApi(replica(on).url, ADMIN, 'POST', '/api/campaigns', settings);
    expect(created.status).toBe(201);
    return String(created.json.id);
  };
  const contact = async (campaignId: string, index: number) =>
    (await db.query<{ status: string; attempts: number; outcome: string | null }>('SELECT status, attempts, outcome FROM campaign_contacts WHERE campaign_id = $1 AND idx = $2', [campaignId, index]))
      .rows[0]!;
  const campaignState = async (campaignId: string): Promise<string> =>
    (await db.query<{ state: string }>('SELECT state FROM campaigns WHERE id = $1', [campaignId])).rows[0]!.state;
  /** The lines of every process that say one of this campaign's calls was placed. */
  const placedLines = (campaignId: string): number =>
    processes
      .flatMap((process) => process.stdout().split('\n'))
      .filter((line) => line.includes('"msg":"campaign call placed"') && line.includes(`"campaignId":"${campaignId}"`)).length;

  beforeAll(async () => {
    const place = await freshStoreLocation('postgres');
    cleanups.push(() => place.remove());
    const llm = await startScriptedLlmServer({ script: () => ({ content: 'Gern.' }), host: '127.0.0.1', ttftMs: 1, tokenDelayMs: 0 });
    cleanups.push(() => llm.close());
    service = await startFakeAiFlowApi({
      defaultFlow: { phoneNumber: true },
      onCall(call) {
        if (call.status !== 201) return;
        const by = /^Bearer token-(r\d)$/.exec(call.headers.authorization ?? '')?.[1] as ReplicaId;
        dials.push({ to: String((call.body as { toPhoneNumber: string }).toPhoneNumber), by });
      },
    });
    cleanups.push(() => service.close());
    for (const id of IDS) ports.set(id, await freePort());
    envOf = (id) => ({
      ...campaignReplicaEnv(place, id, { adminToken: ADMIN, serviceUrl: service.url, llmUrl: llm.baseURL }),
      // A port of its own, kept across a restart: the balancer knows the replicas by their addresses.
      PORT: String(ports.get(id)),
      DEFAULT_COUNTRY_CODE: '49',
    });
    await Promise.all(IDS.map(start));
    balancer = await startNginx(IDS.map((id) => ports.get(id)!));
    cleanups.push(() => balancer.close());
    db = new pg.Client({ connectionString: place.env.DATABASE_URL });
    await db.connect();
    cleanups.push(() => db.end());
  }, CHILD_TEST_TIMEOUT_MS);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  test(
    'a call requested at r1 and answered wherever the balancer sends it, and a person calling in: no replica dials them, by the API or a campaign, until their call ends; then once',
    async () => {
      const ANNA = '491511000001';
      const BEN = '491511000002';
      const CARL = '491511000003';
      expect(await ask('r1', ANNA, { name: 'Anna' })).toBe(201);
      const anna = await connect({ direction: 'outbound', to_phone_number: ANNA, from_phone_number: '4930123456' });
      expect(anna.greeting).toContain('Anna');
      // On the line at one replica: every replica refuses her, asked at the same moment; the service is not asked.
      expect(await askEveryReplica(ANNA)).toEqual([409, 409, 409]);
      expect(dialsTo(ANNA)).toEqual(['r1']);

      // Ben calls in, his number as the service writes it.
      const ben = await connect({ direction: 'inbound', from_phone_number: BEN, to_phone_number: '4930123456' });
      // On record as his call starts, a moment after (his greeting does not wait for the database): from then on no replica dials him.
      await until(async () => (await db.query('SELECT 1 FROM outbound_requests WHERE to_number = $1', [BEN])).rowCount === 1, "Ben's number held as his call's");
      expect(await askEveryReplica('0151 1000002')).toEqual([409, 409, 409]);

      // A campaign on r3 for Ben and Carl: Carl is dialled, Ben waits, uncounted, while on the line —
      // through Carl's answer timeout, after which the campaign looks at Ben again.
      const id = await campaign('r3', { name: 'while on the line', concurrency: 2, answer_timeout_seconds: 1, contacts: [{ phone: '+49 151 1000002' }, { phone: CARL }] });
      await until(async () => (await contact(id, 1)).outcome === 'no_answer', "Carl's call unanswered");
      expect(dialsTo(CARL)).toHaveLength(1);
      expect(await contact(id, 0)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(dialsTo(BEN)).toEqual([]);

      // Ben hangs up: the campaign calls him, once, within a look of any replica.
      ben.line.end('hangup');
      await until(() => dialsTo(BEN).length > 0, 'Ben dialled by the campaign once his call ended');
      await until(async () => (await campaignState(id)) === 'done', 'the campaign done (Ben does not pick up)');
      expect(dialsTo(BEN)).toHaveLength(1);
      expect(placedLines(id)).toBe(2);

      // Anna hangs up: her number is free again, from any replica.
      anna.line.end('hangup');
      await until(
        async () => (await db.query('SELECT 1 FROM outbound_requests WHERE to_number = $1', [ANNA])).rowCount === 0,
        "Anna's number freed once her call ended",
      );
      expect(await ask('r2', ANNA)).toBe(201);
      expect(dialsTo(ANNA)).toEqual(['r1', 'r2']);
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  test(
    'a campaign contact whose number another replica rings waits: no call logged as placed that the service was not asked for, no loop; it is called once the ring is over',
    async () => {
      const DORA = '491511000004';
      const EMIL = '491511000005';
      expect(await ask('r1', DORA)).toBe(201);
      const id = await campaign('r2', { name: 'rung elsewhere', concurrency: 2, answer_timeout_seconds: 1, contacts: [{ phone: DORA }, { phone: EMIL }] });
      // Through Emil's call and its answer timeout, Dora's contact waits, uncounted; the campaign looked at it again meanwhile.
      await until(async () => (await contact(id, 1)).outcome === 'no_answer', "Emil's call unanswered");
      expect(await contact(id, 0)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(dialsTo(DORA)).toEqual(['r1']);
      expect(placedLines(id)).toBe(1);

      // Dora's line was busy: the service says so, to whichever replica the balancer picks. The campaign calls her now.
      const busy = await FakeVoiceService.connect(`${balancer.url.replace(/^http/, 'ws')}/ws`);
      cleanups.push(() => busy.close());
      busy.send({ type: 'session_end', session: { id: 'dora-busy', direction: 'outbound', to_phone_number: DORA, from_phone_number: '4930123456' }, reason: 'busy' });
      await until(() => dialsTo(DORA).length === 2, 'Dora dialled by the campaign once the ring was over');
      await until(async () => (await campaignState(id)) === 'done', 'the campaign done');
      expect(dialsTo(DORA)).toHaveLength(2);
      expect(placedLines(id)).toBe(2);
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  test(
    'a replica killed while ringing a number that never answers and started again under its id dials the retry when due; killed after scheduling the next one, another replica dials it; every call logged as placed was dialled',
    async () => {
      const FRED = '491511000006';
      const id = await campaign('r3', {
        name: 'never answers',
        answer_timeout_seconds: 2,
        retries: { no_answer: { times: 2, after_minutes: 0.1 } },
        contacts: [{ phone: FRED }],
      });
      await until(() => dialsTo(FRED).length === 1, 'Fred dialled');
      // Whichever replica dialled him (the one the campaign was created on, unless another looked first).
      const victim = dialsTo(FRED)[0]!;

      // Killed while it rings, and started again under its id: its retry is dialled when due.
      replica(victim).child.child.kill('SIGKILL');
      await replica(victim).child.exited;
      await start(victim);
      const rows = async (): Promise<string> =>
        JSON.stringify({ contact: await contact(id, 0), requests: (await db.query('SELECT * FROM outbound_requests')).rows, dials: dialsTo(FRED) });
      await until(() => dialsTo(FRED).length === 2, async () => `the retry dialled after the restart: ${await rows()}`, 30_000);

      // Unanswered again: the replica that dialled it schedules the next retry, and is killed before it comes; another one dials it.
      const scheduler = dialsTo(FRED)[1]!;
      await until(async () => (await contact(id, 0)).attempts === 2 && (await contact(id, 0)).status === 'pending', 'the second retry scheduled');
      replica(scheduler).child.child.kill('SIGKILL');
      await replica(scheduler).child.exited;
      await until(() => dialsTo(FRED).length === 3, async () => `the second retry dialled by a live replica after the kill: ${await rows()}`, 30_000);
      expect(dialsTo(FRED)[2]).not.toBe(scheduler);
      await until(async () => (await campaignState(id)) === 'done', 'the campaign done');

      expect(await contact(id, 0)).toMatchObject({ status: 'done', outcome: 'no_answer', attempts: 3 });
      expect(dialsTo(FRED)).toHaveLength(3);
      // Each line a dial; the first dial's line may be missing: the kill can come between the service's 201 and the line.
      expect(placedLines(id)).toBeLessThanOrEqual(3);
      expect(placedLines(id)).toBeGreaterThanOrEqual(2);
    },
    CHILD_TEST_TIMEOUT_MS,
  );
});
