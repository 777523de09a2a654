/**
 * One person, one call at a time: duplicates in a list are merged at creation, and a number being
 * rung or on the line is not dialled again — by a campaign or the outbound API — until that call ends.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { ReplicaRegistry } from '../src/cluster/replica-registry.js';
import { OutboundRequestRepository } from '../src/store/outbound-request-repository.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { adminApi } from './helpers/admin-api.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startOutboundService, type OutboundService } from './helpers/outbound-service.js';
import { scriptByUserText } from './helpers/scripts.js';
import { runCampaignCli } from '../src/cli/campaign.js';
import { freshStoreLocation, storeKinds, type StoreKind, type TestStoreLocation } from './helpers/stores.js';
import { textSink } from './helpers/text-sink.js';

const ADMIN = 'admin-token-1';
let env: TestHotline | undefined;
let service: OutboundService | undefined;
let location: TestStoreLocation | undefined;
const lines: FakeVoiceService[] = [];

afterEach(async () => {
  for (const line of lines.splice(0)) await line.close();
  await env?.close();
  await service?.close();
  await location?.remove();
  env = undefined;
  service = undefined;
  location = undefined;
});

async function start(kind: StoreKind, logger?: Logger): Promise<TestHotline> {
  service = await startOutboundService();
  location = await freshStoreLocation(kind);
  env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN, DEFAULT_COUNTRY_CODE: '49', ...service.vars, ...location.env }, {}, logger ? { logger } : {});
  return env;
}

const api = (method: string, route: string, body?: unknown) => adminApi(env!.hotline.url, ADMIN, method, route, body);

/** The voice service connects a call to Hotline, as it does when someone picks up (outbound) or calls in (inbound). */
async function ring(session: Record<string, unknown>): Promise<FakeVoiceService> {
  const line = await FakeVoiceService.connect(env!.hotline.wsUrl);
  lines.push(line);
  line.start(session);
  await line.nextOfType('speak');
  return line;
}

/** Resolves once the runner has settled what a call's end changed (the contact done, the next one placed). */
function changed(): Promise<void> {
  return new Promise((resolve) => {
    const stop = env!.hotline.campaigns.onChange(() => {
      stop();
      resolve();
    });
  });
}

