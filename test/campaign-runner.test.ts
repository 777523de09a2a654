/**
 * The scheduler against the real store, SQLite and PostgreSQL, with a dialer that records instead
 * of calling (the campaigns tests drive the whole path through the emulator): what survives a
 * restart, what holds when its steps interleave with events, and that a tick asks the database for
 * the next contact and counts, never for the whole list.
 */
import { CompiledQuery, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { CampaignRunner } from '../src/campaigns/campaign-runner.js';
import { ShiftedClock } from '../src/campaigns/clock.js';
import { CampaignSettingsSchema, openCampaignStore, type Contact } from '../src/campaigns/definition.js';
import type { Dialer, DialRequest } from '../src/campaigns/dialer.js';
import { PendingCalls } from '../src/outbound/pending-calls.js';
import type { Store } from '../src/store/store.js';
import { callSummary } from './helpers/reports.js';
import { freshStore, storeKinds, type StoreKind } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const kinds = await storeKinds();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function recordingDialer(): Dialer & { dialed: DialRequest[] } {
  const calls = new PendingCalls(60_000);
  const dialed: DialRequest[] = [];
  return {
    dialed,
    missing: () => [],
    refusal: async () => undefined,
    dial(request) {
      dialed.push(request);
      return Promise.resolve(calls.add(request.to, request.variables, request.tags));
    },
    forget: (call) => calls.remove(call),
  };
}

async function setUp(kind: StoreKind, clock: ShiftedClock) {
  const store = await freshStore(kind);
  cleanups.push(() => store.close());
  const repository = openCampaignStore(store);
  const runner = (dialer: Dialer) => {
    const r = new CampaignRunner({ repository, dialer, clock, logger });
    // Its work settled before the store closes (cleanups run in reverse).
    cleanups.push(async () => {
      r.close();
      await r.settled();
    });
    return r;
  };
  return { store, repository, runner };
}

const contacts = (n: number): Contact[] => Array.from({ length: n }, (_, i) => ({ number: `4915100000${String(i).padStart(3, '0')}`, variables: {} }));

describe.each(kinds)('CampaignRunner on %s', (kind) => {
  test('the pace holds across a restart: the next call waits for pace_ms after the last one the old process started', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = await setUp(kind, clock);
    const settings = CampaignSettingsSchema.parse({ name: 'paced', pace_ms: 60_000, concurrency: 5 });
    const first = recordingDialer();
    const before = runner(first);
    const id = await before.create(settings, contacts(3));
    await before.settled();
    expect(first.dialed).toHaveLength(1);
    before.close();

    clock.advance(10_000);
    const second = recordingDialer();
    const after = runner(second);
    await after.start();
    // The next call is 50 s away, not now; the old process's call may still be ringing (it is not dialled again).
    expect(second.dialed).toHaveLength(0);
    await after.settleOrphaned(6_000);
    expect(await repository.contact(id, 0)).toMatchObject({ status: 'calling' });
    clock.advance(50_000);
    await after.tick();
    expect(second.dialed.map((d) => d.to)).toEqual(['4915100000001']);
    // Unanswered once its answer timeout (60 s) has passed since it was dialled.
    await after.settleOrphaned(6_000);
    expect(await repository.contact(id, 0)).toMatchObject({ status: 'done', outcome: 'no_answer' });
  });

  test('a number that joins the global stop list while waiting for a retry is refused at the next look, never called', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = await setUp(kind, clock);
    const dialer = recordingDialer();
    const r = runner(dialer);
    const settings = CampaignSettingsSchema.parse({ name: 'retry', retries: { busy: { times: 1, after_minutes: 10 } } });
    const id = await r.create(settings, contacts(1));
    await r.settled();
    const [request] = dialer.dialed;
    r.callNotConnected({ toPhoneNumber: request!.to, variables: {}, tags: request!.tags, requestedAt: clock.now() }, 'busy');
    await r.settled();
    expect(await repository.contact(id, 0)).toMatchObject({ status: 'pending', outcome: 'busy', attempts: 1 });

    await repository.addToStopList(request!.to, 'asked on another campaign', new Date(clock.now()));
    clock.advance(10 * 60_000);
    await r.tick();
    expect(dialer.dialed).toHaveLength(1);
    expect(await repository.contact(id, 0)).toMatchObject({ status: 'done', outcome: 'refused' });
  });

  test('ticks asked for all at once place each contact once, within concurrency', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = await setUp(kind, clock);
    const dialer = recordingDialer();
    const r = runner(dialer);
    const id = await r.create(CampaignSettingsSchema.parse({ name: 'burst', concurrency: 3 }), contacts(10));
    await Promise.all([r.tick(), r.tick(), r.tick(), r.tick()]);
    await r.settled();
    expect(dialer.dialed.map((d) => d.to)).toEqual(contacts(3).map((c) => c.number));
    expect((await repository.tally(id)).inCall).toBe(3);
  });

  test('two schedulers on one store (two Hotlines) never claim the same contact, and hold the concurrency together', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = await setUp(kind, clock);
    const one = recordingDialer();
    const two = recordingDialer();
    const a = runner(one);
    const b = runner(two);
    const id = await a.create(CampaignSettingsSchema.parse({ name: 'shared', concurrency: 4 }), contacts(12));
    await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    await Promise.all([a.settled(), b.settled()]);
    const dialled = [...one.dialed, ...two.dialed].map((d) => d.to);
    expect(new Set(dialled).size).toBe(dialled.length);
    expect(dialled).toHaveLength(4);
    expect((await repository.tally(id)).inCall).toBe(4);
  });

  test('replicas: a start settles only its own attempts; a dead replica\'s are settled by another, a ringing one only after its answer timeout', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { store } = await setUp(kind, clock);
    const runnerOf = (replica: string, dialer: Dialer) => {
      const r = new CampaignRunner({ repository: openCampaignStore(store, replica), dialer, clock, logger });
      cleanups.push(async () => {
        r.close();
        await r.settled();
      });
      return r;
    };
    const repository = openCampaignStore(store);
    // Replica a places two calls; the first is answered. Replica b is alive, a never beats again.
    const a = runnerOf('a', recordingDialer());
    const id = await a.create(CampaignSettingsSchema.parse({ name: 'replicas', concurrency: 2, answer_timeout_seconds: 30 }), contacts(3));
    await a.settled();
    await a.callStarted({ sessionId: 's-0', direction: 'outbound', to: contacts(1)[0]!.number, tags: { campaign: id, contact: '0' } });
    a.close();
    await store.db
      .insertInto('replicas')
      .values({ id: 'b', instance: 'i-b', host: 'h', pid: 1, internal_url: null, started_at: new Date().toISOString(), heartbeat_at: Date.now() + 60_000 })
      .execute();

    // b's start leaves a's attempts alone: a may be alive, as far as a start knows.
    const b = runnerOf('b', recordingDialer());
    await b.start();
    expect(await repository.contact(id, 0)).toMatchObject({ status: 'reached' });
    expect(await repository.contact(id, 1)).toMatchObject({ status: 'calling' });

    // a is dead: the person it reached is done, never called again; the ringing call waits for its answer timeout.
    expect(await b.settleOrphaned(6_000)).toBe(1);
    expect(await repository.contact(id, 0)).toMatchObject({ status: 'done', outcome: 'completed' });
    expect(await repository.contact(id, 1)).toMatchObject({ status: 'calling' });
    clock.advance(31_000);
    await b.settleOrphaned(6_000);
    await b.settled();
    expect(await repository.contact(id, 1)).toMatchObject({ status: 'done', outcome: 'no_answer' });
  });

  test('a pause committed while a tick runs stops its next call; a resume during a tick is looked at after it', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { runner } = await setUp(kind, clock);
    let r: CampaignRunner | undefined;
    let id = '';
    const dialed: string[] = [];
    const calls = new PendingCalls(60_000);
    let pauseAt = -1;
    const dialer: Dialer = {
      missing: () => [],
      // The second look pauses the campaign before the tick claims that contact.
      refusal: async () => {
        if (dialed.length === pauseAt) await r!.pause(id);
        return undefined;
      },
      dial: async (request) => (dialed.push(request.to), calls.add(request.to, request.variables, request.tags)),
      forget: (call) => calls.remove(call),
    };
    r = runner(dialer);
    pauseAt = 1;
    id = await r.create(CampaignSettingsSchema.parse({ name: 'pause', concurrency: 5 }), contacts(5));
    await r.settled();
    expect(dialed).toHaveLength(1);
    expect((await r.require(id)).state).toBe('paused');

    pauseAt = -1;
    await r.resume(id);
    await r.settled();
    expect(dialed).toEqual(contacts(5).map((c) => c.number));
  });

  test('session_start and the answer timeout racing for one attempt: one of them settles it', async () => {
    const clock = new ShiftedClock(Date.parse('2026-03-02T10:00:00Z'));
    const { repository, runner } = await setUp(kind, clock);
    const dialer = recordingDialer();
    const r = runner(dialer);
    const settings = CampaignSettingsSchema.parse({ name: 'race', answer_timeout_seconds: 30, retries: { no_answer: { times: 1, after_minutes: 5 } } });
    const id = await r.create(settings, contacts(1));
    await r.settled();
    const [request] = dialer.dialed;
    // Both at once: the call ended and the contact's call never connected (a busy line), as two events would.
    r.callEnded(callSummary({ direction: 'outbound', tags: request!.tags }));
    r.callNotConnected({ toPhoneNumber: request!.to, variables: {}, tags: request!.tags, requestedAt: clock.now() }, 'busy');
    await r.settled();
    const contact = await repository.contact(id, 0);
    // Whichever wrote first, the other changed nothing: one outcome, one attempt.
    expect(contact?.attempts).toBe(1);
    expect(['completed', 'busy']).toContain(contact?.outcome);
    expect(dialer.dialed).toHaveLength(1);
  });
});

