/**
 * A deploy: SIGTERM to a real Hotline process while campaign calls are on the line. From that moment
 * nothing new is dialled — the outbound API answers 503, campaigns stop placing calls but stay
 * `running` — and after the restart the campaign goes on: no contact lost, none called twice.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { CHILD_TEST_TIMEOUT_MS, spawnHotline, type HotlineProcess } from './helpers/child-process.js';
import { startOutboundService, type OutboundService } from './helpers/outbound-service.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'admin-token-1';
const children: HotlineProcess[] = [];
const lines: FakeVoiceService[] = [];
let service: OutboundService | undefined;
let dir: string | undefined;
let location: TestStoreLocation | undefined;

afterEach(async () => {
  for (const line of lines.splice(0)) await line.close();
  for (const child of children.splice(0)) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await service?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  await location?.remove();
  location = undefined;
});

const number = (i: number): string => `49151000000${i}`;

test.each(await storeKinds())(
  'SIGTERM: no new call from that moment (the API says 503, campaigns stop dialling but stay running); after the restart every contact is called once (%s)',
  async (kind) => {
    service = await startOutboundService();
    dir = await mkdtemp(path.join(tmpdir(), 'hotline-deploy-'));
    location = await freshStoreLocation(kind);
    // DATABASE_FILE still names a file in `dir` for the synchronous store that remains beside the new one until issue 22 is done.
    const vars = { ADMIN_TOKEN: ADMIN, ...service.vars, DATABASE_FILE: path.join(dir, 'hotline.db'), ...location.env, SHUTDOWN_GRACE_MS: '30000' };
    const start = async (): Promise<{ child: HotlineProcess; url: string; wsUrl: string }> => {
      const child = spawnHotline(vars);
      children.push(child);
      const [, wsUrl] = await child.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
      return { child, url: wsUrl!.replace(/^ws/, 'http').replace(/\/ws$/, ''), wsUrl: wsUrl! };
    };
    const api = async (url: string, method: string, route: string, body?: unknown) => {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };

    const first = await start();
    const created = await api(first.url, 'POST', '/api/campaigns', {
      name: 'deploy',
      concurrency: 2,
      contacts: [0, 1, 2, 3].map((i) => ({ phone: `+${number(i)}` })),
    });
    const id = String(created.json.id);
    expect(await service.requested(2)).toEqual([number(0), number(1)]);
    // Both people pick up: two calls on the line.
    for (const i of [0, 1]) {
      const line = await FakeVoiceService.connect(first.wsUrl);
      lines.push(line);
      line.start({ direction: 'outbound', to_phone_number: number(i), from_phone_number: '4930000000' });
      await line.nextOfType('speak');
    }

    first.child.child.kill('SIGTERM');
    await first.child.line(/shutting down/);
    expect(await api(first.url, 'POST', '/api/calls', { toPhoneNumber: '+49 151 0000009' })).toEqual({
      status: 503,
      json: { error: 'Hotline is shutting down: no new call is placed; try again once it has restarted' },
    });
    // One call ends while the other drains: its place is not given to the next contact.
    lines[0]!.end('hangup');
    const progress = async (url: string) => (await api(url, 'GET', `/api/campaigns/${id}`)).json as unknown as CampaignProgress;
    await expect.poll(async () => (await progress(first.url)).outcomes.completed, { timeout: 20_000 }).toBe(1);
    expect(await progress(first.url)).toMatchObject({ state: 'running', called: 2, inCall: 1, pending: 2 });
    lines[1]!.end('hangup');
    expect(await first.child.exited).toBe(0);
    expect(service.numbers()).toEqual([number(0), number(1)]);

    // After the restart the campaign, still running, calls the two contacts it had not reached.
    const second = await start();
    expect((await service.requested(4)).slice(2).sort()).toEqual([number(2), number(3)]);
    expect(await progress(second.url)).toMatchObject({ state: 'running', called: 4, outcomes: { completed: 2 } });
    expect(service.numbers().sort()).toEqual([0, 1, 2, 3].map(number));
  },
  CHILD_TEST_TIMEOUT_MS * 2,
);
