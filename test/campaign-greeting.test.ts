/**
 * A campaign's contact is on record as reached before the person hears the greeting, so a process
 * killed during the greeting never calls them again; and a store that cannot write does not leave
 * the person listening to silence.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterEach, expect, test } from 'vitest';
import { openCampaignStore } from '../src/campaigns/definition.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'admin-secret-1';
const NUMBER = '491511234567';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * How long the greeting may wait for the contact's write in the tests of the order: under load the
 * default bound (250 ms) passes before a slowed store or test has let the write through, and the
 * greeting rightly goes first. The bound itself is the locked SQLite test's.
 */
const ORDER_WAIT_MS = 120_000;

async function start(
  env: Record<string, string>,
  startedRecordWaitMs?: number,
): Promise<{ hotline: TestHotline; api: FakeAiFlowApi; dialled: Promise<unknown> }> {
  let dialledNow: () => void = () => undefined;
  const dialled = new Promise<void>((resolve) => (dialledNow = resolve));
  const api = await startFakeAiFlowApi({ token: 'platform-token', flows: { 'flow-1': { phoneNumber: true } }, onAnswered: () => dialledNow() });
  cleanups.push(() => api.close());
  const hotline = await startTestHotline(scriptByUserText({}), {
    ADMIN_TOKEN: ADMIN,
    AIFLOW_API_URL: api.url,
    AIFLOW_ACCESS_TOKEN: 'platform-token',
    AIFLOW_ID: 'flow-1',
    AIFLOW_BILLING_DEVICE: 'dev-1',
    ...env,
  }, {}, startedRecordWaitMs === undefined ? {} : { startedRecordWaitMs });
  cleanups.push(() => hotline.close());
  return { hotline, api, dialled };
}

async function campaignOfOne(hotline: TestHotline): Promise<string> {
  const res = await fetch(`${hotline.hotline.url}/api/campaigns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'greeting', contacts: [{ phone: NUMBER }], answer_timeout_seconds: 60 }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function answer(hotline: TestHotline): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(hotline.hotline.wsUrl);
  cleanups.push(() => service.close());
  service.start({ direction: 'outbound', to_phone_number: NUMBER, from_phone_number: '4930123456' });
  return service;
}

test.each(await storeKinds())('the contact is reached in the store before the greeting leaves Hotline (%s)', async (kind) => {
  const location: TestStoreLocation = await freshStoreLocation(kind);
  cleanups.push(() => location.remove());
  const { hotline, dialled } = await start(location.env, ORDER_WAIT_MS);
  const id = await campaignOfOne(hotline);
  await dialled;
  const service = await answer(hotline);
  await service.nextOfType('speak');
  // Read the moment the greeting arrived, before anything else could write it.
  const contact = await openCampaignStore(hotline.hotline.store).contact(id, 0);
  expect(contact).toMatchObject({ status: 'reached' });
});

test.runIf((await storeKinds()).includes('postgres'))(
  'on PostgreSQL, while the contact row is locked the greeting waits: it leaves once the contact is written reached',
  async () => {
    const location = await freshStoreLocation('postgres');
    cleanups.push(() => location.remove());
    const { hotline, dialled } = await start(location.env, ORDER_WAIT_MS);
    const id = await campaignOfOne(hotline);
    await dialled;
    // The dial's own writes are done: the only write left to wait on the row is the answer's.
    await hotline.hotline.campaigns.settled();
    const other = new pg.Client({ connectionString: location.env.DATABASE_URL });
    await other.connect();
    cleanups.push(() => other.end());
    await other.query('BEGIN');
    await other.query('SELECT 1 FROM campaign_contacts WHERE campaign_id = $1 FOR UPDATE', [id]);
    const service = await answer(hotline);
    let greeted = false;
    const greeting = service.nextOfType('speak').then(() => (greeted = true));
    // No event says Hotline's write is waiting for the row: the server's own view of its sessions does — asked
    // outside the locking transaction, which would see the view as it was at its first look.
    const watcher = new pg.Client({ connectionString: location.env.DATABASE_URL });
    await watcher.connect();
    cleanups.push(() => watcher.end());
    const waiting = async (): Promise<boolean> =>
      (await watcher.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount! > 0;
    while (!(await waiting())) await new Promise((resolve) => setImmediate(resolve));
    expect(greeted).toBe(false);
    await other.query('COMMIT');
    await greeting;
    expect(await openCampaignStore(hotline.hotline.store).contact(id, 0)).toMatchObject({ status: 'reached' });
  },
);

test('a locked SQLite file holds the greeting only a moment: the person is greeted, and the contact is reached once the lock goes', async () => {
  const location = await freshStoreLocation('sqlite');
  cleanups.push(() => location.remove());
  const { hotline, dialled } = await start(location.env);
  const id = await campaignOfOne(hotline);
  await dialled;
  const file = location.env.DATABASE_FILE!;
  // A backup or a sqlite3 shell holding the write lock for as long as the call lasts.
  const other = new BetterSqlite3(file);
  other.exec('BEGIN IMMEDIATE');
  let released = false;
  try {
    const service = await answer(hotline);
    expect((await service.nextOfType('speak')).text).toBeTruthy();
    expect(released).toBe(false);
    // Read through the connection holding the lock (Hotline's one SQLite connection waits behind its write).
    expect(other.prepare('SELECT status FROM campaign_contacts WHERE campaign_id = ? AND idx = 0').get(id)).toEqual({ status: 'calling' });
  } finally {
    other.exec('ROLLBACK');
    released = true;
    other.close();
  }
  // The write waited for the lock and went through: the runner says so when it lands.
  const changed = new Promise<void>((resolve) => hotline.hotline.campaigns.onChange(resolve));
  if ((await openCampaignStore(hotline.hotline.store).contact(id, 0))?.status !== 'reached') await changed;
  expect(await openCampaignStore(hotline.hotline.store).contact(id, 0)).toMatchObject({ status: 'reached' });
});