/** Records every query the repository sends, to explain each one. */
function recorder(): KyselyPlugin & { nodes: RootOperationNode[] } {
  const nodes: RootOperationNode[] = [];
  return {
    nodes,
    transformQuery: ({ node }) => (nodes.push(node), node),
    transformResult: async ({ result }) => result,
  };
}

/** Every method of the repository that reads or changes contacts, once. */
async function everyContactQuery(store: Store): Promise<void> {
  const repository = openCampaignStore(store);
  const now = new Date();
  await repository.beginCampaign('x', CampaignSettingsSchema.parse({ name: 'x' }), { merged: 0, zones: ['UTC'] }, now);
  await repository.insertContacts('x', contacts(3), 0, () => false, now);
  await repository.completeCampaign('x', now);
  await repository.contacts('x');
  await repository.contactsAfter('x', -1, 10);
  await repository.contactsIn('x', 'pending');
  await repository.contact('x', 0);
  await repository.nextDue('x', Date.now(), 'UTC', ['UTC', 'Europe/Berlin'], [1]);
  await repository.nextDueAfter('x', Date.now());
  await repository.refuseStopped('x', 0, ['4915100000002'], now);
  await repository.tally('x');
  await repository.startAttempt('x', 0, { at: Date.now(), concurrency: 1, paceMs: 0 }, now);
  await repository.updateContact('x', 0, { status: 'done' }, now, ['calling']);
  await repository.discardSome('x', 10);
}

