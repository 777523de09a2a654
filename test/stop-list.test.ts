/**
 * Every number that decides whether someone is called goes through one normalisation: contacts, the
 * campaign's stop list, the global one (also rows written before the fix), do_not_call and POST /api/calls.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/migrations.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { adminApi } from './helpers/admin-api.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startOutboundService, type OutboundService } from './helpers/outbound-service.js';
import { scriptByUserText } from './helpers/scripts.js';
import { pino } from 'pino';
import { openStore } from '../src/store/store.js';
import { freshStoreLocation, storeKinds, type StoreKind } from './helpers/stores.js';

const ADMIN = 'admin-token-1';
let env: TestHotline | undefined;
let service: OutboundService | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await env?.close();
  await service?.close();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  env = undefined;
  service = undefined;
});

const script = scriptByUserText({ 'Never call me again.': { toolCalls: [{ name: 'do_not_call', arguments: '{"reason":"asked"}' }] } });

/** Hotline on a fresh store of `kind`, unless `vars` names one. */
async function start(kind: StoreKind, vars: Record<string, string> = {}): Promise<TestHotline> {
  service = await startOutboundService();
  const location = await freshStoreLocation(kind);
  cleanups.push(() => location.remove());
  env = await startTestHotline(script, { ADMIN_TOKEN: ADMIN, DEFAULT_COUNTRY_CODE: '49', ...service.vars, ...location.env, ...vars });
  return env;
}

const api = (method: string, route: string, body?: unknown) => adminApi(env!.hotline.url, ADMIN, method, route, body);

async function progress(id: string): Promise<CampaignProgress> {
  return (await api('GET', `/api/campaigns/${id}`)).json as unknown as CampaignProgress;
}

