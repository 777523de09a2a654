import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { runCampaignCli, USAGE } from '../src/cli/campaign.js';
import { afterEach, describe, expect, test } from 'vitest';
import { ShiftedClock } from '../src/campaigns/clock.js';
import type { CampaignProgress } from '../src/campaigns/progress.js';
import { startPlatformEmulator, type PersonAnswer, type PlatformEmulator } from '../src/simulator/platform-emulator.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds, type StoreKind, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'admin-token-1';
const PLATFORM_TOKEN = 'platform-token-1';

let env: TestHotline | undefined;
let emulator: PlatformEmulator | undefined;
let location: TestStoreLocation | undefined;

afterEach(async () => {
  await emulator?.close();
  await env?.close();
  await location?.remove();
  emulator = undefined;
  env = undefined;
  location = undefined;
});

const script = scriptByUserText({
  'Please never call me again.': { toolCalls: [{ name: 'do_not_call', arguments: '{"reason":"asked"}' }] },
});

/** `sideBySide`: every call rings at once and plays `input` (as the service runs calls); else one after another, as at a terminal. */
async function startBoth(kind: StoreKind, answers: Record<string, PersonAnswer>, clock: ShiftedClock, input: string[] = [], sideBySide = false) {
  location = await freshStoreLocation(kind);
  emulator = await startPlatformEmulator({
    port: 0,
    hotlineUrl: () => env!.hotline.wsUrl,
    platformToken: PLATFORM_TOKEN,
    voice: { speed: 50 },
    answers,
    input: Readable.from(sideBySide ? [] : input),
    ...(sideBySide ? { personScript: input } : {}),
    interactive: false,
    output: () => undefined,
  });
  env = await startTestHotline(
    script,
    {
      ADMIN_TOKEN: ADMIN,
      AIFLOW_API_URL: emulator.url,
      AIFLOW_ACCESS_TOKEN: PLATFORM_TOKEN,
      AIFLOW_ID: 'flow-1',
      AIFLOW_BILLING_DEVICE: 'dev-1',
      ...location.env,
    },
    {},
    { campaignClock: clock },
  );
  return { emulator, env };
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(`${env!.hotline.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** Resolves once the campaign is done; records the most calls in progress at once on the way. */
function whenDone(id: string): { done: Promise<void>; maxInCall: () => number } {
  let max = 0;
  const runner = env!.hotline.campaigns;
  const done = new Promise<void>((resolve, reject) => {
    const check = async (): Promise<void> => {
      const c = await runner.require(id);
      const inCall = (await runner.contacts(id)).filter((x) => x.status === 'calling' || x.status === 'reached').length;
      max = Math.max(max, inCall);
      if (c.state === 'done') {
        remove();
        resolve();
      }
    };
    const look = (): void => void check().catch(reject);
    const remove = runner.onChange(look);
    look();
  });
  return { done, maxInCall: () => max };
}

const number = (i: number): string => `4915100000${String(i).padStart(2, '0')}`;
/** Monday 2 March 2026, 08:59 in Berlin (07:59 UTC): a minute before the calling hours open. */
const MONDAY_0859_BERLIN = Date.parse('2026-03-02T07:59:00Z');

describe.each(await storeKinds())('campaigns against the platform emulator on %s', (kind) => {
  test('20 contacts, concurrency 3, calling hours on a fake clock, a no-answer retried twice, a busy line, a mailbox, a stopped number', async () => {
    const clock = new ShiftedClock(MONDAY_0859_BERLIN);
    // Side by side, a call answers as soon as it is placed: a short answer timeout spends little real time on the no-answer's three attempts.
    await startBoth(kind, { [number(3)]: 'no_answer', [number(5)]: 'busy', [number(7)]: 'mailbox' }, clock, [], true);
    const contacts = Array.from({ length: 20 }, (_, i) => ({ phone: `+${number(i)}`, name: `Person ${i}` }));
    const created = await api('POST', '/api/campaigns', {
      name: 'spring check-in',
      contacts,
      time_zone: 'Europe/Berlin',
      calling_hours: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '18:00' },
      concurrency: 3,
      answer_timeout_seconds: 3,
      retries: { no_answer: { times: 2, after_minutes: 0 } },
      stop_list: [`+${number(9)}`],
    });
    expect(created.status).toBe(201);
    const { id } = created.json as { id: string };
    const watch = whenDone(id);

    // Outside the calling hours nothing is placed.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(emulator!.requests).toHaveLength(0);
    const before = (await api('GET', `/api/campaigns/${id}`)).json as CampaignProgress;
    expect(before).toMatchObject({ state: 'running', called: 0, pending: 19, outcomes: { refused: 1 } });

    clock.advance(60_000);
    await watch.done;

    expect(watch.maxInCall()).toBeLessThanOrEqual(3);
    expect(watch.maxInCall()).toBe(3);
    const requested = emulator!.requests.map((r) => (r.body as { toPhoneNumber: string }).toPhoneNumber);
    expect(requested.filter((n) => n === number(3))).toHaveLength(3);
    expect(requested).not.toContain(number(9));
    for (let i = 0; i < 20; i++) if (i !== 3 && i !== 9) expect(requested.filter((n) => n === number(i))).toHaveLength(1);

    const progress = (await api('GET', `/api/campaigns/${id}`)).json as CampaignProgress;
    expect(progress).toMatchObject({
      state: 'done',
      called: 19,
      pending: 0,
      voicemail: 1,
      outcomes: { completed: 16, voicemail: 1, no_answer: 1, busy: 1, refused: 1, failed: 0 },
    });

    const csv = await api('GET', `/api/campaigns/${id}/results.csv`);
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('phone,status,outcome,attempts,last_session_id,last_error,name');
    expect(lines[4]).toMatch(new RegExp(`^${number(3)},done,no_answer,3,`));
    expect(lines[6]).toMatch(new RegExp(`^${number(5)},done,busy,1,`));
    expect(lines[8]).toMatch(new RegExp(`^${number(7)},done,voicemail,1,`));
    expect(lines[10]).toMatch(new RegExp(`^${number(9)},done,refused,0,,on the stop list`));
  }, 120_000);

  test("a contact's own time zone decides its calling hours: London opens an hour after Berlin, New York six hours after", async () => {
    const clock = new ShiftedClock(MONDAY_0859_BERLIN);
    await startBoth(kind, { [number(1)]: 'busy', [number(2)]: 'busy', [number(3)]: 'busy' }, clock);
    const created = await api('POST', '/api/campaigns', {
      name: 'zones',
      contacts: [
        { phone: number(1), time_zone: 'Europe/London' },
        { phone: number(2), time_zone: 'America/New_York' },
        { phone: number(3) },
      ],
      time_zone: 'Europe/Berlin',
      calling_hours: { days: ['mon'], from: '09:00', to: '18:00' },
    });
    const { id } = created.json as { id: string };
    const runner = env!.hotline.campaigns;
    const ended = (index: number) =>
      new Promise<void>((resolve, reject) => {
        const check = async (): Promise<void> => {
          if ((await runner.contacts(id))[index]?.status !== 'done') return;
          remove();
          resolve();
        };
        const look = (): void => void check().catch(reject);
        const remove = runner.onChange(look);
        look();
      });
    const requested = () => emulator!.requests.map((r) => (r.body as { toPhoneNumber: string }).toPhoneNumber);

    // 09:00 in Berlin is 08:00 in London and 03:00 in New York: only the Berlin contact is called.
    clock.advance(60_000);
    await ended(2);
    expect(requested()).toEqual([number(3)]);
    // 10:00 in Berlin is 09:00 in London.
    clock.advance(60 * 60_000);
    await ended(0);
    expect(requested()).toEqual([number(3), number(1)]);
    expect((await runner.contacts(id))[1]).toMatchObject({ status: 'pending', attempts: 0 });
    // 15:00 in Berlin is 09:00 in New York.
    clock.advance(5 * 60 * 60_000);
    await whenDone(id).done;
    expect(requested()).toEqual([number(3), number(1), number(2)]);
  }, 60_000);

  test('do_not_call: the person asks never to be called again; the contact ends refused and the number joins the stop list', async () => {
    const clock = new ShiftedClock(Date.now());
    await startBoth(kind, {}, clock, ['Please never call me again.\n']);
    const created = await api('POST', '/api/campaigns', {
      name: 'one call',
      contacts: `phone,name\n+${number(1)},Anna\n`,
    });
    expect(created.status).toBe(201);
    const { id } = created.json as { id: string };
    await whenDone(id).done;
    const [contact] = await env!.hotline.campaigns.contacts(id);
    expect(contact).toMatchObject({ status: 'done', outcome: 'refused', attempts: 1 });

    // A second campaign never calls the number again.
    const again = await api('POST', '/api/campaigns', { name: 'again', contacts: [{ phone: number(1) }] });
    const second = (again.json as { id: string }).id;
    await whenDone(second).done;
    expect((await env!.hotline.campaigns.contacts(second))[0]).toMatchObject({ outcome: 'refused', attempts: 0 });
    expect(emulator!.requests).toHaveLength(1);
  }, 60_000);

  test('the API: bearer token, 400 for a bad definition, 404 for an unknown campaign, pause and resume', async () => {
    const clock = new ShiftedClock(MONDAY_0859_BERLIN);
    await startBoth(kind, {}, clock);
    const res = await fetch(`${env!.hotline.url}/api/campaigns`);
    expect(res.status).toBe(401);
    const bad = await api('POST', '/api/campaigns', { name: 'x', contacts: [{ phone: 'abc' }] });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ problems: [{ field: 'contacts[0]', message: expect.stringMatching(/^Invalid phone number "abc"/) }] });
    expect((await api('GET', '/api/campaigns/nope')).status).toBe(404);
    const created = await api('POST', '/api/campaigns', {
      name: 'later',
      contacts: [{ phone: number(1) }],
      time_zone: 'Europe/Berlin',
      calling_hours: [{ days: ['sat'], from: '10:00', to: '12:00' }],
    });
    const { id } = created.json as { id: string };
    expect(((await api('POST', `/api/campaigns/${id}/pause`)).json as CampaignProgress).state).toBe('paused');
    expect(((await api('POST', `/api/campaigns/${id}/resume`)).json as CampaignProgress).state).toBe('running');
    const list = (await api('GET', '/api/campaigns')).json as { campaigns: CampaignProgress[] };
    expect(list.campaigns.map((c) => c.name)).toEqual(['later']);
    expect(emulator!.requests).toHaveLength(0);
  });

  test('the CLI: --help, start from a YAML file with a CSV beside it, status, pause, results --out', async () => {
    const clock = new ShiftedClock(MONDAY_0859_BERLIN);
    await startBoth(kind, {}, clock);
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-campaign-cli-'));
    try {
      const lines: string[] = [];
      const problems: string[] = [];
      const run = (...argv: string[]) =>
        runCampaignCli([...argv, '--url', env!.hotline.url], { ADMIN_TOKEN: ADMIN }, (l) => lines.push(l), (l) => problems.push(l));
      expect(await runCampaignCli(['--help'], {}, (l) => lines.push(l), (l) => problems.push(l))).toBe(0);
      expect(lines.pop()).toBe(USAGE);
      expect(await run('status')).toBe(2);
      expect(problems.pop()).toContain('status needs a campaign id');

      await writeFile(path.join(dir, 'people.csv'), `phone,name,time_zone\n+${number(1)},Anna,Europe/Berlin\n+${number(2)},Ben,\n`);
      await writeFile(
        path.join(dir, 'spring.yaml'),
        'name: spring\ncontacts: people.csv\ntime_zone: Europe/Berlin\ncalling_hours: { days: [sat], from: "10:00", to: "12:00" }\n',
      );
      expect(await run('start', path.join(dir, 'spring.yaml'))).toBe(0);
      const id = /^campaign (\S+) started with 2 contacts$/.exec(lines.pop()!)![1]!;
      expect(await run('status', id)).toBe(0);
      expect(lines.pop()).toBe('spring [running]: called 0/2, reached 0, voicemail 0, pending 2, in call 0');
      expect(await run('pause', id)).toBe(0);
      expect(lines.pop()).toContain('spring [paused]');
      const out = path.join(dir, 'results.csv');
      expect(await run('results', id, '--out', out)).toBe(0);
      expect(await readFile(out, 'utf8')).toBe(
        `phone,status,outcome,attempts,last_session_id,last_error,name\r\n${number(1)},pending,,0,,,Anna\r\n${number(2)},pending,,0,,,Ben\r\n`,
      );
      expect(await run('status', 'nope')).toBe(1);
      expect(lines.pop()).toContain('HTTP 404');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('status --watch on a terminal rewrites one line in place until the campaign is done, then ends the line', async () => {
    await startBoth(kind, { [number(1)]: 'busy', [number(2)]: 'busy' }, new ShiftedClock(MONDAY_0859_BERLIN));
    const created = await api('POST', '/api/campaigns', { name: 'watched', contacts: [{ phone: number(1) }, { phone: number(2) }] });
    const { id } = created.json as { id: string };
    const chunks: string[] = [];
    const lines: string[] = [];
    const argv = ['status', id, '--watch', '--interval-ms', '10', '--url', env!.hotline.url];
    expect(await runCampaignCli(argv, { ADMIN_TOKEN: ADMIN }, (l) => lines.push(l), (l) => lines.push(l), (c) => chunks.push(c))).toBe(0);
    expect(lines).toEqual([]);
    expect(chunks.at(-1)).toBe('\n');
    const rewrites = chunks.slice(0, -1);
    expect(rewrites.every((c) => /^\r\x1b\[Kwatched \[(running|done)\]: called \d\/2/.test(c))).toBe(true);
    expect(rewrites.at(-1)).toBe('\r\x1b[Kwatched [done]: called 2/2, reached 0, voicemail 0, pending 0, in call 0');
    // A line only when it changed: no two rewrites in a row say the same.
    expect(rewrites.every((c, i) => i === 0 || c !== rewrites[i - 1])).toBe(true);

    expect(await runCampaignCli([...argv.slice(0, 3), '--interval-ms', 'soon'], { ADMIN_TOKEN: ADMIN }, () => undefined, (l) => lines.push(l))).toBe(2);
    expect(lines.pop()).toContain('--interval-ms must be a whole number of at least 10, not "soon".');
  });
});
