/**
 * OpenTelemetry traces of calls, end to end: a real Hotline exporting OTLP/HTTP JSON to a local
 * receiver, a scripted model that calls an HTTP business tool, the business system and the report
 * webhook as real servers, and the spans decoded as a collector would see them. Also: off by
 * default, with nothing of the SDK loaded, and a collector that cannot be reached costs the call nothing.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { loadConfig, secretsOf } from '../src/config.js';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { ReportingExporter } from '../src/telemetry/reporting-exporter.js';
import { McpHub } from '../src/tools/mcp-hub.js';
import { startCrmServer } from './fixtures/mcp/crm-http-server.js';
import { json, startBusinessServer, type BusinessServer } from './helpers/business-server.js';
import { CHILD_TEST_TIMEOUT_MS, isolatedCwd, spawnHotline } from './helpers/child-process.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { startOtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { freePort } from './helpers/ports.js';
import { startReportReceiver, type ReportReceiver } from './helpers/report-receiver.js';
import { lastUserText } from './helpers/scripts.js';
import { textSink } from './helpers/text-sink.js';
import { endCall, orderTool, promptsWithTools, toolResults } from './helpers/tool-calls.js';

const REPORT_SECRET = 'tracing-report-secret-0123456789';
/** What the caller says: a name and a card number, personal data that no span may carry by default. */
const CALLER_WORDS = 'Where is my order? Erika Mustermann here, card 4111 1111 1111 1111.';
/** FakeVoiceService's caller. */
const CALLER_NUMBER = '4915112345678';

/** Looks up order 4711 when asked about an order, and says what the shop answered. */
function orderScript(request: ChatRequestBody): ScriptedReply {
  const results = toolResults(request);
  if (results.length > 0) return { content: `Your order is ${results.join(', ')}.` };
  if (lastUserText(request).includes('order')) return { toolCalls: [{ name: 'order_status', arguments: '{"order_number":"4711"}' }] };
  return { content: 'Hello.' };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `close` once, whether the test or the cleanup asks first. */
function once(close: () => Promise<unknown>): () => Promise<unknown> {
  let closing: Promise<unknown> | undefined;
  return () => (closing ??= close());
}

interface TracedCall {
  readonly spans: readonly ReceivedSpan[];
  readonly shop: BusinessServer;
  readonly reports: ReportReceiver;
  readonly sessionId: string;
  readonly logLines: readonly Record<string, unknown>[];
}

/** One call asking for its order (a tool run), a report delivered, Hotline closed: every span has been sent. */
async function tracedCall(env: Record<string, string> = {}): Promise<TracedCall> {
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  const shop = await startBusinessServer((_req, res) => json(res, { order: { number: '4711', status: 'shipped' } }));
  cleanups.push(() => shop.close());
  const reports = await startReportReceiver(REPORT_SECRET);
  cleanups.push(() => reports.close());
  const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url, { extra: 'response: { path: order.status }', hold: false }) }, {}, (remove) => cleanups.push(remove));
  const sink = textSink();
  const hotline: TestHotline = await startTestHotline(
    orderScript,
    {
      PROMPTS_DIR: prompts,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      REPORT_WEBHOOK_URL: reports.url,
      REPORT_WEBHOOK_SECRET: REPORT_SECRET,
      ...env,
    },
    {},
    { logger: pino({ level: 'info' }, sink.stream) },
  );
  const close = once(() => hotline.close());
  cleanups.push(close);
  const service = await FakeVoiceService.connect(hotline.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 1 } });
  cleanups.push(() => service.close());
  service.start();
  await service.nextOfType('speak');
  // The greeting plays out first: words over it would stop it, and its span would say so.
  await service.whenQuiet();
  service.say(CALLER_WORDS);
  expect((await service.next((a) => a.type === 'speak' && a.text === 'Your order is shipped.')).type).toBe('speak');
  await service.whenQuiet();
  await endCall(hotline, service);
  await reports.request(0);
  // Closing sends what is still queued: from here on the receiver has every span of the call.
  await close();
  const logLines = sink
    .text()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { spans: receiver.spans, shop, reports, sessionId: service.sessionId, logLines };
}

/** A call on a model that always says "Hello there.", greeted: the tests of tracing turned off or unreachable. */
async function helloCall(env: Record<string, string>, logger?: Logger): Promise<{ service: FakeVoiceService; close: () => Promise<unknown> }> {
  const hotline = await startTestHotline(() => ({ content: 'Hello there.' }), env, {}, logger ? { logger } : {});
  const close = once(() => hotline.close());
  cleanups.push(close);
  const service = await FakeVoiceService.connect(hotline.hotline.wsUrl);
  cleanups.push(() => service.close());
  service.start();
  await service.nextOfType('speak');
  return { service, close };
}

