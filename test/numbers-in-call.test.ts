/**
 * One call per person at a time, held in the store: a number being rung or on the line at one
 * replica is refused by every other, until that call ends — whichever replica asked for the call
 * and whichever answered it, and for a person who called in. A row left by a start of a replica
 * that no longer runs gives way, even when the replica runs again under its id.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { ReplicaRegistry } from '../src/cluster/replica-registry.js';
import { NumberInCallError } from '../src/outbound/errors.js';
import { OutboundRequests } from '../src/outbound/outbound-requests.js';
import { PendingCalls } from '../src/outbound/pending-calls.js';
import { OutboundRequestRepository } from '../src/store/outbound-request-repository.js';
import type { Store } from '../src/store/store.js';
import { freshStore, storeKinds } from './helpers/stores.js';

const logger = pino({ level: 'silent' });
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TTL_MS = 60_000;
const ANNA = '491511234567';

/** A replica's view of the numbers in a call: its own memory, the shared store, named by its registry. */
async function replicaOn(store: Store, id: string): Promise<{ registry: ReplicaRegistry; rows: OutboundRequestRepository; requests: OutboundRequests }> {
  const registry = await ReplicaRegistry.join(store, { id }, logger);
  cleanups.push(() => registry.leave());
  const rows = new OutboundRequestRepository(store.db, { replica: registry.id, instance: registry.instance }, store.dialect, registry.deadAfterMs);
  return { registry, rows, requests: new OutboundRequests(new PendingCalls(TTL_MS), rows, TTL_MS, logger, '49') };
}

/** What asking to dial `number` gives: the request, or the refusal. */
async function ask(requests: OutboundRequests, number: string): Promise<'added' | NumberInCallError> {
  try {
    await requests.add(number, {}, undefined);
    return 'added';
  } catch (error) {
    if (error instanceof NumberInCallError) return error;
    throw error;
  }
}

describe.each(await storeKinds())('numbers in a call, across replicas on %s', (kind) => {
  test('a call requested at r1 and answered at r2, and a person calling in at r2, are refused by every replica until their call ends; a ring lasts its own time; a row of a start that no longer runs gives way, even under the same id', async () => {
    const store = await freshStore(kind);
    cleanups.push(() => store.close());
    const [r1, r2, r3] = await Promise.all(['r1', 'r2', 'r3'].map((id) => replicaOn(store, id)));

    await r1!.requests.add(ANNA, { name: 'Anna' }, undefined);
    // Being rung: refused everywhere, with when the ring runs out.
    const ringing = await ask(r3!.requests, ANNA);
    expect(ringing).toBeInstanceOf(NumberInCallError);
    expect((ringing as NumberInCallError).until).toBeGreaterThan(Date.now());

    // Answered at r2: the request's variables reach it, and the number is on the line there now.
    expect(await r2!.requests.take(ANNA, 'session-anna')).toMatchObject({ variables: { name: 'Anna' } });
    await r2!.requests.settled();
    for (const other of [r1, r3]) {
      const refused = await ask(other!.requests, ANNA);
      expect(refused, 'a number on the line at another replica').toBeInstanceOf(NumberInCallError);
      // On the line: no time at which it runs out.
      expect((refused as NumberInCallError).until).toBeUndefined();
      expect(await other!.requests.busy(ANNA)).toBeInstanceOf(NumberInCallError);
    }

    // The call ends at r2: free for everyone again, and r2 says so.
    const freed = new Promise<void>((resolve) => r2!.requests.onFreed(resolve));
    r2!.requests.callEnded({ sessionId: 'session-anna' });
    await freed;
    expect(await r3!.requests.busy(ANNA)).toBeUndefined();

    // Three replicas asked for one free number at the same moment: one request stands.
    const outcomes = await Promise.all([r1, r2, r3].map((r) => ask(r!.requests, ANNA)));
    expect(outcomes.filter((outcome) => outcome === 'added')).toHaveLength(1);

    // Ben calls in at r2, his number written as people write it: no replica dials him.
    const BEN = '491517654321';
    r2!.requests.callProgress({ sessionId: 'session-ben', direction: 'inbound', from: '0151 7654321', to: '4930123456' });
    await r2!.requests.settled();
    expect(await ask(r1!.requests, BEN)).toBeInstanceOf(NumberInCallError);
    // A second call of his, at r1, does not take his row over while r2 has him, nor free it as it ends.
    r1!.requests.callProgress({ sessionId: 'session-ben-2', direction: 'inbound', from: BEN, to: '4930123456' });
    await r1!.requests.settled();
    r1!.requests.callEnded({ sessionId: 'session-ben-2' });
    await r1!.requests.settled();
    expect(await ask(r3!.requests, BEN)).toBeInstanceOf(NumberInCallError);

    // A ring for as long as its caller waits (a campaign's answer timeout), not OUTBOUND_TTL_MS.
    const CARL = '491510000003';
    await r3!.requests.add(CARL, {}, undefined, 300);
    expect((await ask(r1!.requests, CARL) as NumberInCallError).until).toBeLessThanOrEqual(Date.now() + 300);
    const deadline = Date.now() + 10_000;
    while ((await r1!.requests.busy(CARL)) !== undefined) {
      if (Date.now() > deadline) throw new Error(`a ring of 300 ms still holds ${CARL} after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await ask(r1!.requests, CARL)).toBe('added');

    // r2 rings Dora, then is killed and started again under its id (a new start of it): what its
    // earlier start held — Ben on its line, Dora's ring — is nobody's now.
    const DORA = '491510000004';
    await r2!.requests.add(DORA, {}, undefined);
    expect(await ask(r1!.requests, DORA)).toBeInstanceOf(NumberInCallError);
    const again = await ReplicaRegistry.join(store, { id: 'r2' }, logger);
    cleanups.push(() => again.leave());
    expect(again.instance).not.toBe(r2!.registry.instance);
    // Swept, Ben's number leaves the store (no running start has his call); Dora's ring stays until its time runs out, as her call may still come.
    await r1!.rows.sweep();
    const left = await store.db.selectFrom('outbound_requests').select('to_number').orderBy('to_number').execute();
    expect(left.map((row) => row.to_number)).toEqual([CARL, DORA, ANNA].sort());
    expect(await ask(r1!.requests, BEN)).toBe('added');
    expect(await ask(r1!.requests, DORA)).toBe('added');
  });
});