describe('the repository walks indexes', () => {
  test("on SQLite, its queries and changes on contacts use an index: no scan of the table, no sort for ORDER BY", async () => {
    const store = await freshStore('sqlite');
    cleanups.push(() => store.close());
    const plugin = recorder();
    const recorded: Store = { ...store, db: store.db.withPlugin(plugin) };
    await everyContactQuery(recorded);
    const compiled = plugin.nodes.map((node) => store.db.getExecutor().compileQuery(node, { queryId: 'explain' }));
    const onContacts = compiled.filter((query) => /^\s*(select|update|delete)[\s\S]*"?campaign_contacts"?/i.test(query.sql));
    expect(onContacts.length).toBeGreaterThanOrEqual(12);
    for (const query of onContacts) {
      const { rows } = await store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${query.sql}`, [...query.parameters]));
      const detail = rows.map((row) => row.detail).join('\n');
      expect(detail, query.sql).not.toMatch(/SCAN campaign_contacts|TEMP B-TREE FOR (LAST TERM OF )?ORDER BY/);
    }
  });

  test.runIf(kinds.includes('postgres'))('on PostgreSQL, with sequential scans priced out, no query on contacts needs one', async () => {
    const store = await freshStore('postgres');
    cleanups.push(() => store.close());
    const plugin = recorder();
    await everyContactQuery({ ...store, db: store.db.withPlugin(plugin) });
    const compiled = plugin.nodes.map((node) => store.db.getExecutor().compileQuery(node, { queryId: 'explain' }));
    const onContacts = compiled.filter((query) => /^\s*(select|update|delete)[\s\S]*"?campaign_contacts"?/i.test(query.sql));
    expect(onContacts.length).toBeGreaterThanOrEqual(12);
    await store.db.transaction().execute(async (trx) => {
      // Off, a sequential scan is still chosen where no index serves: exactly what this looks for.
      await trx.executeQuery(CompiledQuery.raw('SET LOCAL enable_seqscan = off'));
      for (const query of onContacts) {
        const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]));
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        expect(plan, query.sql).not.toMatch(/Seq Scan on campaign_contacts/);
      }
    });
  });
});