function only(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0]!;
}

describe('a traced call', () => {
  test('arrives as one trace: call → turn → LLM requests and the tool run, speaks until played, the report delivery; the business system and the report receiver get its traceparent; the log names it', async () => {
    const { spans, shop, reports, sessionId, logLines } = await tracedCall();

    const call = only(spans, 'call');
    expect(call.parentSpanId).toBeUndefined();
    expect(call.kind).toBe(2);
    expect(call.resource['service.name']).toBe('hotline');
    expect(call.attributes).toMatchObject({
      'hotline.session_id': sessionId,
      'hotline.call.direction': 'inbound',
      'hotline.call_id': expect.any(String),
      'hotline.call.end_reason': 'hangup',
      'hotline.call.turns': 1,
    });
    // Every span is the call's: the report delivery after it ended too.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([call.traceId]));

    const turn = only(spans, 'turn');
    expect(turn.parentSpanId).toBe(call.spanId);
    expect(turn.attributes).toMatchObject({ 'hotline.turn.id': 1, 'hotline.turn.outcome': 'completed', 'hotline.turn.first_speak_ms': expect.any(Number) });

    // Two requests: the one that calls the tool, and the one that answers with its result.
    const requests = spans.filter((s) => s.name === 'chat test-model');
    expect(requests).toHaveLength(2);
    for (const [index, request] of requests.entries()) {
      expect(request.parentSpanId).toBe(turn.spanId);
      expect(request.kind).toBe(3);
      expect(request.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': '127.0.0.1',
        'gen_ai.system': '127.0.0.1',
        'gen_ai.request.model': 'test-model',
        'gen_ai.response.model': 'test-model',
        'gen_ai.usage.input_tokens': expect.any(Number),
        'gen_ai.usage.output_tokens': expect.any(Number),
        'gen_ai.response.time_to_first_chunk': expect.any(Number),
        'hotline.llm.round': index + 1,
      });
      expect(request.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(request.events.map((e) => e.name)).toContain('gen_ai.first_token');
    }

    const tool = only(spans, 'execute_tool order_status');
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'order_status',
      'gen_ai.tool.call.id': expect.any(String),
      'hotline.tool.outcome': 'ok',
      'hotline.tool.side_effect': false,
    });
    // The business system can carry the call's trace on: its request's parent is the tool run.
    expect(shop.requests).toHaveLength(1);
    expect(shop.requests[0]!.headers.traceparent).toBe(`00-${call.traceId}-${tool.spanId}-01`);

    // The greeting is the call's own; the answer is the turn's. Each speak ends once it has played.
    const speaks = spans.filter((s) => s.name === 'speak');
    expect(speaks.map((s) => s.parentSpanId)).toEqual(expect.arrayContaining([call.spanId, turn.spanId]));
    for (const speak of speaks) {
      expect(speak.attributes).toMatchObject({ 'hotline.speak.kind': 'speak', 'hotline.speak.chars': expect.any(Number), 'hotline.speak.playback': 'played' });
      expect(speak.events.map((e) => e.name)).toContain('playback.started');
    }

    const delivery = only(spans, 'report delivery');
    expect(delivery.parentSpanId).toBe(call.spanId);
    expect(delivery.attributes).toMatchObject({
      'hotline.delivery.status': 'delivered',
      'hotline.delivery.attempt': 1,
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
    });
    expect(reports.received[0]!.headers.traceparent).toBe(`00-${call.traceId}-${delivery.spanId}-01`);

    // Nothing the caller said, no number and no tool argument in any span by default.
    const carried = JSON.stringify(spans.map((s) => [s.attributes, s.events, s.status]));
    for (const personal of ['Mustermann', '4111', CALLER_NUMBER, '4711', 'shipped']) expect(carried).not.toContain(personal);

    // The call's log lines carry its trace.
    const started = logLines.find((line) => line.msg === 'call started');
    expect(started).toMatchObject({ sessionId, trace_id: call.traceId, span_id: call.spanId });
  });

  test("with OTEL_INCLUDE_CONTENT=true the spans carry the words, the numbers and the tool's arguments and result, redacted as the logs are", async () => {
    const { spans } = await tracedCall({ OTEL_INCLUDE_CONTENT: 'true', OTEL_SERVICE_NAME: 'hotline-test' });
    const call = only(spans, 'call');
    expect(call.resource['service.name']).toBe('hotline-test');
    expect(call.attributes['hotline.call.from']).toBe(CALLER_NUMBER);
    const callerText = String(only(spans, 'turn').attributes['hotline.turn.caller_text']);
    expect(callerText).toContain('Erika Mustermann');
    expect(callerText).toContain('[card number]');
    expect(callerText).not.toContain('4111');
    expect(only(spans, 'execute_tool order_status').attributes).toMatchObject({
      'gen_ai.tool.call.arguments': '{"order_number":"4711"}',
      'gen_ai.tool.call.result': 'shipped',
    });
    expect(spans.filter((s) => s.name === 'speak').map((s) => s.attributes['hotline.speak.text'])).toContain('Your order is shipped.');
  });
});