describe.each(await storeKinds())('duplicates on %s', (kind) => {
  test('one person written three ways in one list is one contact, called once; the answer and the status say so', async () => {
    await start(kind);
    const created = await api('POST', '/api/campaigns', {
      name: 'three ways',
      concurrency: 3,
      contacts: 'phone,name\n+49 151 0000001,Anna\n0049 151 0000001,Anna S.\n0151 0000001,A. Schmidt\n+49 151 0000002,Ben\n',
    });
    expect(created).toEqual({
      status: 201,
      json: {
        id: expect.any(String),
        contacts: 2,
        merged: 2,
        duplicates: [{ number: '491510000001', kept: 'line 2', merged: ['line 3', 'line 4'] }],
      },
    });
    const id = String(created.json.id);
    expect((await service!.requested(2)).sort()).toEqual(['491510000001', '491510000002']);
    expect((await api('GET', `/api/campaigns/${id}`)).json).toMatchObject({ contacts: 2, merged: 2, called: 2 });
    const out: string[] = [];
    expect(await runCampaignCli(['status', id, '--url', env!.hotline.url], { ADMIN_TOKEN: ADMIN }, (l) => out.push(l), (l) => out.push(l))).toBe(0);
    expect(out).toEqual(['three ways [running]: called 2/2, reached 0, voicemail 0, pending 0, in call 2, 2 duplicate rows merged']);
    expect((await env!.hotline.campaigns.contacts(id))[0]!.variables).toEqual({ name: 'Anna' });
  });

  test('npm run campaign -- start says how many rows were merged', async () => {
    await start(kind);
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-duplicates-'));
    try {
      await writeFile(path.join(dir, 'people.csv'), 'phone,name\n+49 151 0000001,Anna\n0151 0000001,Anna\n');
      await writeFile(path.join(dir, 'spring.yaml'), 'name: spring\ncontacts: people.csv\n');
      const out: string[] = [];
      const argv = ['start', path.join(dir, 'spring.yaml'), '--url', env!.hotline.url];
      expect(await runCampaignCli(argv, { ADMIN_TOKEN: ADMIN }, (l) => out.push(l), (l) => out.push(l))).toBe(0);
      expect(out).toEqual([expect.stringMatching(/^campaign \S+ started with 1 contacts \(1 duplicate row merged\)$/)]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.each(await storeKinds())('a number in a call is not dialled again until that call ends, on %s', (kind) => {
  test('across the outbound API and campaigns: 409 for the API, the campaign contact waits uncounted, then is called once', async () => {
    await start(kind);
    expect(await api('POST', '/api/calls', { toPhoneNumber: '+49 151 0000001' })).toMatchObject({ status: 201 });
    // Being rung: asked for again in another form, it is refused, nothing reaches the service.
    const again = await api('POST', '/api/calls', { toPhoneNumber: '0151 0000001' });
    expect(again).toEqual({
      status: 409,
      json: { error: '491510000001 is already in a call (being rung, or on the line): it is not called again until that call has ended' },
    });
    expect(service!.numbers()).toEqual(['491510000001']);

    const created = await api('POST', '/api/campaigns', { name: 'meanwhile', concurrency: 2, contacts: [{ phone: '0151 0000001' }, { phone: '0151 0000002' }] });
    const id = String(created.json.id);
    expect(await service!.requested(2)).toEqual(['491510000001', '491510000002']);
    const runner = env!.hotline.campaigns;
    expect((await runner.contacts(id))[0]).toMatchObject({ status: 'pending', attempts: 0, outcome: null });

    // The person picks up the API's call: on the line now, still not dialled again.
    const line = await ring({ direction: 'outbound', to_phone_number: '491510000001', from_phone_number: '4930000000' });
    await runner.tick();
    expect((await api('POST', '/api/calls', { toPhoneNumber: '+49 151 0000001' })).status).toBe(409);
    expect((await runner.contacts(id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    expect(service!.numbers()).toHaveLength(2);

    // The call ends: the waiting contact is called, once.
    const settled = changed();
    line.end('hangup');
    await settled;
    expect(await service!.requested(3)).toEqual(['491510000001', '491510000002', '491510000001']);
    expect((await runner.contacts(id))[0]).toMatchObject({ status: 'calling', attempts: 1 });
    expect((await api('GET', `/api/campaigns/${id}`)).json as unknown as CampaignProgress).toMatchObject({ called: 2, inCall: 2, outcomes: { failed: 0 } });
  });

  test('a number another replica rings: the contact waits uncounted, no call is logged as placed that the service was not asked for, none is retried in a loop; it is called once the ring is over', async () => {
    const log = textSink();
    await start(kind, pino({ level: 'info' }, log.stream));
    const placed = () => log.text().split('\n').filter((line) => line.includes('"msg":"campaign call placed"')).length;
    // Another replica on the same store rings the number: nothing of it is in this process's memory.
    const { store } = env!.hotline;
    const elsewhere = await ReplicaRegistry.join(store, { id: 'elsewhere' }, pino({ level: 'silent' }));
    try {
      const rows = new OutboundRequestRepository(store.db, { replica: elsewhere.id, instance: elsewhere.instance }, store.dialect, elsewhere.deadAfterMs);
      const ring = { toPhoneNumber: '491510000009', variables: {}, requestedAt: Date.now() };
      expect(await rows.add(ring, 60_000)).toEqual({ added: true });

      const created = await api('POST', '/api/campaigns', { name: 'rung elsewhere', concurrency: 2, contacts: [{ phone: '0151 0000009' }, { phone: '0151 0000010' }] });
      const id = String(created.json.id);
      expect(await service!.requested(1)).toEqual(['491510000010']);
      // The runner looks at the waiting contact again (a loop would look in a moment, each time a call "placed").
      await changed();
      expect((await env!.hotline.campaigns.contacts(id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
      expect(service!.numbers()).toEqual(['491510000010']);
      expect(placed()).toBe(1);

      // The ring is over there: the contact is called, once, within a look.
      await rows.remove(ring);
      expect(await service!.requested(2)).toEqual(['491510000010', '491510000009']);
      await env!.hotline.campaigns.settled();
      expect((await env!.hotline.campaigns.contacts(id))[0]).toMatchObject({ status: 'calling', attempts: 1 });
      expect(placed()).toBe(2);
    } finally {
      await elsewhere.leave();
    }
  });

  test('a person calling in is not dialled by a campaign while on the line', async () => {
    await start(kind);
    const caller = await ring({ direction: 'inbound', from_phone_number: '+49 151 0000007', to_phone_number: '4930000000' });
    const created = await api('POST', '/api/campaigns', { name: 'callback', concurrency: 2, contacts: [{ phone: '0151 0000007' }, { phone: '0151 0000008' }] });
    const id = String(created.json.id);
    expect(await service!.requested(1)).toEqual(['491510000008']);
    expect((await env!.hotline.campaigns.contacts(id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await api('POST', '/api/calls', { toPhoneNumber: '0049 151 0000007' })).status).toBe(409);
    caller.end('hangup');
    expect(await service!.requested(2)).toEqual(['491510000008', '491510000007']);
  });
});
