/**
 * Business tools in a voice turn, over the real transports: a scripted LLM
 * that calls tools, tool files in a prompts folder, and real local HTTP
 * servers as the business systems.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startCrmServer, type CrmServer } from './fixtures/mcp/crm-http-server.js';
import { json, startBusinessServer, type BusinessServer } from './helpers/business-server.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';
import { endCall, orderTool, promptsWithTools as promptsWithToolsIn, toolResults, transcriptLines } from './helpers/tool-calls.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hotline(...args: Parameters<typeof startTestHotline>): Promise<TestHotline> {
  const env = await startTestHotline(...args);
  cleanups.push(() => env.close());
  return env;
}

async function business(handler: Parameters<typeof startBusinessServer>[0]): Promise<BusinessServer> {
  const server = await startBusinessServer(handler);
  cleanups.push(() => server.close());
  return server;
}

async function connect(env: TestHotline): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 1 } });
  cleanups.push(() => service.close());
  return service;
}

/** The shipped prompts with these tool files (and other files) instead of the shipped tools; removed after the test. */
const promptsWithTools = (tools: Record<string, string>, files: Record<string, string> = {}): Promise<string> =>
  promptsWithToolsIn(tools, files, (remove) => cleanups.push(remove));

/** Calls `name` with `args` when the caller says `when`; once its results are in, says what `answer` makes of them. */
function toolScript(turns: Record<string, { call: { name: string; arguments: unknown }[]; answer: (results: string[]) => ScriptedReply }>) {
  return (request: ChatRequestBody): ScriptedReply => {
    const results = toolResults(request);
    const turn = turns[lastUserText(request)];
    if (!turn) return { content: 'I did not understand that.' };
    if (results.length > 0 || turn.call.length === 0) return turn.answer(results);
    return { toolCalls: turn.call.map((c) => ({ name: c.name, arguments: JSON.stringify(c.arguments) })) };
  };
}

const BOOKING_TOOL = (url: string) => `
description: Books an appointment.
parameters:
  type: object
  properties:
    time: { type: string }
  required: [time]
request:
  method: POST
  url: "${url}/bookings"
  body: { time: "{{time}}", phone: "{{caller_number}}" }
side_effect: true
hold: ["I'm booking that for you now."]
`;

// Slow business systems are the point of several tests: seconds, not the default 5 s limit's worth of slack.
vi.setConfig({ testTimeout: 20_000 });