describe('a traced call in a language', () => {
  test("the call's span says the language the call is in, and an event says how it was chosen", async () => {
    const { spans } = await tracedCall({ LANGUAGES: 'true' });
    const call = only(spans, 'call');
    expect(call.attributes['hotline.call.language']).toBe('en');
    expect(call.events.find((e) => e.name === 'hotline.language')?.attributes).toEqual({ 'hotline.call.language': 'en', 'hotline.language.chosen_by': 'default' });
  });
});

describe('a traced call with the knowledge base', () => {
  test("the turn's span names the passages it was given, how long finding them took, and which the reply used", async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'hotline-knowledge-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    await writeFile(path.join(folder, 'orders.md'), '## Orders\nEvery order is shipped within two days; an order shipped arrives the day after.\n');
    const { spans } = await tracedCall({ KNOWLEDGE: 'true', KNOWLEDGE_DIR: folder });
    const { attributes } = only(spans, 'turn');
    expect(attributes['hotline.turn.knowledge.passages']).toEqual(['orders.md › Orders, line 1']);
    expect(attributes['hotline.turn.knowledge.ms']).toEqual(expect.any(Number));
    // "Your order is shipped." shares only two of its words: not taken as drawn from it.
    expect(attributes['hotline.turn.knowledge.used']).toEqual([]);
  });
});

