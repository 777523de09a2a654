/**
 * `npm run campaign` as users run it (src/cli/campaign.ts in a child process)
 * against a real Hotline on port 0 with campaigns configured, and the API's
 * answer to the same mistakes: every problem says what is wrong and where —
 * the field, and the line of the file it is written on.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ShiftedClock } from '../src/campaigns/clock.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { CHILD_TEST_TIMEOUT_MS } from './helpers/child-process.js';
import { folderWithEnv, runCli, startCli } from './helpers/cli.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';

const CAMPAIGN = 'src/cli/campaign.ts';
const ADMIN = 'admin-token-campaign-cli';
/** Monday 2 March 2026, 08:59 in Berlin: the campaigns here call on Saturdays only, so they wait and call nobody. */
const MONDAY_0859_BERLIN = Date.parse('2026-03-02T07:59:00Z');

let aiflow: FakeAiFlowApi;
let env: TestHotline;
/** A folder with a .env naming the test's Hotline by PORT, as a user's checkout names theirs. */
let folder: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  aiflow = await startFakeAiFlowApi({ token: 'platform-token', flows: { 'flow-1': { phoneNumber: true } } });
  env = await startTestHotline(
    scriptByUserText({}),
    {
      ADMIN_TOKEN: ADMIN,
      AIFLOW_API_URL: aiflow.url,
      AIFLOW_ACCESS_TOKEN: 'platform-token',
      AIFLOW_ID: 'flow-1',
      AIFLOW_BILLING_DEVICE: 'dev-1',
      DATABASE_FILE: ':memory:',
    },
    {},
    { campaignClock: new ShiftedClock(MONDAY_0859_BERLIN) },
  );
  folder = await folderWithEnv({ PORT: env.hotline.port.toString(), ADMIN_TOKEN: ADMIN });
  await mkdir(path.join(folder.dir, 'campaigns'));
});

afterAll(async () => {
  await env?.close();
  await aiflow?.close();
  await folder?.remove();
});

/** Writes files below the folder, e.g. { 'campaigns/spring.yaml': '…' }. */
async function files(contents: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(contents)) await writeFile(path.join(folder.dir, name), text);
}

function campaign(...args: string[]) {
  return runCli(CAMPAIGN, args, { cwd: folder.dir });
}

