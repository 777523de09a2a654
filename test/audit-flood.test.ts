/**
 * Failed logins are on record, but a stranger must not be able to fill the audit log with them: each
 * entry holds only so much, and the tries refused while an address is out of failures are on record
 * once per window, not once per try. The entries that matter stay on the Audit page.
 *
 * A real Hotline on each store, real HTTP logins from one address.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { AUDIT_DETAIL_KEYS_MAX, AUDIT_TEXT_MAX } from '../src/privacy/audit-bounds.js';
import { AuditLog } from '../src/privacy/audit-log.js';
import { startHotlineOn } from './helpers/browser.js';
import type { TestHotline } from './helpers/hotline.js';
import { freshStore, storeKinds } from './helpers/stores.js';

const ADMIN = 'audit-flood-admin-token-0123456789';
const BUDGET = 5;
const TRIES = 400;

let env: TestHotline | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await env?.close();
  env = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Every text of every row, as the table holds them. */
async function tableChars(env: TestHotline): Promise<{ rows: number; chars: number }> {
  const rows = await env.hotline.store.db.selectFrom('audit_log').selectAll().execute();
  const chars = rows.reduce((n, row) => n + Object.values(row).reduce((m: number, value) => m + String(value ?? '').length, 0), 0);
  return { rows: rows.length, chars };
}

describe.each(await storeKinds())('the audit log under a flood of failed logins (%s)', (kind) => {
  test(`${TRIES} failed logins with 15 kB names: a few short entries, the rest refused unrecorded; the admin's entries stay on the Audit page`, async () => {
    env = await startHotlineOn(kind, () => ({ content: 'Hi.' }), { ADMIN_TOKEN: ADMIN, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(BUDGET) });
    const url = env.hotline.url;
    const post = (body: Record<string, string>) =>
      fetch(`${url}/dashboard/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });
    // The real admin logs in and shows numbers: entries that must stay in sight.
    const login = await post({ password: ADMIN });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect((await fetch(`${url}/dashboard/numbers`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'show=yes' })).status).toBe(303);
    const before = await tableChars(env);

    // Names of 15 kB (the most a form takes), half of them as the name of an account, half beside the admin token.
    const huge = (i: number) => `${String(i).padStart(4, '0')}${'x'.repeat(14_500)}`;
    const statuses: number[] = [];
    for (let start = 0; start < TRIES; start += 20) {
      const batch = Array.from({ length: 20 }, (_, j) => start + j);
      // The first tries one by one: which of them spends the budget must not depend on the order they land in.
      if (start === 0) for (const i of batch) statuses.push((await post(i % 2 ? { name: huge(i), password: 'wrong-password-1' } : { name: '', password: huge(i) })).status);
      else statuses.push(...(await Promise.all(batch.map(async (i) => (await post({ name: huge(i), password: 'wrong-password-1' })).status))));
    }
    expect(statuses.slice(0, BUDGET)).toEqual(Array(BUDGET).fill(401));
    expect(statuses.slice(BUDGET).every((status) => status === 429)).toBe(true);

    const after = await tableChars(env);
    // The budget's wrong passwords, and one refusal for the window: not one row per try.
    expect(after.rows - before.rows).toBe(BUDGET + 1);
    // Each row a few hundred characters at most: the names were 15,000 each (6 MB in all).
    expect(after.chars - before.chars).toBeLessThan((BUDGET + 1) * 1000);
    const failed = await new AuditLog(env.hotline.store.db, pino({ level: 'silent' })).list({ action: 'log_in_failed' });
    expect(failed.filter((e) => (e.detail as { status?: number }).status === 429)).toHaveLength(1);
    for (const entry of failed) expect(entry.actor.length).toBeLessThanOrEqual(AUDIT_TEXT_MAX);

    // The Audit page: small, with the admin's own entries on it.
    const page = await (await fetch(`${url}/dashboard/audit`, { headers: { cookie } })).text();
    expect(page.length).toBeLessThan(50_000);
    expect(page).toContain('reveal_numbers');
    expect(page).toMatch(/<td>ADMIN_TOKEN<\/td><td>admin<\/td><td>log_in<\/td>/);
  });

  test('an entry is cut to what it may hold, whoever records it: names, addresses, ids and details', async () => {
    const store = await freshStore(kind);
    cleanups.push(async () => {
      await store.close();
      await store.location.remove();
    });
    const log = new AuditLog(store.db, pino({ level: 'silent' }));
    const long = 'y'.repeat(20_000);
    const detail = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${i}${'k'.repeat(100)}`, long]));
    // An emoji across the cut: never half of one.
    await log.record({ actor: `${'a'.repeat(AUDIT_TEXT_MAX - 2)}😀😀`, role: long, action: 'log_in_failed', source: long, callId: long, sessionId: long, detail });
    const [entry] = await log.list();
    expect(entry!.actor).toBe(`${'a'.repeat(AUDIT_TEXT_MAX - 2)}…`);
    for (const text of [entry!.source, entry!.call_id, entry!.session_id]) expect(text!.length).toBe(AUDIT_TEXT_MAX);
    expect(entry!.role.length).toBeLessThanOrEqual(64);
    expect(Object.keys(entry!.detail!)).toHaveLength(AUDIT_DETAIL_KEYS_MAX);
    expect(JSON.stringify(entry!.detail).length).toBeLessThan(AUDIT_DETAIL_KEYS_MAX * (AUDIT_TEXT_MAX + 80));
    // Short entries are kept as they are.
    await log.record({ actor: 'ada', role: 'admin', action: 'hang_up', sessionId: 's-1', detail: { outcome: 'done' } });
    expect((await log.list({ actor: 'ada' }))[0]).toMatchObject({ actor: 'ada', role: 'admin', session_id: 's-1', detail: { outcome: 'done' } });
  });
});
