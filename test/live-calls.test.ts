/** The live view's batching: changes gathered, sent in slices, nothing lost, ended calls named. */
import { expect, test } from 'vitest';
import type { CallActivity } from '../src/call/ports/call-activity.js';
import { LiveCalls } from '../src/dashboard/live-calls.js';

const call = (i: number, phase: CallActivity['phase'] = 'speaking'): CallActivity => ({
  sessionId: `s${i}`,
  direction: 'inbound',
  from: '4915112345678',
  to: '4930',
  startedAt: '2026-11-23T06:00:00.000Z',
  phase,
  callerSaid: 'hello',
  agentSaid: undefined,
});

test('a burst of changes reaches a viewer batched, in slices of at most 100 calls, each call once, with the latest state', async () => {
  const live = new LiveCalls(5);
  const updates: { calls: { sessionId: string; phase: string }[]; ended: string[] }[] = [];
  let seen = 0;
  const all = new Promise<void>((resolve) => {
    live.watch({
      view: (c) => ({ sessionId: c.sessionId, phase: c.phase }),
      send: (event, data) => {
        if (event !== 'update') return;
        const update = JSON.parse(data) as (typeof updates)[number];
        updates.push(update);
        seen += update.calls.length + update.ended.length;
        if (seen === 250) resolve();
      },
    });
  });
  for (let i = 0; i < 250; i++) live.changed(call(i, 'thinking'));
  for (let i = 0; i < 249; i++) live.changed(call(i, 'speaking'));
  live.ended('s249');
  await all;
  expect(updates.map((u) => u.calls.length + u.ended.length)).toEqual([100, 100, 50]);
  const calls = updates.flatMap((u) => u.calls);
  expect(new Set(calls.map((c) => c.sessionId)).size).toBe(249);
  expect(calls.every((c) => c.phase === 'speaking')).toBe(true);
  expect(updates.flatMap((u) => u.ended)).toEqual(['s249']);
  expect(live.size).toBe(249);
  live.close();
});

test('without viewers a change costs a map entry and nothing is sent later', () => {
  const live = new LiveCalls(5);
  live.changed(call(1));
  live.ended('s1');
  live.changed(call(2));
  const snapshots: string[] = [];
  live.watch({ view: (c) => c.sessionId, send: (_event, data) => snapshots.push(data) });
  expect(snapshots).toEqual(['["s2"]']);
  live.close();
});