async function api(method: string, route: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${env.hotline.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

const SATURDAYS = 'calling_hours: { days: [sat], from: "10:00", to: "12:00" }\ntime_zone: Europe/Berlin\n';

describe('npm run campaign -- start <file>', () => {
  test('a file that does not exist: one line naming it, where it was looked for and what to give, exit 2', async () => {
    const run = await campaign('start', 'campaigns/sprng.yaml');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `campaign: cannot start the campaign: campaigns/sprng.yaml does not exist (looked for ${path.join(folder.dir, 'campaigns/sprng.yaml')}). ` +
        'Give the path of a campaign definition, a YAML or JSON file, e.g. npm run campaign -- start campaigns/spring.yaml. ' +
        'See `npm run campaign -- --help`.',
    ]);
  }, CHILD_TEST_TIMEOUT_MS);

  test('a contacts file that does not exist: named as written, relative to the definition, with its line; nothing is created', async () => {
    await files({ 'campaigns/spring.yaml': `name: spring\n${SATURDAYS}contacts: people.csv\n` });
    const run = await campaign('start', 'campaigns/spring.yaml');
    expect(run.code, run.stderr).toBe(1);
    expect(run.lines).toEqual([
      'campaign: campaigns/spring.yaml has 1 problem; nothing was created:',
      `  spring.yaml line 4: contacts: people.csv does not exist (looked for ${path.join(folder.dir, 'campaigns/people.csv')}, ` +
        'as the path is relative to the folder of spring.yaml): put the file there, or correct the path',
    ]);
    expect((await api('GET', '/api/campaigns')).json).toEqual({ campaigns: [] });
  }, CHILD_TEST_TIMEOUT_MS);

  test('mistakes in the definition: a sentence each with the field and its line, in the order of the file; nothing is sent', async () => {
    await files({
      'campaigns/people.csv': 'phone,name\n+49 151 1000001,Anna\n',
      'campaigns/broken.yaml': [
        'name: spring',
        'contacts: nobody.csv',
        'time_zone: Europe/Berln',
        'calling_hours:',
        '  - { days: [monday, tue], from: "9:00", to: "17:00" }',
        '  - { days: [sat], from: "14:00", to: "12:00" }',
        'concurency: 3',
        'pace_ms: fast',
        'retries:',
        '  no_answer: { times: 30 }',
        '',
      ].join('\n'),
    });
    const run = await campaign('start', 'campaigns/broken.yaml');
    expect(run.code, run.stderr).toBe(1);
    expect(run.lines).toEqual([
      'campaign: campaigns/broken.yaml has 9 problems; nothing was created:',
      expect.stringMatching(/^ {2}broken\.yaml line 2: contacts: nobody\.csv does not exist \(looked for .*nobody\.csv, as the path is relative/),
      '  broken.yaml line 3: time_zone: "Europe/Berln" is not a time zone: use an IANA name such as Europe/Berlin',
      '  broken.yaml line 5: calling_hours[0].days[0]: must be one of sun, mon, tue, wed, thu, fri, sat, not "monday"',
      '  broken.yaml line 5: calling_hours[0].from: "9:00" is not a time: write HH:MM, e.g. "09:00" (24:00 for the end of the day)',
      '  broken.yaml line 6: calling_hours[1]: from 14:00 is not before to 12:00: a window ends after it starts (use two windows across midnight)',
      '  broken.yaml line 7: concurency: unknown key "concurency": did you mean "concurrency"?',
      '  broken.yaml line 8: pace_ms: must be a number, not "fast"',
      '  broken.yaml line 10: retries.no_answer.times: must be at most 20, not 30',
      '  broken.yaml line 10: retries.no_answer.after_minutes: is missing; it must be a number',
    ]);
    expect((await api('GET', '/api/campaigns')).json).toEqual({ campaigns: [] });
  }, CHILD_TEST_TIMEOUT_MS);

  test("contacts Hotline refuses: each at its line of the CSV file, or of the definition's own list; exit 1", async () => {
    await files({
      'campaigns/people.csv': 'phone,name\n+49 151 1000001,Anna\ncall me,Ben\n,Cleo\n+49 151 1000004,David\n',
      'campaigns/spring.yaml': `name: spring\n${SATURDAYS}contacts: people.csv\n`,
      'campaigns/inline.yaml': `name: inline\n${SATURDAYS}contacts:\n  - { phone: "+49 151 1000001", name: Anna }\n  - { phone: "12", name: Ben }\n`,
    });
    const [fromCsv, inline] = await Promise.all([campaign('start', 'campaigns/spring.yaml'), campaign('start', 'campaigns/inline.yaml')]);
    expect(fromCsv.code, fromCsv.stderr).toBe(1);
    expect(fromCsv.lines).toEqual([
      'campaign: Hotline refused campaigns/spring.yaml with 2 problems; nothing was created:',
      expect.stringMatching(/^ {2}people\.csv line 3: Invalid phone number "call me": it contains letters/),
      '  people.csv line 4: Invalid phone number "": it is empty',
    ]);
    expect(inline.code, inline.stderr).toBe(1);
    expect(inline.lines).toEqual([
      'campaign: Hotline refused campaigns/inline.yaml with 1 problem; nothing was created:',
      expect.stringMatching(/^ {2}inline\.yaml line 6: contacts\[1\]: Invalid phone number "12": it has 2 digits/),
    ]);
    expect((await api('GET', '/api/campaigns')).json).toEqual({ campaigns: [] });
  }, CHILD_TEST_TIMEOUT_MS);

  test('a good definition is created at the Hotline the .env names by PORT; status follows it', async () => {
    await files({
      'campaigns/people.csv': 'phone,name\n+49 151 1000001,Anna\n+49 151 1000002,Ben\n',
      'campaigns/good.yaml': `name: good\n${SATURDAYS}contacts: people.csv\n`,
    });
    const started = await campaign('start', 'campaigns/good.yaml');
    expect(started.code, `${started.stdout}${started.stderr}`).toBe(0);
    const id = /^campaign (\S+) started with 2 contacts$/.exec(started.lines[0] ?? '')?.[1];
    expect(id, started.stdout).toBeDefined();
    const list = await campaign('list');
    expect(list.lines).toEqual([expect.stringMatching(new RegExp(`^${id}  good \\[running\\]: called 0/2`))]);
  }, CHILD_TEST_TIMEOUT_MS);

  test('status --watch ends quietly when its reader stops (| head -1): exit 0, no stack', async () => {
    const created = await api('POST', '/api/campaigns', { name: 'watched', contacts: [{ phone: '+49 151 1000009' }], calling_hours: { days: ['sat'], from: '10:00', to: '12:00' } });
    const { id } = created.json as { id: string };
    const cli = startCli(CAMPAIGN, ['status', id, '--watch', '--interval-ms', '20'], { cwd: folder.dir });
    await cli.line(/^watched \[running\]/);
    cli.child.stdout.destroy();
    // A change gives the watch a line to print, which now has no reader.
    await api('POST', `/api/campaigns/${id}/pause`);
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toBe('');
  }, CHILD_TEST_TIMEOUT_MS);
});

describe('POST /api/campaigns refuses what cannot run with sentences a person can act on', () => {
  test('the definition: every problem with its field, in `error` and one by one in `problems`', async () => {
    const refused = await api('POST', '/api/campaigns', {
      name: 'x',
      contacts: [{ phone: '+49 151 1000001' }],
      calling_hours: '9-17',
      concurrency: 500,
      retries: { busi: { times: 1, after_minutes: 5 } },
    });
    expect(refused.status).toBe(400);
    const problems = [
      { field: 'calling_hours', message: 'must be a calling window { days, from, to } or a list of them, not "9-17"' },
      { field: 'concurrency', message: 'must be at most 100, not 500' },
      { field: 'retries.busi', message: 'unknown key "busi": did you mean "busy"?' },
    ];
    expect(refused.json).toEqual({
      error: `invalid campaign: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
      problems,
    });
  });

  test('the contacts: a CSV row by its line, a row of a list by its place', async () => {
    const csv = await api('POST', '/api/campaigns', { name: 'x', contacts: 'phone,name\n+49 151 1000001,Anna\nabc,Ben\n' });
    expect(csv.status).toBe(400);
    expect(csv.json).toEqual({
      error: expect.stringMatching(/^invalid campaign: contacts line 3: Invalid phone number "abc": it contains letters/),
      problems: [{ field: 'contacts', line: 3, message: expect.stringMatching(/^Invalid phone number "abc"/) }],
    });
    // A huge list of bad rows is answered with the first hundred and how many more.
    const many = await api('POST', '/api/campaigns', { name: 'x', contacts: `phone\n${'abc\n'.repeat(150)}` });
    expect(many.json).toMatchObject({ more: 50 });
    expect((many.json as { problems: unknown[] }).problems).toHaveLength(100);
    const rows = await api('POST', '/api/campaigns', { name: 'x', contacts: [{ phone: '+49 151 1000001' }, { name: 'Ben' }] });
    expect(rows.json).toEqual({
      error: 'invalid campaign: contacts[1]: no number: give it a column phone, phone_number, number or toPhoneNumber',
      problems: [{ field: 'contacts[1]', message: 'no number: give it a column phone, phone_number, number or toPhoneNumber' }],
    });
  });
});
