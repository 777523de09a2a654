import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { createLogger } from '../src/logger.js';
import { redactorOf } from '../src/privacy/redactor-of.js';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startReportReceiver, type ReportReceiver } from './helpers/report-receiver.js';
import { scriptByUserText } from './helpers/scripts.js';
import { textSink } from './helpers/text-sink.js';
import { eventsOf } from './helpers/sse-events.js';
import { startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.js';
import { freshStoreLocation, storeKinds, type TestStoreLocation } from './helpers/stores.js';

const ADMIN = 'redaction-admin-token-0123456789';
const SECRET = 'redaction-report-secret-0123456789';
/** A test card (Luhn-valid) and a test IBAN (checksum-valid), said digit by digit as speech-to-text writes them. */
const CARD_SAID = 'four one one one one one one one one one one one one one one one';
const IBAN_SAID = 'D E eight nine three seven zero four zero zero four four zero five three two zero one three zero zero zero';
const WORDS = `My card is ${CARD_SAID} and my IBAN is ${IBAN_SAID}, thanks`;
/** What must never be written: the numbers in any form. */
const TRACES = [CARD_SAID, 'four one one one', '4111', IBAN_SAID, 'eight nine three seven', 'DE89', '370400440532013000'];

let env: TestHotline | undefined;
let receiver: ReportReceiver | undefined;
let collector: OtlpReceiver | undefined;
let store: TestStoreLocation | undefined;
/** What the live view was told while the call went on. */
const liveSeen: string[] = [];
afterEach(async () => {
  await env?.close();
  await receiver?.close();
  await collector?.close();
  await store?.remove();
  env = receiver = collector = store = undefined;
});

/** A logger as main.ts makes it (redacting), at debug, what it writes kept in `sink`. */
function capturingLogger(sink: ReturnType<typeof textSink>) {
  return createLogger({ level: 'debug', env: 'test', destination: sink.stream, redact: redactorOf({ cards: true, ibans: true, patterns: [] }) });
}

async function callAndReport(vars: Record<string, string>, log: ReturnType<typeof textSink>): Promise<FakeVoiceService> {
  receiver = await startReportReceiver(SECRET);
  env = await startTestHotline(
    scriptByUserText({ [WORDS]: { content: 'Thank you, I have noted both.' }, 'bye': { content: 'Goodbye!', toolCalls: [{ name: 'hangup', arguments: '{}' }] } }),
    { ADMIN_TOKEN: ADMIN, REPORT_WEBHOOK_URL: receiver.url, REPORT_WEBHOOK_SECRET: SECRET, ...vars },
    {},
    { logger: capturingLogger(log) },
  );
  // The live view watches the call: what it is told of the caller's words goes to every operator's browser.
  const watching = new AbortController();
  const cookie = await logIn();
  const live = eventsOf((await fetch(`${env.hotline.url}/dashboard/live`, { headers: { cookie, accept: 'text/event-stream' }, signal: watching.signal })).body!);
  await live.next('snapshot');
  const service = await FakeVoiceService.connect(env.hotline.wsUrl);
  service.start({ from_phone_number: '4915112345678' });
  await service.next();
  service.say(WORDS);
  await service.next((a) => a.type === 'speak' && a.text === 'Thank you, I have noted both.');
  const said = (await live.nextWith('update', (data) => JSON.stringify(data).includes('My card is'))) as unknown;
  liveSeen.push(JSON.stringify(said));
  watching.abort();
  service.end('caller_hangup');
  await service.close();
  await expect.poll(() => env!.hotline.registry.size).toBe(0);
  await env.hotline.registry.whenRecorded();
  await env.hotline.reports.whenIdle();
  return service;
}

async function logIn(): Promise<string> {
  const login = await fetch(`${env!.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ password: ADMIN }).toString(),
  });
  return (login.headers.get('set-cookie') ?? '').split(';')[0]!;
}

async function storyPage(sessionId: string): Promise<string> {
  const cookie = await logIn();
  const page = await fetch(`${env!.hotline.url}/dashboard/calls/${sessionId}`, { headers: { accept: 'text/html', cookie } });
  expect(page.status).toBe(200);
  return page.text();
}

function expectNoTrace(where: string, text: string): void {
  for (const trace of TRACES) expect(text, `${where} keeps "${trace}"`).not.toContain(trace);
}

describe('a card number and an IBAN said digit by digit', () => {
  test('are redacted in the transcript, the store, the dashboard story, the report and the log; the model still heard them', async () => {
    const log = textSink();
    const service = await callAndReport({}, log);

    // The model's turn had the words as said (REDACT_FROM_MODEL is off by default).
    const asked = JSON.stringify(env!.llm.requests.map((r) => r.body));
    expect(asked).toContain(CARD_SAID);
    expect(asked).toContain(IBAN_SAID);

    const transcript = await readFile(path.join(env!.transcriptsDir, transcriptFileName(service.sessionId)), 'utf8');
    expectNoTrace('the transcript', transcript);
    expect(transcript).toContain('My card is [card number] and my IBAN is [IBAN], thanks');

    const rows = JSON.stringify(await env!.hotline.store.db.selectFrom('calls').selectAll().execute());
    expectNoTrace('the calls table', rows);
    expect(rows).toContain('[card number]');
    expectNoTrace('the reports table', JSON.stringify(await env!.hotline.store.db.selectFrom('reports').selectAll().execute()));

    expect(liveSeen).toHaveLength(1);
    expectNoTrace('the live view', liveSeen[0]!);
    expect(liveSeen[0]).toContain('[card number]');

    const story = await storyPage(service.sessionId);
    expectNoTrace('the story page', story);
    expect(story).toContain('[card number]');

    const report = await receiver!.request(0);
    expectNoTrace('the report', report.body);
    expect(report.body).toContain('[IBAN]');

    const logged = log.text();
    expectNoTrace('the log', logged);
    expect(logged).toContain('My card is [card number]');
    // Numbers are masked in the log: the record and the transcript keep them whole.
    expect(logged).not.toContain('4915112345678');
    expect(logged).toContain('4915•••••••78');
  });

  test('with REDACT_FROM_MODEL the model gets the redacted words too', async () => {
    const log = textSink();
    env = undefined;
    const words = WORDS;
    receiver = await startReportReceiver(SECRET);
    env = await startTestHotline(
      scriptByUserText({ 'My card is [card number] and my IBAN is [IBAN], thanks': { content: 'Noted.' } }),
      { REDACT_FROM_MODEL: 'true' },
      {},
      { logger: capturingLogger(log) },
    );
    const service = await FakeVoiceService.connect(env.hotline.wsUrl);
    service.start();
    await service.next();
    service.say(words);
    await service.next((a) => a.type === 'speak' && a.text === 'Noted.');
    expectNoTrace('the model’s request', JSON.stringify(env.llm.requests.map((r) => r.body)));
    await service.close();
  });
});

describe.each(await storeKinds())('a card said in two breaths (%s)', (kind) => {
  test('neither half is left in the transcript, the store, the report, the log, the traces or the live view', async () => {
    const log = textSink();
    receiver = await startReportReceiver(SECRET);
    collector = await startOtlpReceiver();
    store = await freshStoreLocation(kind);
    env = await startTestHotline(
      () => ({ content: 'Go on.' }),
      {
        ADMIN_TOKEN: ADMIN,
        REPORT_WEBHOOK_URL: receiver.url,
        REPORT_WEBHOOK_SECRET: SECRET,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_INCLUDE_CONTENT: 'true',
        ...store.env,
      },
      {},
      { logger: capturingLogger(log) },
    );
    const watching = new AbortController();
    const live = eventsOf((await fetch(`${env.hotline.url}/dashboard/live`, { headers: { cookie: await logIn(), accept: 'text/event-stream' }, signal: watching.signal })).body!);
    await live.next('snapshot');
    const service = await FakeVoiceService.connect(env.hotline.wsUrl);
    service.start({ from_phone_number: '4915112345678' });
    await service.next();
    const seen: string[] = [];
    for (const said of ['My card is 4242 4242', '4242 4242.']) {
      service.say(said);
      await service.next((a) => a.type === 'speak' && a.text === 'Go on.');
      const before = seen.at(-1);
      seen.push(JSON.stringify(await live.nextWith('update', (data) => /"callerSaid":"[^"]/.test(JSON.stringify(data)) && JSON.stringify(data) !== before)));
    }
    watching.abort();
    service.end('caller_hangup');
    await service.close();
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.whenRecorded();
    await env.hotline.reports.whenIdle();
    const report = await receiver.request(0);
    // The model heard both halves: within the call it may have to act on them.
    expect(JSON.stringify(env.llm.requests.map((r) => r.body))).toContain('4242 4242.');
    const transcript = await readFile(path.join(env.transcriptsDir, transcriptFileName(service.sessionId)), 'utf8');
    const rows = JSON.stringify(await env.hotline.store.db.selectFrom('calls').selectAll().execute());
    const reports = JSON.stringify(await env.hotline.store.db.selectFrom('reports').selectAll().execute());
    // Closed, it has sent every span.
    await env.close();

    const noHalf = (where: string, text: string) => {
      for (const half of ['4242', 'four two']) expect(text, `${where} keeps "${half}"`).not.toContain(half);
    };
    noHalf('the transcript', transcript);
    expect(transcript).toContain('"text":"My card is [card number]"');
    expect(transcript).toContain('"text":"[card number]."');
    noHalf('the calls table', rows);
    expect(rows).toContain('My card is [card number]');
    noHalf('the reports table', reports);
    noHalf('the report', report.body);
    // Without the lines' epoch milliseconds, whose digits may hold a 4242 of their own.
    const logged = log.text().replace(/"time":\d+/g, '"time":0');
    noHalf('the log', logged);
    expect(logged).toContain('My card is [number]');
    const turns = collector.spans.filter((span) => span.name === 'turn').map((span) => String(span.attributes['hotline.turn.caller_text']));
    expect(turns).toEqual(['My card is [number]', '[card number].']);
    noHalf('the live view', seen.join('\n'));
  });
});
