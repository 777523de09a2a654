import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, expect, test } from 'vitest';
import { startPlatformEmulator, type PlatformEmulator } from '../src/simulator/platform-emulator.js';
import { CHILD_TEST_TIMEOUT_MS, spawnHotline, type HotlineProcess } from './helpers/child-process.js';
import { freePort } from './helpers/ports.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'admin-token-1';
let emulator: PlatformEmulator | undefined;
const children: HotlineProcess[] = [];
const dir = mkdtempSync(path.join(tmpdir(), 'hotline-campaign-'));

let location: TestStoreLocation | undefined;

afterEach(async () => {
  for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await emulator?.close();
  await location?.remove();
  location = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const number = (i: number): string => `4915200000${String(i).padStart(2, '0')}`;

test.each(await storeKinds())(
  'a campaign resumes after SIGKILL with the same database: nobody already reached is called a second time (%s)',
  async (kind) => {
    location = await freshStoreLocation(kind);
    let wsUrl = '';
    emulator = await startPlatformEmulator({
      port: 0,
      hotlineUrl: () => wsUrl,
      voice: { speed: 50 },
      // Nobody answers the third: it is still ringing when Hotline is killed.
      answers: { [number(0)]: 'person', [number(1)]: 'person', [number(2)]: 'no_answer' },
      defaultAnswer: 'mailbox',
      // Every call rings at once, as the service rings them, and the emulator plays on until it is closed. (Played
      // one after another from piped input it stopped once a person's call ended with no call waiting: under load
      // the second person could hang up before the third call was placed, and nobody answered from then on.)
      personScript: ['Hello?', 'Yes, that works.', 'Bye.'],
      input: Readable.from([]),
      interactive: false,
      output: () => undefined,
    });
    const vars = {
      ADMIN_TOKEN: ADMIN,
      AIFLOW_API_URL: emulator.url,
      AIFLOW_ACCESS_TOKEN: 'platform-token',
      AIFLOW_ID: 'flow-1',
      AIFLOW_BILLING_DEVICE: 'dev-1',
      DATABASE_FILE: path.join(dir, 'hotline.db'),
      ...location.env,
    };
    // The port is chosen before the start: a call the restarted Hotline places before its first log line
    // reaches the test must ring it, not the killed one.
    const start = async (): Promise<{ child: HotlineProcess; url: string }> => {
      const port = await freePort();
      wsUrl = `ws://127.0.0.1:${port}/ws`;
      const child = spawnHotline({ ...vars, PORT: String(port) });
      children.push(child);
      const [, ws] = await child.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
      expect(ws).toBe(wsUrl);
      return { child, url: `http://127.0.0.1:${port}` };
    };

    const first = await start();
    const contacts = Array.from({ length: 6 }, (_, i) => ({ phone: number(i) }));
    const created = await fetch(`${first.url}/api/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'resume',
        contacts,
        concurrency: 3,
        // Every call answers at once (side by side) but the third: a short wait spends little real time on it.
        answer_timeout_seconds: 5,
        retries: { no_answer: { times: 1, after_minutes: 0 } },
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    // Killed while the people's calls are in progress (the three ring at once): a person has heard Hotline, each
    // person has lines left to say, and the third call is still unanswered.
    // No event tells the test when Hotline's greeting starts playing: it looks at the emulator's record. The three
    // are placed side by side, so the record's order is theirs only on a quiet machine: the one that never answers
    // may be second (waiting for the second to hear Hotline then waited for ever).
    const heard = (): boolean => emulator!.calls.some((c) => c.answeredAs === 'person' && c.hotlineSaid.length > 0);
    const deadline = Date.now() + 60_000;
    while (!heard() || emulator.requests.length < 3) {
      if (Date.now() > deadline) {
        throw new Error(`no person heard Hotline with three calls placed: ${JSON.stringify(emulator.calls.map((c) => [c.toPhoneNumber, c.answeredAs, c.hotlineSaid.length]))}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    first.child.child.kill('SIGKILL');
    expect(await first.child.exited).toBe('SIGKILL');
    const reachedBefore = emulator.calls.filter((c) => c.answeredAs === 'person' && c.hotlineSaid.length > 0).map((c) => c.toPhoneNumber);
    expect(reachedBefore.length).toBeGreaterThanOrEqual(1);

    const second = await start();
    for (;;) {
      const res = await fetch(`${second.url}/api/campaigns/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      const progress = (await res.json()) as { state: string };
      if (progress.state === 'done') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const requested = emulator.requests.map((r) => (r.body as { toPhoneNumber: string }).toPhoneNumber);
    for (const n of reachedBefore) expect(requested.filter((r) => r === n)).toHaveLength(1);
    for (let i = 0; i < 6; i++) expect(requested).toContain(number(i));
    const csv = await (await fetch(`${second.url}/api/campaigns/${id}/results.csv`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    const rows = csv.trim().split('\r\n').slice(1);
    expect(rows).toHaveLength(6);
    // Reached before the kill: completed after one call. The call still ringing when the process died waits out
    // its answer time after the restart, counts as an unanswered attempt, and is tried once more; the mailboxes
    // answer the rest.
    for (const n of reachedBefore) expect(rows.find((row) => row.startsWith(`${n},`))).toMatch(/^\d+,done,completed,1,/);
    expect(rows[2]).toMatch(new RegExp(`^${number(2)},done,no_answer,2,`));
    for (const row of rows.slice(3)) expect(row).toMatch(/^\d+,done,voicemail,[12],/);
  },
  CHILD_TEST_TIMEOUT_MS * 2,
);
