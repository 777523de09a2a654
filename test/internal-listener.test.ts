/**
 * What replicas ask of each other has a listener of its own: the public port answers /internal/*
 * with 404, the internal one serves nothing else, and a wrong cluster secret spends the same failure
 * budget as every other secret — counted across replicas in PostgreSQL.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { freshStoreLocation, postgresReachable, type TestStoreLocation } from './helpers/stores.js';

const SECRET = 'cluster-secret-of-the-internal-test';
const ADMIN = 'admin-token-of-the-internal-test';
const BUDGET = 4;

describe.skipIf(!(await postgresReachable()))('the replicas\' own listener', () => {
  let place: TestStoreLocation;
  let env: TestHotline;
  beforeAll(async () => {
    place = await freshStoreLocation('postgres');
    env = await startTestHotline(() => ({ content: 'Hello.' }), {
      ...place.env,
      REPLICA_ID: 'inside',
      CLUSTER_SECRET: SECRET,
      ADMIN_TOKEN: ADMIN,
      RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(BUDGET),
    });
  });
  afterAll(async () => {
    await env?.close();
    await place?.remove();
  });

  const hangUp = (base: string, secret: string) =>
    fetch(`${base}/internal/calls/no-such-call/hangup`, { method: 'POST', headers: { 'x-hotline-cluster-secret': secret } });

  test('it listens on a port of its own, registered for the others; the public port does not know /internal/*, even with the right secret', async () => {
    const internal = env.hotline.internalUrl!;
    expect(internal).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(internal).port).not.toBe(String(env.hotline.port));
    const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
    await db.connect();
    try {
      expect((await db.query('SELECT internal_url FROM replicas WHERE id = $1', ['inside'])).rows).toEqual([{ internal_url: internal }]);
    } finally {
      await db.end();
    }

    const publicHangUp = await hangUp(env.hotline.url, SECRET);
    expect([publicHangUp.status, await publicHangUp.json()]).toEqual([404, { error: 'not found' }]);
    const publicWebhook = await fetch(`${env.hotline.url}/internal/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hotline-cluster-secret': SECRET },
      body: JSON.stringify({ type: 'session_end', session: { id: 'x' } }),
    });
    expect(publicWebhook.status).toBe(404);

    // The internal listener answers what replicas ask, and nothing of the public app.
    expect((await hangUp(internal, SECRET)).status).toBe(200);
    expect((await fetch(`${internal}/healthz`)).status).toBe(200);
    for (const path of ['/webhook', '/dashboard/', '/api/calls', '/metrics', '/readyz']) {
      expect([path, (await fetch(`${internal}${path}`)).status]).toEqual([path, 404]);
    }
  });

  test('wrong cluster secrets spend the address\'s one failure budget: then the admin API refuses it too, and the count is in the store for the other replicas', async () => {
    for (let i = 0; i < BUDGET; i++) expect((await hangUp(env.hotline.internalUrl!, `guess-${i}`)).status).toBe(401);
    const refused = await hangUp(env.hotline.internalUrl!, 'one-more-guess');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Out of failures: refused before anything is compared, the right secret too.
    expect((await hangUp(env.hotline.internalUrl!, SECRET)).status).toBe(429);
    const admin = await fetch(`${env.hotline.url}/api/calls/no-such-call/hangup`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(admin.status).toBe(429);
    const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query<{ points: number }>('SELECT points FROM auth_failures');
      expect(rows.reduce((sum, row) => sum + Number(row.points), 0)).toBeGreaterThanOrEqual(BUDGET);
    } finally {
      await db.end();
    }
  });
});

describe('INTERNAL_URL and INTERNAL_PORT', () => {
  const base = { DATABASE_URL: 'postgres://hotline@db.example.com/hotline', CLUSTER_SECRET: SECRET };
  test('the internal port is INTERNAL_PORT, else the one INTERNAL_URL names, else any free one', () => {
    expect(loadConfig({ ...base, INTERNAL_URL: 'http://10.0.0.12:3001' }).replica.internalPort).toBe(3001);
    expect(loadConfig({ ...base, INTERNAL_URL: 'http://10.0.0.12' }).replica.internalPort).toBe(80);
    expect(loadConfig({ ...base, INTERNAL_URL: 'http://10.0.0.12:3001', INTERNAL_PORT: '4001' }).replica.internalPort).toBe(4001);
    expect(loadConfig(base).replica.internalPort).toBe(0);
  });

  test('an INTERNAL_URL on the public port (as the examples had it) stops the start, saying what to change', () => {
    expect(() => loadConfig({ ...base, INTERNAL_URL: 'http://10.0.0.12:3000' })).toThrow(
      /INTERNAL_URL \(http:\/\/10\.0\.0\.12:3000\) names port 3000, which is PORT: .* Use another port, e\.g\. INTERNAL_URL=http:\/\/<this host>:3001/,
    );
    expect(() => loadConfig({ ...base, PORT: '8080', INTERNAL_PORT: '8080' })).toThrow(/INTERNAL_PORT names port 8080, which is PORT/);
  });
});