describe('a tool in a voice turn (WebSocket)', () => {
  test('an order lookup is answered in the same turn; the transcript and the metrics have the run', async () => {
    const shop = await business((req, res) => json(res, { order: { number: '4711', status: 'shipped' } }));
    const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url, { extra: 'response: { path: order.status }' }) });
    const env = await hotline(
      toolScript({
        'Where is order 4711?': {
          call: [{ name: 'order_status', arguments: { order_number: '4711' } }],
          answer: ([status]) => ({ content: `Your order 4711 is ${status}.` }),
        },
      }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Where is order 4711?');
    expect((await service.nextOfType('speak')).text).toBe('Your order 4711 is shipped.');
    expect(shop.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /orders/4711']);
    // The tool is offered, and its result went back to the model in the same turn.
    const [first, second] = [await env.llm.nextRequest(0), await env.llm.nextRequest(1)];
    expect(first.body.tools?.map((t) => t.function.name)).toEqual(['speak', 'transfer', 'hangup', 'order_status']);
    expect(toolResults(second.body)).toEqual(['shipped']);
    await service.whenQuiet();
    await endCall(env, service);
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.find((l) => l.role === 'tool')).toMatchObject({
      name: 'order_status',
      arguments: '{"order_number":"4711"}',
      text: 'shipped',
      outcome: 'ok',
      duration_ms: expect.any(Number),
    });
    const metrics = await (await fetch(`${env.hotline.url}/metrics`)).text();
    expect(metrics).toMatch(/hotline_tool_seconds_count\{tool="order_status",outcome="ok"\} 1/);
  });

  test('a slow tool (3 s): its hold line is heard within 1 s of the call, then the answer', async () => {
    const shop = await business(async (req, res) => {
      await sleep(3000);
      json(res, { status: 'in the warehouse' });
    });
    const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url, { extra: 'response: { path: status }' }) });
    const env = await hotline(
      toolScript({
        'Where is order 4711?': {
          call: [{ name: 'order_status', arguments: { order_number: '4711' } }],
          answer: ([status]) => ({ content: `It is ${status}.` }),
        },
      }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Where is order 4711?');
    const hold = await service.nextOfType('speak');
    const called = await shop.request(0);
    expect(hold.text).toBe("One moment, I'm looking up your order.");
    expect(hold.receivedAt - called.at).toBeLessThan(1000);
    const answer = await service.nextOfType('speak');
    expect(answer.text).toBe('It is in the warehouse.');
    expect(answer.receivedAt - called.at).toBeGreaterThanOrEqual(2900);
    // The hold line is what the caller heard, not what the model said: its next request does not show it as its own words.
    const second = await env.llm.nextRequest(1);
    expect(JSON.stringify(second.body.messages)).not.toContain('looking up your order');
    // The record keeps what the caller heard while the tool ran (the dashboard shows it beside the run).
    await service.whenQuiet();
    await endCall(env, service);
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.find((l) => l.role === 'tool')).toMatchObject({ name: 'order_status', hold_lines: ["One moment, I'm looking up your order."] });
  });

  test("system.md's hold clip plays after the hold line; a barge-in aborts a lookup in flight", async () => {
    let aborted: () => void = () => undefined;
    const lookupAborted = new Promise<void>((resolve) => (aborted = resolve));
    const shop = await business((req, res) => {
      res.on('close', () => aborted());
    });
    const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url) });
    const system = await readFile(path.join(prompts, 'system.md'), 'utf8');
    await writeFile(path.join(prompts, 'system.md'), system.replace(/^---\n/, '---\naudio: { hold: audio/transfer-chime.wav }\n'));
    const env = await hotline(
      toolScript({
        'Where is order 4711?': { call: [{ name: 'order_status', arguments: { order_number: '4711' } }], answer: () => ({ content: 'Too late.' }) },
        'Never mind.': { call: [], answer: () => ({ content: 'Alright.' }) },
      }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Where is order 4711?');
    expect((await service.nextOfType('speak')).text).toBe("One moment, I'm looking up your order.");
    expect(await service.nextOfType('audio')).toMatchObject({ barge_in: { strategy: 'none' } });
    service.say('Never mind.', { bargedIn: true });
    await lookupAborted;
    await service.next((a) => a.text === 'Alright.');
    expect(service.actions.some((a) => a.text === 'Too late.')).toBe(false);
    expect(shop.requests).toHaveLength(1);
  });

  test('a booking is made once although the caller barged in and the model asked again', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const calendar = await business(async (req, res) => {
      await released;
      json(res, { booked: true, reference: 'K471' });
    });
    const prompts = await promptsWithTools({ 'book.yaml': BOOKING_TOOL(calendar.url) });
    const booking = { call: [{ name: 'book', arguments: { time: '10:00' } }], answer: ([r]: string[]) => ({ content: `Done: ${r}` }) };
    const env = await hotline(toolScript({ 'Book me at ten.': booking, 'Sorry, yes, ten please.': booking }), { PROMPTS_DIR: prompts });
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Book me at ten.');
    await calendar.request(0);
    // The caller cuts in while the booking runs; the model asks for the same booking again.
    service.say('Sorry, yes, ten please.', { bargedIn: true });
    // Its second request asks for the same booking; the first is still running.
    await (await env.llm.nextRequest(1)).ended;
    release();
    const done = await service.next((a) => a.type === 'speak' && (a.text ?? '').startsWith('Done'));
    expect(done.text).toContain('K471');
    expect(calendar.requests).toHaveLength(1);
    expect(JSON.parse(calendar.requests[0]!.body)).toEqual({ time: '10:00', phone: '4915112345678' });
    await service.whenQuiet();
    await endCall(env, service);
    const runs = (await transcriptLines(env, service.sessionId)).filter((l) => l.role === 'tool');
    expect(runs.map((r) => [r.name, r.outcome, r.reused ?? false])).toEqual(
      expect.arrayContaining([
        ['book', 'ok', false],
        ['book', 'ok', true],
      ]),
    );
  });

  test('a tool that times out: the model is told, and tells the caller', async () => {
    const shop = await business(() => undefined); // never answers
    const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url, { extra: 'timeout_ms: 300' }) });
    const env = await hotline(
      toolScript({
        'Where is order 4711?': {
          call: [{ name: 'order_status', arguments: { order_number: '4711' } }],
          answer: ([result]) => ({ content: /did not answer|time/i.test(result ?? '') ? 'Sorry, the order system is not answering.' : `Odd: ${result}` }),
        },
      }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Where is order 4711?');
    expect((await service.next((a) => a.type === 'speak' && !(a.text ?? '').includes('moment'))).text).toBe(
      'Sorry, the order system is not answering.',
    );
    const metrics = await (await fetch(`${env.hotline.url}/metrics`)).text();
    expect(metrics).toMatch(/hotline_tool_failures_total\{tool="order_status",outcome="timeout"\} 1/);
  });

  test('a 1 MB answer is capped before the model sees it', async () => {
    const huge = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item number ${i} with some padding text` })) };
    const shop = await business((req, res) => json(res, huge));
    expect(JSON.stringify(huge).length).toBeGreaterThan(1_000_000);
    const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url, { extra: 'response: { max_chars: 500 }' }) });
    const env = await hotline(
      toolScript({
        'Where is order 4711?': {
          call: [{ name: 'order_status', arguments: { order_number: '4711' } }],
          answer: ([result]) => ({ content: `I got ${result?.length} characters.` }),
        },
      }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Where is order 4711?');
    // A hold line may come first on a busy machine (the answer is read on a thread of its own).
    const answer = await service.next((action) => action.type === 'speak' && /I got/.test(action.text ?? ''));
    const length = Number(/I got (\d+)/.exec(answer.text ?? '')?.[1]);
    expect(length).toBeGreaterThan(0);
    expect(length).toBeLessThanOrEqual(500);
  });

  test('two tools the model asks for at once run in parallel', async () => {
    let arrived = 0;
    let bothArrived: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (bothArrived = resolve));
    // Each answers only once both requests are in: run one after the other, they would never answer.
    const systems = await business(async (req, res) => {
      if (++arrived === 2) bothArrived();
      await both;
      json(res, req.url.startsWith('/orders') ? { status: 'shipped' } : { slots: ['10:00'] });
    });
    const prompts = await promptsWithTools({
      'order_status.yaml': orderTool(systems.url, { extra: 'response: { path: status }\ntimeout_ms: 3000' }),
      'free_slots.yaml': `description: Free appointment slots.\nrequest: { url: "${systems.url}/slots" }\nresponse: { path: slots }\ntimeout_ms: 3000\n`,
    });
    const env = await hotline(
      toolScript({
        'Order and a slot?': {
          call: [
            { name: 'order_status', arguments: { order_number: '1' } },
            { name: 'free_slots', arguments: {} },
          ],
          answer: (results) => ({ content: `Results: ${results.join(' and ')}.` }),
        },
      }),
      { PROMPTS_DIR: prompts },
    );
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('Order and a slot?');
    expect((await service.next((a) => a.type === 'speak' && (a.text ?? '').startsWith('Results'))).text).toBe(
      'Results: shipped and ["10:00"].',
    );
  });
});

describe('the webhook hold pattern', () => {
  test('a slow tool: the request is answered with the hold line, the answer comes with the next assistant_speech_ended', { timeout: 30_000 }, async () => {
    const shop = await business(async (req, res) => {
      // Answers after the second request's hold line (said when that request has waited 4 s, near the service's limit).
      await sleep(6000);
      json(res, { status: 'shipped' });
    });
    const prompts = await promptsWithTools({ 'order_status.yaml': orderTool(shop.url, { extra: 'response: { path: status }' }) });
    const env = await hotline(
      toolScript({
        'Where is order 4711?': {
          call: [{ name: 'order_status', arguments: { order_number: '4711' } }],
          answer: ([status]) => ({ content: `It is ${status}.` }),
        },
      }),
      { PROMPTS_DIR: prompts, TOOL_TIMEOUT_MS: '10000' },
    );
    const session = { id: 'webhook-tool-1', account_id: 'a', phone_number: '4930', direction: 'inbound', from_phone_number: '4915', to_phone_number: '4930' };
    const start = await post(env, { type: 'session_start', session });
    expect(start.body).toMatchObject({ type: 'speak' });
    await post(env, { type: 'assistant_speech_ended', session });
    const asked = await post(env, { type: 'user_speak', text: 'Where is order 4711?', session });
    expect(asked.body).toMatchObject({ type: 'speak', text: "One moment, I'm looking up your order." });
    expect(asked.ms).toBeLessThan(1000);
    // The tool runs on: the next request, about to time out, gets the next hold line — not the same one, and not at once.
    const again = await post(env, { type: 'assistant_speech_ended', session });
    expect(again.body).toMatchObject({ type: 'speak', text: "Thanks for waiting, I'm still on it." });
    expect(again.ms).toBeGreaterThan(3000);
    const ended = await post(env, { type: 'assistant_speech_ended', session });
    expect(ended.body).toMatchObject({ type: 'speak', text: 'It is shipped.' });
    expect(shop.requests).toHaveLength(1);
  });
});

async function post(env: TestHotline, event: unknown): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${env.hotline.url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  const body = await res.text();
  return { status: res.status, body: body ? (JSON.parse(body) as unknown) : undefined, ms: performance.now() - started };
}

describe("the caller's record at the start", () => {
  const CONTEXT = (url: string) => `
request: { url: "${url}/customers?phone={{caller_number}}" }
timeout_ms: 400
path: customer
variables: { customer_name: name, last_order: orders.0.number }
`;
  const GREETING = 'Hello {{customer_name|there}}, how can I help?\n';
  const SYSTEM_WITH_CONTEXT = 'You help callers. The caller is {{customer_name|unknown}}; their last order was {{last_order|none}}.\n';

  async function crm(delayMs = 0): Promise<BusinessServer> {
    return business(async (req, res) => {
      if (delayMs > 0) await sleep(delayMs);
      const phone = new URL(req.url, 'http://x').searchParams.get('phone');
      if (phone === '4915112345678') json(res, { customer: { name: 'Anna Schmidt', orders: [{ number: '4711' }] } });
      else json(res, { error: 'unknown' }, 404);
    });
  }

  test('a known number: the greeting and the system prompt are filled from the CRM', async () => {
    const server = await crm();
    const prompts = await promptsWithTools({ 'context.yaml': CONTEXT(server.url) }, { 'greeting.md': GREETING, 'system.md': SYSTEM_WITH_CONTEXT });
    const env = await hotline(() => ({ content: 'Sure.' }), { PROMPTS_DIR: prompts });
    const service = await connect(env);
    service.start();
    expect((await service.nextOfType('speak')).text).toBe('Hello Anna Schmidt, how can I help?');
    service.say('Hi');
    const request = await env.llm.nextRequest(0);
    expect(request.body.messages[0]).toMatchObject({ content: expect.stringContaining('The caller is Anna Schmidt; their last order was 4711.') });
  });

  test('an unknown number gets the plain greeting', async () => {
    const server = await crm();
    const prompts = await promptsWithTools({ 'context.yaml': CONTEXT(server.url) }, { 'greeting.md': GREETING });
    const env = await hotline(() => ({ content: 'Sure.' }), { PROMPTS_DIR: prompts });
    const service = await connect(env);
    service.start({ from_phone_number: '4930555' });
    expect((await service.nextOfType('speak')).text).toBe('Hello there, how can I help?');
  });

  test('a slow CRM: the plain greeting within the time limit (WebSocket and webhook)', async () => {
    const server = await crm(3000);
    const prompts = await promptsWithTools({ 'context.yaml': CONTEXT(server.url) }, { 'greeting.md': GREETING });
    const env = await hotline(() => ({ content: 'Sure.' }), { PROMPTS_DIR: prompts });
    const service = await connect(env);
    const started = performance.now();
    service.start();
    const greeting = await service.nextOfType('speak');
    expect(greeting.text).toBe('Hello there, how can I help?');
    expect(greeting.receivedAt - started).toBeLessThan(400 + 300);
    expect(greeting.receivedAt - started).toBeGreaterThanOrEqual(390);

    const session = { id: 'webhook-context-1', account_id: 'a', phone_number: '4930', direction: 'inbound', from_phone_number: '4915112345678', to_phone_number: '4930' };
    const answer = await post(env, { type: 'session_start', session });
    expect(answer.body).toMatchObject({ type: 'speak', text: 'Hello there, how can I help?' });
    expect(answer.ms).toBeLessThan(400 + 300);
  });
});

describe('MCP servers in a call', () => {
  const SHOP = path.resolve('test/fixtures/mcp/shop-server.mjs');

  async function crm(): Promise<CrmServer> {
    const server = await startCrmServer({ token: 'crm-secret' });
    cleanups.push(() => server.stop());
    return server;
  }

  const MCP = (crmUrl: string) => `
servers:
  - name: shop
    command: node
    args: ["${SHOP}"]
    hold: ["One moment, I'm asking the shop."]
  - name: crm
    url: "${crmUrl}"
    headers: { Authorization: "Bearer \${CRM_TOKEN}" }
`;

  /** Calls the tool the caller names ("tool quote {...}"), then says what came back. */
  const relay = (request: ChatRequestBody): ScriptedReply => {
    const results = toolResults(request);
    if (results.length > 0) return { content: `Result: ${results.join(' | ')}.` };
    const [, name, args] = /^tool (\w+) (.*)$/.exec(lastUserText(request)) ?? [];
    return name ? { toolCalls: [{ name, arguments: args ?? '{}' }] } : { content: 'Hello.' };
  };

  test('tools of a stdio and a Streamable HTTP server are offered and called', async () => {
    const server = await crm();
    const prompts = await promptsWithTools({ 'mcp.yaml': MCP(server.url) });
    const env = await hotline(relay, { PROMPTS_DIR: prompts, CRM_TOKEN: 'crm-secret' });
    await Promise.all([env.hotline.tools.mcp.whenUp('shop'), env.hotline.tools.mcp.whenUp('crm')]);
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('tool lookup_order {"order_id":"7"}');
    expect((await service.next((a) => (a.text ?? '').startsWith('Result'))).text).toBe('Result: Order 7: shipped.');
    service.say('tool quote {"item":"chair"}');
    expect((await service.next((a) => (a.text ?? '').startsWith('Result') && a.text !== 'Result: Order 7: shipped.')).text).toBe(
      'Result: chair: 12 EUR.',
    );
    const offered = (await env.llm.nextRequest(0)).body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(['lookup_order', 'book_slot', 'quote', 'reserve']));
    expect(server.runs.get('quote')).toBe(1);
  });

  test('killing a server mid-call costs its tools, not the call', async () => {
    const server = await crm();
    const prompts = await promptsWithTools({ 'mcp.yaml': MCP(server.url) });
    const env = await hotline(relay, { PROMPTS_DIR: prompts, CRM_TOKEN: 'crm-secret' });
    const { mcp } = env.hotline.tools;
    await Promise.all([mcp.whenUp('shop'), mcp.whenUp('crm')]);
    const service = await connect(env);
    service.start();
    await service.nextOfType('speak');
    service.say('tool slow {"ms":20000}');
    // The shop's hold line says the tool is running; then its process dies.
    expect((await service.nextOfType('speak')).text).toBe("One moment, I'm asking the shop.");
    process.kill(mcp.status().find((s) => s.name === 'shop')!.pid!, 'SIGKILL');
    const told = await service.next((a) => (a.text ?? '').startsWith('Result'));
    expect(told.text).toMatch(/^Result: error: .*shop.*not reachable/);
    // The model's next request no longer offers the dead server's tools; the other server's are there.
    const after = (await env.llm.nextRequest(1)).body.tools?.map((t) => t.function.name) ?? [];
    expect(after).not.toContain('lookup_order');
    expect(after).toContain('quote');
    // The call goes on, with the other server.
    service.say('tool quote {"item":"lamp"}');
    expect((await service.next((a) => a.text === 'Result: lamp: 12 EUR.')).text).toBe('Result: lamp: 12 EUR.');
    // And the dead one is started again.
    await mcp.whenUp('shop');
  });
});
