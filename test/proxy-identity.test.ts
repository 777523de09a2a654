import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ConfigError } from '../src/errors.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';

const ADMIN = 'proxy-identity-admin-token-0123456789';
const PROXY = {
  ADMIN_TOKEN: ADMIN,
  PROXY_AUTH_USER_HEADER: 'X-Forwarded-Email',
  PROXY_AUTH_GROUPS_HEADER: 'X-Forwarded-Groups',
  PROXY_AUTH_ROLES: 'hotline-admins=admin, support=operator',
};

let env: TestHotline | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${env!.hotline.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html', ...headers } });
}

const vera = { 'x-forwarded-email': 'vera@example.com' };

describe('an authenticating reverse proxy’s word for who is there', () => {
  test('from a TRUST_PROXY address: the person and the highest role of their groups, no login of Hotline’s own; on record once', async () => {
    env = await startTestHotline(() => ({ content: 'Hi.' }), { ...PROXY, TRUST_PROXY: 'loopback' });
    expect((await get('/dashboard/calls')).status).toBe(303);

    const viewer = await get('/dashboard/calls', vera);
    expect(viewer.status).toBe(200);
    expect(await viewer.text()).not.toContain('>Live<');
    expect((await get('/dashboard/audit', vera)).status).toBe(403);
    expect((await get('/dashboard/', { ...vera, 'x-forwarded-groups': 'staff' })).headers.get('location')).toBe('calls');

    expect((await get('/dashboard/', { ...vera, 'x-forwarded-groups': 'staff support' })).status).toBe(200);
    expect((await get('/dashboard/audit', { ...vera, 'x-forwarded-groups': 'support' })).status).toBe(403);
    const admin = await get('/dashboard/audit', { ...vera, 'x-forwarded-groups': 'support,hotline-admins' });
    expect(admin.status).toBe(200);
    const rows = await env.hotline.store.db.selectFrom('audit_log').select(['actor', 'action', 'role']).execute();
    expect(rows.filter((row) => row.actor === 'proxy:vera@example.com' && row.action === 'log_in')).toHaveLength(1);
  });

  test('from anywhere else the headers are anyone’s to write, and are ignored', async () => {
    env = await startTestHotline(() => ({ content: 'Hi.' }), { ...PROXY, TRUST_PROXY: '10.0.0.1' });
    const response = await get('/dashboard/calls', { ...vera, 'x-forwarded-groups': 'hotline-admins' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('login');
  });

  test('a header without a proxy to believe it from, or roles without a header, is refused at start', () => {
    const base = { NODE_ENV: 'test', ADMIN_TOKEN: ADMIN };
    expect(() => loadConfig({ ...base, PROXY_AUTH_USER_HEADER: 'X-Forwarded-Email' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, PROXY_AUTH_ROLES: 'a=admin' })).toThrow(/need PROXY_AUTH_USER_HEADER/);
    expect(() => loadConfig({ ...base, ...PROXY, TRUST_PROXY: 'loopback', PROXY_AUTH_ROLES: 'a=boss' })).toThrow(/"a=boss" is not group=role/);
  });
});
