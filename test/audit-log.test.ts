import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { AuditLog } from '../src/privacy/audit-log.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { freshStore, storeKinds } from './helpers/stores.js';

const ADMIN = 'audit-log-admin-token-0123456789';
const silent = pino({ level: 'silent' });

let env: TestHotline | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await env?.close();
  env = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.each(await storeKinds())('the audit log (%s)', (kind) => {
  test('entries are appended and read back newest first, filtered by person, action, call and time', async () => {
    const store = await freshStore(kind);
    cleanups.push(async () => {
      await store.close();
      await store.location.remove();
    });
    let now = Date.parse('2026-11-20T10:00:00.000Z');
    const log = new AuditLog(store.db, silent, () => new Date(now));
    await log.record({ actor: 'ada', role: 'admin', action: 'log_in', source: '10.0.0.1' });
    now += 60_000;
    await log.record({ actor: 'otto', role: 'operator', action: 'hang_up', sessionId: 's-1', detail: { outcome: 'done' } });
    now += 86_400_000;
    await log.record({ actor: 'ada', role: 'admin', action: 'erase_person', detail: { calls: 2 } });

    expect((await log.list()).map((e) => e.action)).toEqual(['erase_person', 'hang_up', 'log_in']);
    expect((await log.list({ actor: 'ada' })).map((e) => e.action)).toEqual(['erase_person', 'log_in']);
    expect(await log.list({ action: 'hang_up' })).toMatchObject([{ actor: 'otto', role: 'operator', session_id: 's-1', detail: { outcome: 'done' } }]);
    expect((await log.list({ to: '2026-11-20T23:59:59.999Z' })).map((e) => e.action)).toEqual(['hang_up', 'log_in']);
    expect((await log.list({ from: '2026-11-21T00:00:00.000Z' })).map((e) => e.action)).toEqual(['erase_person']);
    expect(await log.list({ limit: 1 })).toHaveLength(1);
    expect((await log.ofSessions(['s-1'])).map((e) => e.actor)).toEqual(['otto']);
  });
});

test('a campaign changed on the dashboard is on record, and the API reads the log back', async () => {
  env = await startTestHotline(() => ({ content: 'Hi.' }), { ADMIN_TOKEN: ADMIN });
  const login = await fetch(`${env.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password: ADMIN }).toString(),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const paused = await fetch(`${env.hotline.url}/dashboard/campaigns`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ campaign: 'no-such-campaign', do: 'pause' }).toString(),
  });
  expect(paused.status).toBe(404);
  const api = await fetch(`${env.hotline.url}/api/audit?action=campaign_change`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(api.status).toBe(200);
  expect(await api.json()).toMatchObject({ entries: [{ actor: 'ADMIN_TOKEN', role: 'admin', action: 'campaign_change', detail: { campaign: 'no-such-campaign', do: 'pause', outcome: 'not_found' } }] });
  expect((await fetch(`${env.hotline.url}/api/audit`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
});
