/**
 * A session id the voice service uses again is a new call (issue 21): it never
 * overwrites or reopens an ended one. Both calls keep their own stored row,
 * report, delivery, transcript file and dashboard story — across a restart of
 * Hotline, and within one run. A late event of an ended call is not adopted;
 * a call Hotline only let go of (a shutdown) still is (production-service.test.ts).
 * On SQLite and on PostgreSQL.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { CallReportSchema } from '../src/reports/report-builder.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startReportReceiver, type ReportReceiver } from './helpers/report-receiver.js';
import { scriptByUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds, type StoreKind } from './helpers/stores.js';

const SECRET = 'whsec-reuse';
const ADMIN = 'admin-token-for-the-reuse-test';
const SESSION = 'c0ffee-1';
const GREETING = 'Hello, thanks for calling! How can I help you today?';
const script = scriptByUserText({}, { content: 'Noted.' });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An empty store of this kind, removed after the test: what DATABASE_FILE or DATABASE_URL the Hotlines get. */
async function storeEnv(kind: StoreKind): Promise<Record<string, string>> {
  const location = await freshStoreLocation(kind);
  cleanups.push(() => location.remove());
  return location.env;
}

async function hotline(receiver: ReportReceiver, vars: Record<string, string>): Promise<TestHotline> {
  const env = await startTestHotline(script, {
    REPORT_WEBHOOK_URL: receiver.url,
    REPORT_WEBHOOK_SECRET: SECRET,
    ADMIN_TOKEN: ADMIN,
    ...vars,
  });
  cleanups.push(() => env.close());
  return env;
}

/** One whole call with `words`, over a real WebSocket; resolves once it is stored and reported. */
async function call(env: TestHotline, words: string): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, { sessionId: SESSION, playback: { kind: 'auto', msPerChar: 0 } });
  service.start();
  expect((await service.nextOfType('speak')).text).toBe(GREETING);
  service.say(words);
  await service.next((a) => a.type === 'speak' && a.text === 'Noted.');
  service.end('hangup');
  await service.close();
  await env.hotline.registry.whenRecorded();
  await env.hotline.reports.whenIdle();
  return service;
}

function said(body: string): string[] {
  return CallReportSchema.parse(JSON.parse(body)).transcript.filter((line) => line.role === 'user').map((line) => line.text);
}

describe.each(await storeKinds())('on %s', (kind) => {
  test('after a restart, a session id used again is a new call: both stored, reported, delivered, written and shown apart', async () => {
    const receiver = await startReportReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const database = await storeEnv(kind);
    const first = await hotline(receiver, database);
    await call(first, 'First caller here');
    await first.hotline.close();

    const shared = { TRANSCRIPTS_DIR: first.transcriptsDir, ...database };
    const second = await hotline(receiver, shared);
    // A late event of the ended call reaches the new start: it is not adopted, and nothing of it is kept.
    const late = await fetch(`${second.hotline.url}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'user_speak', session: { id: SESSION }, text: 'late words' }),
    });
    expect(late.status).toBe(204);
    expect(second.hotline.registry.get(SESSION)).toBeUndefined();
    await call(second, 'Second caller here');

    const stored = await second.hotline.reports.callsOfSession(SESSION);
    expect(stored).toHaveLength(2);
    const [one, two] = stored as [(typeof stored)[number], (typeof stored)[number]];
    expect(one.call.callId).not.toBe(two.call.callId);
    expect(said(one.report!.body)).toEqual(['First caller here']);
    expect(said(two.report!.body)).toEqual(['Second caller here']);

    // Each call in a file of its own; the first's is as it was when that call ended.
    expect(one.call.transcriptFile).toBe(path.join(first.transcriptsDir, transcriptFileName(SESSION)));
    expect(two.call.transcriptFile).toBe(path.join(first.transcriptsDir, transcriptFileName(SESSION, 2)));
    const firstFile = await readFile(one.call.transcriptFile, 'utf8');
    expect(firstFile).toContain('First caller here');
    expect(firstFile).not.toMatch(/late words|Second caller here/);
    expect(firstFile.trim().split('\n').at(-1)).toMatch(/"text":"session_end"/);

    // The webhook got both, each with the service's session id and its own call id. Delivery is at least once: an
    // attempt in flight when the first Hotline stopped goes again from the second, with the same delivery id.
    const distinct = () => receiver.received.filter((request, at, all) => all.findIndex((other) => other.id === request.id) === at);
    for (let next = 0; distinct().length < 2; next++) await receiver.request(next);
    const delivered = distinct();
    expect(delivered).toHaveLength(2);
    const bodies = delivered.map((request) => CallReportSchema.parse(JSON.parse(request.body)));
    expect(bodies.map((body) => body.session_id)).toEqual([SESSION, SESSION]);
    expect(bodies.map((body) => body.call_id)).toEqual([one.call.callId, two.call.callId]);
    expect(one.deliveries.map((d) => d.callId)).toEqual([one.call.callId]);
    expect(two.deliveries.map((d) => d.callId)).toEqual([two.call.callId]);

    // The dashboard: each story by its call id; the session id leads to the latest call.
    const login = await fetch(`${second.hotline.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: second.hotline.url },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const page = async (id: string) =>
      (await fetch(`${second.hotline.url}/dashboard/calls/${encodeURIComponent(id)}`, { headers: { cookie, accept: 'text/html' } })).text();
    const story1 = await page(one.call.callId);
    expect(story1).toContain('First caller here');
    expect(story1).not.toContain('Second caller here');
    expect(story1).toContain(`href="${two.call.callId}"`);
    expect(await page(two.call.callId)).toContain('Second caller here');
    expect(await page(SESSION)).toContain('Second caller here');
    const history = await (await fetch(`${second.hotline.url}/dashboard/calls`, { headers: { cookie, accept: 'text/html' } })).text();
    expect(history).toContain(`calls/${one.call.callId}`);
    expect(history).toContain(`calls/${two.call.callId}`);
  });

  test('within one run too, a session_start for an id that ended is a new call, and the ended call gets no late events', async () => {
    const receiver = await startReportReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const env = await hotline(receiver, await storeEnv(kind));
    await call(env, 'First caller here');
    const late = await fetch(`${env.hotline.url}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'user_speak', session: { id: SESSION }, text: 'late words' }),
    });
    expect(late.status).toBe(204);
    await call(env, 'Second caller here');
    const stored = await env.hotline.reports.callsOfSession(SESSION);
    expect(stored.map((record) => said(record.report!.body))).toEqual([['First caller here'], ['Second caller here']]);
    expect(new Set(stored.map((record) => record.call.callId)).size).toBe(2);
    expect(new Set(stored.map((record) => record.call.transcriptFile)).size).toBe(2);
  });
});