describe.each(await storeKinds())('stop lists compare numbers as numbers, not as typed, on %s', (kind) => {
  test("a campaign's stop list in international (00) or national form stops the contact written +49", async () => {
    await start(kind);
    const created = await api('POST', '/api/campaigns', {
      name: 'stops',
      contacts: 'phone,name\n+49 151 0000001,Anna\n+49 151 0000002,Ben\n+49 151 0000003,Clara\n',
      stop_list: ['0049 151 0000001', '0151 0000002'],
    });
    expect(created.status).toBe(201);
    const id = String(created.json.id);
    expect(await service!.requested(1)).toEqual(['491510000003']);
    expect(await progress(id)).toMatchObject({ called: 1, outcomes: { refused: 2 } });
    const contacts = await env!.hotline.campaigns.contacts(id);
    expect(contacts.map((c) => [c.number, c.outcome, c.attempts])).toEqual([
      ['491510000001', 'refused', 0],
      ['491510000002', 'refused', 0],
      ['491510000003', null, 1],
    ]);
  });

  test('a stop-list entry that is not a number is refused with its place, and nothing is created', async () => {
    await start(kind);
    const refused = await api('POST', '/api/campaigns', {
      name: 'bad stops',
      contacts: [{ phone: '+49 151 0000001' }],
      stop_list: ['+49 151 0000009', 'Anna Schmidt', '12', 491510000008],
    });
    expect(refused.status).toBe(400);
    expect(refused.json.problems).toEqual([
      { field: 'stop_list[1]', message: expect.stringMatching(/^Invalid phone number "Anna Schmidt": it contains letters/) },
      { field: 'stop_list[2]', message: expect.stringMatching(/^Invalid phone number "12": .*too few/) },
    ]);
    expect((await api('GET', '/api/campaigns')).json.campaigns).toEqual([]);
    expect(service!.numbers()).toEqual([]);
  });

  test('do_not_call stores the number normalised, however the service wrote it: no later call reaches it, by campaign or API', async () => {
    await start(kind);
    const line = await FakeVoiceService.connect(env!.hotline.wsUrl);
    cleanups.push(() => line.close());
    // The service writes the number called its own way.
    line.start({ direction: 'outbound', to_phone_number: '0049 151 0000001', from_phone_number: '4930000000' });
    await line.nextOfType('speak');
    line.say('Never call me again.');
    await line.nextOfType('speak');
    line.end('hangup');
    await expect.poll(() => env!.hotline.registry.size).toBe(0);

    expect(await api('POST', '/api/calls', { toPhoneNumber: '+49 151 0000001' })).toEqual({
      status: 409,
      json: { error: '491510000001 is on the stop list: it is never called' },
    });
    const created = await api('POST', '/api/campaigns', { name: 'again', contacts: 'phone\n0151 0000001\n0151 0000002\n' });
    expect(await service!.requested(1)).toEqual(['491510000002']);
    expect((await env!.hotline.campaigns.contacts(String(created.json.id)))[0]).toMatchObject({ outcome: 'refused', attempts: 0 });
  });

  test('rows stored unnormalised in the current schema still stop: the global list is rewritten at start, a campaign never checked reads its own list normalised', async () => {
    // As an operator's hand or an older release's rows would be: written straight into the store.
    const location = await freshStoreLocation(kind);
    cleanups.push(() => location.remove());
    const store = await openStore(location.location, pino({ level: 'silent' }));
    const at = '2026-03-01T10:00:00.000Z';
    await store.db
      .insertInto('stop_list')
      .values([
        { number: '00491510000001', reason: 'asked on a call', added_at: at },
        { number: '01510000002', reason: 'asked on a call', added_at: at },
        { number: 'Anna', reason: 'typed by hand', added_at: at },
      ])
      .execute();
    const settings = { name: 'unchecked', time_zone: 'UTC', concurrency: 1, pace_ms: 0, answer_timeout_seconds: 60, retries: {}, stop_list: ['0049 151 0000003'] };
    // stop_mark left at its default, -1: never checked against a normalised list.
    await store.db
      .insertInto('campaigns')
      .values({ id: 'c-old', name: settings.name, settings: JSON.stringify(settings), state: 'paused', created_at: at, updated_at: at })
      .execute();
    await store.db
      .insertInto('campaign_contacts')
      .values([1, 2, 3, 4].map((i) => ({ campaign_id: 'c-old', idx: i - 1, number: `49151000000${i}`, variables: '{}', status: 'pending' as const, updated_at: at })))
      .execute();
    await store.close();

    await start(kind, location.env);
    expect((await api('POST', '/api/campaigns/c-old/resume')).status).toBe(200);
    expect(await service!.requested(1)).toEqual(['491510000004']);
    expect(await progress('c-old')).toMatchObject({ called: 1, outcomes: { refused: 3 } });
    expect(await api('POST', '/api/calls', { toPhoneNumber: '0151 0000002' })).toMatchObject({ status: 409 });
    expect(service!.numbers()).toEqual(['491510000004']);
  });

  test.runIf(kind === 'sqlite')('rows stored before numbers were normalised still stop: the global list is rewritten at start, an old campaign reads its own list normalised', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-stops-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'hotline.db');
    // A database as the release before wrote it: schema version 4, numbers stored as typed.
    const old = new BetterSqlite3(file);
    for (const step of SQLITE_MIGRATIONS.slice(0, 4)) old.exec(step);
    old.pragma('user_version = 4');
    const at = '2026-03-01T10:00:00.000Z';
    const addStop = old.prepare('INSERT INTO stop_list (number, reason, added_at) VALUES (?, ?, ?)');
    addStop.run('00491510000001', 'asked on a call', at);
    addStop.run('01510000002', 'asked on a call', at);
    const settings = {
      name: 'from before',
      time_zone: 'UTC',
      concurrency: 1,
      pace_ms: 0,
      answer_timeout_seconds: 60,
      retries: { no_answer: { times: 0, after_minutes: 0 }, busy: { times: 0, after_minutes: 0 }, voicemail: { times: 0, after_minutes: 0 } },
      stop_list: ['0049 151 0000003'],
    };
    old.prepare(`INSERT INTO campaigns (id, name, settings, state, created_at, updated_at) VALUES ('c-old', ?, ?, 'paused', ?, ?)`).run(
      settings.name,
      JSON.stringify(settings),
      at,
      at,
    );
    const addContact = old.prepare(
      `INSERT INTO campaign_contacts (campaign_id, idx, number, variables, status, next_attempt_at, updated_at) VALUES ('c-old', ?, ?, '{}', 'pending', 0, ?)`,
    );
    for (let i = 1; i <= 4; i++) addContact.run(i - 1, `49151000000${i}`, at);
    old.close();

    await start(kind, { DATABASE_FILE: file });
    expect((await api('POST', '/api/campaigns/c-old/resume')).status).toBe(200);
    expect(await service!.requested(1)).toEqual(['491510000004']);
    expect(await progress('c-old')).toMatchObject({ called: 1, outcomes: { refused: 3 } });
    expect(await api('POST', '/api/calls', { toPhoneNumber: '0151 0000002' })).toMatchObject({ status: 409 });
    expect(service!.numbers()).toEqual(['491510000004']);
  });
});
