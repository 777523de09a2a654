import { request } from 'node:http';
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

/** A request from one source address of the loopback range (Linux answers the whole 127/8): a proxy, or a client beside it. */
function from(address: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; location: string | undefined }> {
  const url = new URL(path, env!.hotline.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: body === undefined ? 'GET' : 'POST', headers: { accept: 'text/html', ...headers }, localAddress: address }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

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

  test('TRUST_PROXY=true, a hop count, or a range of every address stop the start, naming TRUST_PROXY, with PROXY_AUTH_* or without', () => {
    const base = { NODE_ENV: 'test', ADMIN_TOKEN: ADMIN };
    for (const value of ['true', 'TRUE', 'yes', '1', '2', '0.0.0.0/0', '::/0', '::ffff:0:0/96', '0.0.0.0/0.0.0.0', '128.0.0.0/1', '10.0.0.1, 0.0.0.0/0']) {
      for (const extra of [PROXY, {}]) {
        let message = 'no error';
        try {
          loadConfig({ ...base, ...extra, TRUST_PROXY: value });
        } catch (error) {
          expect(error, value).toBeInstanceOf(ConfigError);
          message = (error as Error).message;
        }
        expect(message, value).toMatch(/^TRUST_PROXY/);
        expect(message, value).toMatch(/e\.g\. TRUST_PROXY=10\.0\.0\.5/);
      }
    }
    // Named proxies, their subnet, and the named ranges of private addresses are taken.
    expect(loadConfig({ ...base, ...PROXY, TRUST_PROXY: '10.0.0.5, 172.30.250.0/24, loopback, uniquelocal' }).trustProxy).toEqual(['10.0.0.5', '172.30.250.0/24', 'loopback', 'uniquelocal']);
    expect(loadConfig({ ...base, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  test('a client reaching the replica beside the proxy (not from its address) is nobody: its identity headers and X-Forwarded-For are not believed', async () => {
    const proxy = '127.0.0.2';
    const direct = '127.0.0.3';
    env = await startTestHotline(() => ({ content: 'Hi.' }), { ...PROXY, TRUST_PROXY: proxy, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' });
    const admin = { ...vera, 'x-forwarded-groups': 'hotline-admins' };
    // Through the proxy: the admin it vouches for.
    expect((await from(proxy, '/dashboard/people', admin)).status).toBe(200);
    // Straight to the replica, with the same headers and a forwarded address of the proxy's: the login form.
    for (const headers of [admin, { ...admin, 'x-forwarded-for': proxy }]) {
      const refused = await from(direct, '/dashboard/people', headers);
      expect(refused).toEqual({ status: 303, location: 'login' });
    }
    // Its wrong admin tokens spend its own budget, however it varies X-Forwarded-For.
    const guess = (i: number) =>
      from(direct, '/dashboard/login', { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `198.51.100.${i}` }, new URLSearchParams({ token: `guess-${i}` }).toString());
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await guess(i)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
  });
});