describe('tracing off', () => {
  test('no endpoint: tracing is off; OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off whatever is set', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig(endpoint).tracing).toMatchObject({ url: 'http://collector:4318/v1/traces', serviceName: 'hotline', includeContent: false });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom' }).tracing?.url).toBe('http://collector:4318/custom');
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
    // A collector's API key is a secret: the logs never show it.
    expect(secretsOf(loadConfig({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=collector-key-0123456789,x-scope=prod' }))).toContain(
      'collector-key-0123456789',
    );
  });

  test('OTEL_SDK_DISABLED=true: a call sends the collector nothing', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const { service, close } = await helloCall({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' });
    service.say('Hi');
    await service.nextOfType('speak');
    service.end();
    await close();
    expect(receiver.requests).toBe(0);
  });

  test(
    'a Hotline process without OTEL variables loads nothing of OpenTelemetry; with an endpoint it loads the SDK and exports on stop',
    async () => {
      const recorder = pathToFileURL(path.resolve(import.meta.dirname, 'fixtures/otel/record-loads.mjs')).href;
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const loadsOf = async (name: string, vars: Record<string, string>): Promise<string> => {
        const file = path.join(isolatedCwd(), `${name}-loads.txt`);
        const hotline = spawnHotline({ NODE_OPTIONS: `--import=${recorder}`, HOTLINE_TEST_LOADS: file, ...vars });
        cleanups.push(async () => {
          hotline.child.kill('SIGKILL');
          await hotline.exited;
        });
        const [, wsUrl] = await hotline.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
        const service = await FakeVoiceService.connect(wsUrl!);
        service.start();
        await service.nextOfType('speak');
        service.say('What are your opening hours?');
        await service.nextOfType('speak');
        service.end();
        await service.closed;
        hotline.child.kill('SIGTERM');
        expect(await hotline.exited).toBe(0);
        return readFile(file, 'utf8').catch(() => '');
      };

      const untraced = await loadsOf('untraced', {});
      // prom-client requires @opentelemetry/api itself (exemplars); the SDK and Hotline's tracing are never loaded (its metrics are).
      // The product runs compiled in the child (test/setup/build.ts): its modules are .test-build/…/*.js.
      expect(untraced.split('\n').filter((url) => /@opentelemetry\/(?!api\/)|\/(src|\.test-build)\/telemetry\/(?!tracing-settings|start-tracing|metrics\.js)/.test(url))).toEqual([]);
      expect(receiver.requests).toBe(0);

      const traced = await loadsOf('traced', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      expect(traced).toContain('/@opentelemetry/sdk-trace-base/');
      expect(traced).toMatch(/\/(src|\.test-build)\/telemetry\/otel-tracing\.(ts|js)$/m);
      // Stopping sent the call's spans.
      expect(receiver.spans.map((s) => s.name)).toEqual(expect.arrayContaining(['call', 'turn', 'speak']));
    },
    CHILD_TEST_TIMEOUT_MS,
  );
});

describe('a collector that cannot be reached', () => {
  test('the call goes on as ever, nothing is logged per span nor with a stack, and a stop waits for it only briefly', async () => {
    // A port nobody listens on any more.
    const port = await freePort();
    const sink = textSink();
    const { service, close } = await helloCall({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }, pino({ level: 'info' }, sink.stream));
    for (const words of ['Hi', 'How are you?', 'Thanks']) {
      service.say(words);
      expect((await service.nextOfType('speak')).text).toBe('Hello there.');
    }
    service.end();
    const stopping = performance.now();
    await close();
    // Hotline's own close takes a moment; the collector adds at most TRACING_CLOSE_MS (3 s) to it.
    expect(performance.now() - stopping).toBeLessThan(6_000);
    const lines = sink.text().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    // Not a line per span or per batch, and never a stack: what could not be sent is said once, as it is dropped.
    const tracingLines = lines.filter((line) => line.component === 'tracing' || /spans|traces|collector/.test(String(line.msg)));
    expect(tracingLines.length).toBeLessThanOrEqual(2);
    expect(tracingLines.every((line) => line.err === undefined && !JSON.stringify(line).includes('    at '))).toBe(true);
  });
});

describe('exports that fail', () => {
  test('are logged once as they start failing and once as they succeed again, never per batch', async () => {
    let status = 500;
    const collector = await startBusinessServer((_req, res) => void res.writeHead(status).end('{}'));
    cleanups.push(() => collector.close());
    const sink = textSink();
    const exporter = new ReportingExporter(new OTLPTraceExporter({ url: `${collector.url}/v1/traces` }), pino({ level: 'info' }, sink.stream), collector.url);
    // One export per span, so that every span is a batch of its own.
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    cleanups.push(() => provider.shutdown());
    const tracer = provider.getTracer('test');
    const exported = async (count: number): Promise<void> => {
      const before = collector.requests.length;
      for (let i = 0; i < count; i++) tracer.startSpan('span').end();
      await collector.request(before + count - 1);
      // A failed export rejects the flush: the failure is what this test is after.
      await provider.forceFlush().catch(() => undefined);
    };
    await exported(3);
    status = 200;
    await exported(2);
    const messages = sink
      .text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(messages.map((line) => line.msg)).toEqual([
      'traces cannot be sent to the collector; calls go on untouched, and spans are dropped until it answers',
      'traces reach the collector again',
    ]);
    expect(messages[0]).toMatchObject({ level: 40, target: collector.url, reason: expect.stringContaining('Internal Server Error') });
    expect(messages[0]!.err).toBeUndefined();
  });
});

describe('an MCP tool', () => {
  test("carries the call's trace in its request's _meta, where OpenTelemetry's MCP conventions put it", async () => {
    const token = 'tracing-crm-token-0123456789';
    const crm = await startCrmServer({ token });
    cleanups.push(() => crm.stop());
    const hub = new McpHub(pino({ level: 'silent' }), {
      env: { CRM_TOKEN: token },
      defaults: { timeoutMs: 5_000, maxChars: 1_000 },
    });
    cleanups.push(() => hub.close());
    hub.update([{ name: 'crm', url: crm.url, headers: { Authorization: 'Bearer ${CRM_TOKEN}' } }]);
    await hub.whenUp('crm');
    const quote = hub.tools().find((tool) => tool.name === 'quote')!;
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const log = pino({ level: 'silent' });
    const signal = new AbortController().signal;
    expect(await quote.run('{"item":"pen"}', { variables: {}, signal, log, propagation: { traceparent } })).toEqual({ outcome: 'ok', content: 'pen: 12 EUR' });
    // Untraced, the request has no _meta of Hotline's.
    expect(await quote.run('{"item":"pen"}', { variables: {}, signal, log })).toMatchObject({ outcome: 'ok' });
    expect(crm.quoteMeta[0]).toMatchObject({ traceparent });
    expect(crm.quoteMeta[1]).toBeUndefined();
  });
});
