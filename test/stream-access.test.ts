/**
 * A dashboard response that stays open — the live view's event stream, a CSV export to a slow
 * reader — is let in by the gates once, and may run for hours after. It stays open only while its
 * login stands: `npm run staff -- remove` or a lower role, run against the store from another
 * process, closes it within DASHBOARD_RECHECK_SECONDS (1 here, 30 by default) on every replica.
 *
 * Real Hotlines (two replicas on one PostgreSQL database; one on SQLite), the real staff CLI against
 * their store, real HTTP clients.
 */
import { request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { runStaffCli } from '../src/cli/staff.js';
import type { Db } from '../src/store/schema.js';
import { endedCallRow } from './helpers/call-rows.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { freshStoreLocation, storeKinds, type StoreKind } from './helpers/stores.js';
import { textSink } from './helpers/text-sink.js';

const ADMIN = 'stream-access-admin-token-0123456789';
const PASSWORD = 'stream-password-123';
/** A scrypt hash per login and per account added; a CLI run opens the store each time. */
const SLOW = { timeout: 90_000 };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Cluster {
  replicas: TestHotline[];
  staff(args: string[]): Promise<string>;
  /** Resolves once a replica has logged that it closed a stream of this kind for this person. */
  closed(staff: string, stream: 'live view' | 'export'): Promise<void>;
  db: Db;
}

/** One Hotline on SQLite; two replicas on one PostgreSQL database, as behind a balancer. */
async function cluster(kind: StoreKind): Promise<Cluster> {
  const place = await freshStoreLocation(kind);
  cleanups.push(() => place.remove());
  const sink = textSink();
  const logger = pino({ level: 'info' }, sink.stream);
  const replicas: TestHotline[] = [];
  for (const id of kind === 'postgres' ? ['replica-a', 'replica-b'] : ['replica-a']) {
    const env = await startTestHotline(() => ({ content: 'Hello.' }), { ...place.env, ADMIN_TOKEN: ADMIN, REPLICA_ID: id, DASHBOARD_RECHECK_SECONDS: '1' }, {}, { logger });
    cleanups.push(() => env.close());
    replicas.push(env);
  }
  return {
    replicas,
    db: replicas[0]!.hotline.store.db,
    async staff(args) {
      const out = textSink();
      let stderr = '';
      const io = { stdout: out.stream, stderr: { write: (text: string) => ((stderr += text), true) }, stdin: Readable.from([`${PASSWORD}\n`]) };
      const code = await runStaffCli(args, { ...place.env, TRANSCRIPTS_DIR: replicas[0]!.transcriptsDir, NODE_ENV: 'test' }, io);
      expect(code, stderr).toBe(0);
      return out.text();
    },
    async closed(staff, stream) {
      const seen = (): boolean =>
        sink
          .text()
          .split('\n')
          .some((line) => line.includes('dashboard stream closed') && line.includes(`"staff":"${staff}"`) && line.includes(`"stream":"${stream}"`));
      for (const deadline = Date.now() + 20_000; !seen(); ) {
        if (Date.now() > deadline) throw new Error(`no replica closed ${staff}'s ${stream} within 20 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

async function logIn(url: string, name: string): Promise<string> {
  const res = await fetch(`${url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ name, password: PASSWORD }).toString(),
  });
  expect(res.status).toBe(303);
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** The live view's stream, open once its first snapshot has arrived; `ended` settles when the server ends it. */
async function openLive(url: string, cookie: string): Promise<{ ended: Promise<void>; abort(): void }> {
  const controller = new AbortController();
  const res = await fetch(`${url}/dashboard/live`, { headers: { cookie }, signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('event: snapshot')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the live view ended before its first snapshot');
    text += value;
  }
  const ended = (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  ended.catch(() => undefined);
  cleanups.push(async () => controller.abort());
  return { ended, abort: () => controller.abort() };
}

/** Resolves once `ended` has, or rejects saying what stayed open. */
async function within<T>(ended: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} was still open ${ms / 1000} s after the change`)), ms);
  });
  try {
    return await Promise.race([ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Calls with long summaries: an export of them is far larger than what the sockets between server and client hold. */
async function storeCalls(db: Db, count: number, summaryChars: number): Promise<void> {
  const summary = 'The caller asked about an order. '.repeat(Math.ceil(summaryChars / 33)).slice(0, summaryChars);
  for (let first = 0; first < count; first += 50) {
    const ids = Array.from({ length: Math.min(50, count - first) }, (_, i) => `export-${String(first + i).padStart(5, '0')}`);
    const at = (id: string) => new Date(Date.parse('2026-11-20T10:00:00.000Z') + Number(id.slice(7)) * 1000).toISOString();
    await db
      .insertInto('calls')
      .values(
        ids.map((id) => endedCallRow({ call_id: id, from_number: '4915112345678', to_number: '4930000000', started_at: at(id) })),
      )
      .execute();
    await db
      .insertInto('reports')
      .values(ids.map((id) => ({ call_id: id, session_id: id, created_at: at(id), summary, fields: null, fields_status: 'skipped' as const, fields_error: null, body: '{}' })))
      .execute();
  }
}

/**
 * A CSV export whose reader has taken its first bytes and then stopped reading; `finish()` reads the
 * rest and says how it ended: whole (the file's last line and a clean end) or cut.
 */
function slowExport(url: string, cookie: string): Promise<{ finish(): Promise<{ whole: boolean; bytes: number }> }> {
  const target = new URL('/dashboard/calls.csv', url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) return reject(new Error(`the export answered ${res.statusCode}`));
        let bytes = 0;
        const over = new Promise<{ whole: boolean; bytes: number }>((done) => {
          res.on('error', () => undefined);
          res.on('close', () => done({ whole: res.complete, bytes }));
        });
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.once('data', () => {
          res.pause();
          resolve({
            finish: () => {
              res.resume();
              return over;
            },
          });
        });
      },
    );
    req.on('error', reject);
    req.end('');
    cleanups.push(async () => req.destroy());
  });
}

describe.each(await storeKinds())('open dashboard streams on %s', (kind) => {
  test('`staff remove` closes the operator\'s live view on every replica and cuts a running export; her pages are the login form', SLOW, async () => {
    const { replicas, staff, closed, db } = await cluster(kind);
    await staff(['add', '--name', 'otto', '--role', 'operator']);
    await storeCalls(db, 800, 20_000);
    const cookie = await logIn(replicas[0]!.hotline.url, 'otto');
    // One login holds on every replica (PostgreSQL keeps it); a live view is open on each.
    const views = await Promise.all(replicas.map((r) => openLive(r.hotline.url, cookie)));
    const exporting = await slowExport(replicas[0]!.hotline.url, cookie);
    // Still standing after a few rounds of checks: nothing closes what is allowed.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const stillOpen = await Promise.race([...views.map((v) => v.ended.then(() => 'ended')), new Promise((resolve) => setTimeout(() => resolve('open'), 10))]);
    expect(stillOpen).toBe('open');

    expect(await staff(['remove', '--name', 'otto'])).toBe('removed otto\n');
    for (const [i, view] of views.entries()) await within(view.ended, `otto's live view on replica ${i + 1}`);
    await closed('otto', 'export');
    const exported = await exporting.finish();
    // Cut, never ended as if whole: 800 calls of 20 kB would be 16 MB.
    expect(exported.whole).toBe(false);
    expect(exported.bytes).toBeLessThan(16_000_000);
    for (const replica of replicas) {
      const page = await fetch(`${replica.hotline.url}/dashboard/calls`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toMatch(/login$/);
    }
  });

  test('a demotion below operator closes the live view on every replica; logged in again as a viewer, there is none to open', SLOW, async () => {
    const { replicas, staff } = await cluster(kind);
    await staff(['add', '--name', 'olga', '--role', 'operator']);
    const cookie = await logIn(replicas[0]!.hotline.url, 'olga');
    const views = await Promise.all(replicas.map((r) => openLive(r.hotline.url, cookie)));

    expect(await staff(['role', '--name', 'olga', '--role', 'viewer'])).toBe('olga is viewer now\n');
    for (const [i, view] of views.entries()) await within(view.ended, `olga's live view on replica ${i + 1}`);
    // The browser's EventSource tries again: its login has ended.
    const again = await fetch(`${replicas.at(-1)!.hotline.url}/dashboard/live`, { headers: { cookie, accept: 'text/event-stream' } });
    expect(again.status).toBe(401);
    const asViewer = await logIn(replicas[0]!.hotline.url, 'olga');
    expect((await fetch(`${replicas[0]!.hotline.url}/dashboard/live`, { headers: { cookie: asViewer, accept: 'text/event-stream' } })).status).toBe(403);
  });
});

test('someone an authenticating proxy let in: the live view is closed after DASHBOARD_RECHECK_SECONDS, and its reconnection meets the gates with what the proxy says now', async () => {
  const env = await startTestHotline(() => ({ content: 'Hello.' }), {
    ADMIN_TOKEN: ADMIN,
    TRUST_PROXY: 'loopback',
    PROXY_AUTH_USER_HEADER: 'X-Forwarded-Email',
    PROXY_AUTH_GROUPS_HEADER: 'X-Forwarded-Groups',
    PROXY_AUTH_ROLES: 'support=operator',
    DASHBOARD_RECHECK_SECONDS: '1',
  });
  cleanups.push(() => env.close());
  const url = env.hotline.url;
  const support = { 'x-forwarded-email': 'pia@example.com', 'x-forwarded-groups': 'support' };
  const res = await fetch(`${url}/dashboard/live`, { headers: support });
  expect(res.status).toBe(200);
  await within(res.text(), "pia's live view", 10_000);
  // Out of the support group at the proxy: her reconnection is refused.
  expect((await fetch(`${url}/dashboard/live`, { headers: { ...support, 'x-forwarded-groups': 'staff' } })).status).toBe(403);
});
