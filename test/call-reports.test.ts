/**
 * The report of every call, end to end: a call over the real WebSocket, the
 * scripted LLM filling report.md's fields, a real receiver checking the
 * signature — and a report that survives the receiver being down across a
 * restart of Hotline, delivered exactly once.
 */
import { afterEach, describe, expect, test } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { closedPort, startReportReceiver, type ReportReceiver } from './helpers/report-receiver.js';
import { lastUserText } from './helpers/scripts.js';
import { freshStoreLocation, storeKinds } from './helpers/stores.js';

const SECRET = 'report-secret-1';
const FIELDS = { summary: 'Anna asked about order 4711 and wants a call back.', callback_wanted: true, customer_number: '4711', sentiment: 'positive', resolved: false };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the report's model answers. */
let reportAnswer: Record<string, unknown> = FIELDS;

/** The call's model, and the report's: a request with response_format is the report's. */
function script(request: ChatRequestBody): ScriptedReply {
  if ('response_format' in request && request.response_format) return { content: JSON.stringify(reportAnswer) };
  if (lastUserText(request) === 'That is all, bye.') return { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] };
  return { content: 'I will ask a colleague to call you back about order 4711.' };
}

async function hotline(env: Record<string, string>): Promise<TestHotline> {
  const started = await startTestHotline(script, { REPORT_FIELDS: 'true', REPORT_WEBHOOK_SECRET: SECRET, ...env });
  cleanups.push(() => started.close());
  return started;
}

async function receiver(port = 0): Promise<ReportReceiver> {
  const started = await startReportReceiver(SECRET, port);
  cleanups.push(() => started.close());
  return started;
}

/** A short call that the model ends with a goodbye. */
async function call(env: TestHotline): Promise<string> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.2 } });
  cleanups.push(() => service.close());
  service.start();
  await service.nextOfType('speak');
  service.say('Where is my order 4711? Please call me back.');
  await service.nextOfType('speak');
  service.say('That is all, bye.');
  await service.nextOfType('hangup');
  service.end();
  await expect.poll(() => env.hotline.registry.size).toBe(0);
  return service.sessionId;
}

describe('the report of every call', () => {
  test("a call's report carries report.md's fields as the LLM filled them, signed for the receiver", async () => {
    const inbox = await receiver();
    const env = await hotline({ REPORT_WEBHOOK_URL: inbox.url });
    const sessionId = await call(env);
    const delivered = await inbox.request(0);
    expect(delivered.verified).toBe(true);
    const report = JSON.parse(delivered.body) as Record<string, unknown>;
    expect(report).toMatchObject({
      version: 1,
      session_id: sessionId,
      direction: 'inbound',
      end_reason: 'agent_hung_up',
      summary: FIELDS.summary,
      fields: { callback_wanted: true, customer_number: '4711', sentiment: 'positive', resolved: false },
      fields_status: 'ok',
      turns: { count: 2 },
    });
    expect(report.transcript).toEqual(expect.arrayContaining([expect.objectContaining({ role: 'user', text: 'That is all, bye.' })]));
    // The model was asked with report.md's schema.
    const asked = env.llm.requests.find((r) => 'response_format' in r.body && r.body.response_format);
    expect(JSON.stringify(asked?.body.response_format)).toContain('callback_wanted');
    // And it is kept: the database has the call and its report.
    expect((await env.hotline.reports.getCall(sessionId))?.report).toBeDefined();
  });

  test('a receiver that is down across a restart of Hotline still gets the report, exactly once', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/hooks/hotline`;
    const first = await hotline({ REPORT_WEBHOOK_URL: url });
    const sessionId = await call(first);
    // The first attempt fails: nothing listens.
    await expect.poll(async () => (await first.hotline.reports.getCall(sessionId))?.deliveries[0]?.attempts ?? 0).toBeGreaterThanOrEqual(1);
    expect((await first.hotline.reports.getCall(sessionId))?.deliveries[0]?.status).toBe('pending');
    await first.hotline.close();

    // The receiver is back, and so is Hotline, on the same database.
    const inbox = await receiver(port);
    const second = await hotline({ REPORT_WEBHOOK_URL: url, TRANSCRIPTS_DIR: first.transcriptsDir });
    const delivered = await inbox.request(0);
    expect(delivered.verified).toBe(true);
    expect(JSON.parse(delivered.body)).toMatchObject({ session_id: sessionId, fields_status: 'ok' });
    await expect.poll(async () => (await second.hotline.reports.getCall(sessionId))?.deliveries[0]?.status).toBe('delivered');
    expect(inbox.accepted(delivered.id!)).toBe(1);
    expect(inbox.received.filter((r) => JSON.parse(r.body).session_id === sessionId)).toHaveLength(1);
  });
});

describe.each(await storeKinds())('what the report model writes (%s)', (kind) => {
  test('a card or IBAN it puts in the summary or a field is taken out before the store, the story and the signed webhook', async () => {
    const admin = 'call-reports-admin-token-0123456789';
    const written = {
      summary: 'Anna paid with 4242 4242 4242 4242 and wants the refund on DE89 3704 0044 0532 0130 00.',
      callback_wanted: true,
      customer_number: 'card 4242-4242-4242-4242',
      sentiment: 'neutral',
      resolved: true,
    };
    reportAnswer = written;
    cleanups.push(async () => {
      reportAnswer = FIELDS;
    });
    const store = await freshStoreLocation(kind);
    cleanups.push(() => store.remove());
    const inbox = await receiver();
    const env = await hotline({ REPORT_WEBHOOK_URL: inbox.url, ADMIN_TOKEN: admin, ...store.env });
    const sessionId = await call(env);
    const delivered = await inbox.request(0);
    expect(delivered.verified).toBe(true);
    expect(JSON.parse(delivered.body)).toMatchObject({
      summary: 'Anna paid with [card number] and wants the refund on [IBAN].',
      fields: { customer_number: 'card [card number]' },
      fields_status: 'ok',
    });
    const login = await fetch(`${env.hotline.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: admin }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
    const story = await (await fetch(`${env.hotline.url}/dashboard/calls/${sessionId}`, { headers: { accept: 'text/html', cookie } })).text();
    expect(story).toContain('Anna paid with [card number]');
    const rows = JSON.stringify(await env.hotline.store.db.selectFrom('reports').selectAll().execute());
    for (const [where, text] of [['the webhook', delivered.body], ['the story', story], ['the reports table', rows]] as const) {
      for (const trace of ['4242', 'DE89', '3704 0044']) expect(text, `${where} keeps "${trace}"`).not.toContain(trace);
    }
  });
});
