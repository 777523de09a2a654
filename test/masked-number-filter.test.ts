/**
 * A viewer sees numbers masked (4915•••••••78): the history's number filter, and the count it shows,
 * must not tell the viewer anything the mask hides. Two callers whose numbers differ only in hidden
 * digits are found together or not at all, whatever is typed; a number is looked for whole, or as shown.
 *
 * A real Hotline on each store, a viewer's real login, the history page as a browser posts it.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { StaffRepository } from '../src/store/staff-repository.js';
import type { Db } from '../src/store/schema.js';
import { startHotlineOn } from './helpers/browser.js';
import { endedCallRow } from './helpers/call-rows.js';
import type { TestHotline } from './helpers/hotline.js';
import { storeKinds } from './helpers/stores.js';

const ADMIN = 'masked-number-admin-token-0123456789';
const PASSWORD = 'viewer-password-123';

let env: TestHotline | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

/** Each call: its id, direction, and the caller's and called numbers. The number a page shows is the caller's (inbound) or the called one's (outbound). */
const CALLS = [
  // Anna and Bert: one mask (4915•••••••78), other hidden digits.
  ['anna', 'inbound', '4915112345678', '4930000000'],
  ['bert', 'inbound', '+49 151 9876 5478', '4930000000'],
  ['outbound-anna-like', 'outbound', '4930000000', '4915155555578'],
  ['carl', 'inbound', '4917600000001', '4930000000'],
  // Shown as 4930•••••••11; the number it called is Anna's, which no page shows for this call.
  ['dora', 'inbound', '4930111111111', '4915112345678'],
  ['emil', 'inbound', '4930122222211', '4930000000'],
] as const;

async function storeCalls(db: Db): Promise<void> {
  await db
    .insertInto('calls')
    .values(
      CALLS.map(([id, direction, from, to], i) =>
        endedCallRow({
          call_id: id,
          direction,
          from_number: from,
          to_number: to,
          started_at: `2026-11-20T10:0${i}:00.000Z`,
          ended_at: `2026-11-20T10:0${i}:30.000Z`,
          duration_ms: 30_000,
        }),
      ),
    )
    .execute();
}

describe.each(await storeKinds())('the number filter of a role that sees numbers masked (%s)', (kind) => {
  async function viewer(): Promise<(number: string) => Promise<{ ids: string[]; total: number; page: string }>> {
    env = await startHotlineOn(kind, () => ({ content: 'Hi.' }), { ADMIN_TOKEN: ADMIN });
    await storeCalls(env.hotline.store.db);
    await new StaffRepository(env.hotline.store.db).add('vera', 'viewer', PASSWORD);
    const url = env.hotline.url;
    const login = await fetch(`${url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ name: 'vera', password: PASSWORD }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    return async (number) => {
      const res = await fetch(`${url}/dashboard/calls`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ number }).toString() });
      expect(res.status).toBe(200);
      const page = await res.text();
      const ids = [...page.matchAll(/href="calls\/([\w-]+)"/g)].map((m) => m[1]!).sort();
      const total = Number(/id="total">(\d+)</.exec(page)?.[1]);
      return { ids, total, page };
    };
  }

  test('whatever is typed, calls whose numbers differ only in hidden digits are found together or not at all, and the count says no more', async () => {
    const search = await viewer();
    // What a probe that rebuilt a masked number typed: growing prefixes, windows over the hidden digits,
    // wildcards, and whole numbers that share a mask with the one sought.
    const anna = '4915112345678';
    const probes = [
      ...Array.from({ length: 9 }, (_, i) => anna.slice(0, 5 + i)),
      ...Array.from({ length: 9 }, (_, i) => anna.slice(2 + i, 5 + i)),
      '12345678', '1123456', '5112', '9876', '98765478', '4930111111111', '1111111', '%', '_', '4915%78', '4915_______78', '+49 151 1234',
    ];
    for (const probe of probes) {
      const { ids, total } = await search(probe);
      expect(total, probe).toBe(ids.length);
      const found = (id: string) => ids.includes(id);
      expect(found('anna'), `"${probe}" tells Anna from Bert`).toBe(found('bert'));
      expect(found('anna'), `"${probe}" tells Anna from the outbound call to a number masked alike`).toBe(found('outbound-anna-like'));
      // Dora's call is found only as her number shows, never by the number she called, which is not shown.
      expect(found('dora'), `"${probe}" tells Dora from Emil`).toBe(found('emil'));
    }
  });

  test('a number typed whole, or as the page shows it, finds the calls shown with that mask, and says so; a part of one finds nothing', async () => {
    const search = await viewer();
    const annaLike = ['anna', 'bert', 'outbound-anna-like'];
    for (const typed of ['4915112345678', '+49 (151) 1234 5678', '4915•••••••78', '4915*******78', '4915xxxxxxx78']) {
      const { ids, total, page } = await search(typed);
      expect(ids, typed).toEqual(annaLike);
      expect(total).toBe(3);
      expect(page).toContain('Numbers are masked for you: these are the calls whose number shows as 4915•••••••78');
    }
    expect((await search('4930•••••••11')).ids).toEqual(['dora', 'emil']);
    const part = await search('4915•••78');
    expect(part.ids).toEqual([]);
    expect((await search('491511')).ids).toEqual([]);
    const nonsense = await search('49••15');
    // Not a number, nor one masked: dropped and said why, every call listed.
    expect(nonsense.total).toBe(CALLS.length);
    expect(nonsense.page).toContain('only a whole number or one as shown (4915•••••••78) can be looked for, not &quot;49••15&quot;');
    expect(nonsense.page).not.toContain('4915112345678');
  });
});
