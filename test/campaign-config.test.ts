/**
 * Without the AIFLOW_* settings no campaign call can be placed: creating a campaign is refused,
 * naming what is missing (API, CLI), and one made before is never left to burn its contacts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { ShiftedClock } from '../src/campaigns/clock.js';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { CHILD_TEST_TIMEOUT_MS, childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';
import { adminApi } from './helpers/admin-api.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startOutboundService, type OutboundService } from './helpers/outbound-service.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds } from './helpers/stores.js';

const ADMIN = 'admin-token-1';
const kinds = await storeKinds();
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

const api = (method: string, route: string, body?: unknown) => adminApi(env!.hotline.url, ADMIN, method, route, body);

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-campaign-config-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const ALL_MISSING =
  'outbound calling is not configured: set AIFLOW_API_URL, AIFLOW_ACCESS_TOKEN, AIFLOW_ID and AIFLOW_BILLING_DEVICE (see docs/outbound-and-campaigns.md); ' +
  'aiFlowId and billingDevice may also be given with the call or the campaign';

describe('a campaign without outbound calling configured', () => {
  test('the API refuses it with 409, naming every variable missing; a campaign naming its own flow and device needs only the service', async () => {
    env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN });
    const contacts = [{ phone: '+49 151 0000001' }];
    expect(await api('POST', '/api/campaigns', { name: 'no service', contacts })).toEqual({
      status: 409,
      json: { error: ALL_MISSING, missing: ['AIFLOW_API_URL', 'AIFLOW_ACCESS_TOKEN', 'AIFLOW_ID', 'AIFLOW_BILLING_DEVICE'] },
    });
    const own = await api('POST', '/api/campaigns', { name: 'own flow', contacts, aiFlowId: 'flow-9', billingDevice: 'dev-9' });
    expect(own).toMatchObject({ status: 409, json: { missing: ['AIFLOW_API_URL', 'AIFLOW_ACCESS_TOKEN'] } });
    expect((await api('GET', '/api/campaigns')).json.campaigns).toEqual([]);
    // The outbound API says the same.
    expect(await api('POST', '/api/calls', { toPhoneNumber: '+49 151 0000001' })).toEqual({ status: 409, json: { error: ALL_MISSING } });
  });

  test(
    'npm run campaign -- start exits 1 and names the variables missing',
    async () => {
      env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN });
      const dir = await tempDir();
      await writeFile(path.join(dir, 'people.csv'), 'phone,name\n+49 151 0000001,Anna\n');
      await writeFile(path.join(dir, 'spring.yaml'), 'name: spring\ncontacts: people.csv\n');
      const options = { env: childEnv({ ADMIN_TOKEN: ADMIN, BOT_URL: env.hotline.url }), cwd: isolatedCwd() };
      const failed = await promisify(execFile)(process.execPath, tsxArgs('src/cli/campaign.ts', 'start', path.join(dir, 'spring.yaml')), options).then(
        () => undefined,
        (error: { code?: unknown; stdout?: unknown }) => error,
      );
      // The CLI's own wording around the answer may change; the variables named may not.
      expect(failed).toMatchObject({ code: 1, stdout: expect.stringContaining('409: outbound calling is not configured: set AIFLOW_API_URL, AIFLOW_ACCESS_TOKEN, AIFLOW_ID and AIFLOW_BILLING_DEVICE') });
      expect((await api('GET', '/api/campaigns')).json.campaigns).toEqual([]);
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  test.each(kinds)('made while it was configured: after a restart without it, a running campaign waits and a paused one is not resumed; no contact is spent (%s)', async (kind) => {
    const location = await freshStoreLocation(kind);
    cleanups.push(() => location.remove());
    // Monday 2 March 2026, 08:59 in Berlin: a minute before the calling hours open.
    const before = Date.parse('2026-03-02T07:59:00Z');
    const hours = { days: ['mon'], from: '09:00', to: '18:00' };
    service = await startOutboundService();
    env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN, ...location.env, ...service.vars }, {}, { campaignClock: new ShiftedClock(before) });
    const contacts = [{ phone: '+49 151 0000001' }, { phone: '+49 151 0000002' }];
    const running = String((await api('POST', '/api/campaigns', { name: 'running', time_zone: 'Europe/Berlin', calling_hours: hours, contacts })).json.id);
    const paused = String((await api('POST', '/api/campaigns', { name: 'paused', time_zone: 'Europe/Berlin', calling_hours: hours, contacts })).json.id);
    expect((await api('POST', `/api/campaigns/${paused}/pause`)).status).toBe(200);
    await env.close();

    // Restarted at 10:00, within the calling hours, without the AIFLOW_* settings.
    env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN, ...location.env }, {}, { campaignClock: new ShiftedClock(before + 61 * 60_000) });
    const resumed = await api('POST', `/api/campaigns/${paused}/resume`);
    expect(resumed).toEqual({ status: 409, json: { error: ALL_MISSING, missing: ['AIFLOW_API_URL', 'AIFLOW_ACCESS_TOKEN', 'AIFLOW_ID', 'AIFLOW_BILLING_DEVICE'] } });
    await env.hotline.campaigns.tick();
    for (const [id, state] of [
      [running, 'running'],
      [paused, 'paused'],
    ] as const) {
      expect((await api('GET', `/api/campaigns/${id}`)).json as unknown as CampaignProgress).toMatchObject({ state, called: 0, pending: 2, outcomes: { failed: 0 } });
    }
    expect(service.numbers()).toEqual([]);
  });
});
