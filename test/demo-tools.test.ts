/**
 * The business-tool examples work out of the box: the shipped tool files,
 * the fake shop the demo mode starts for them, and the demo model that calls
 * them — over a real WebSocket and through `npm run simulate`.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runSimulate } from '../src/cli/simulate.js';
import { loadConfig } from '../src/config.js';
import { startDemoShop } from '../src/demo/shop.js';
import { demoScript } from '../src/demo/demo-script.js';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { startHotline, type RunningHotline } from '../src/server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { checkToolsFolder } from '../src/tools/tool-store.js';

const HOLD_LINE = "One moment, I'm looking up your order.";

describe('the demo shop', () => {
  test('answers the made-up orders as JSON, an unknown number with 404, and books callbacks', async () => {
    const shop = await startDemoShop({ delayMs: 0 });
    try {
      const found = await fetch(`${shop.url}/orders/4711`);
      expect(found.status).toBe(200);
      expect(await found.json()).toMatchObject({ order: { number: '4711', status: 'shipped', expected_delivery: 'tomorrow' } });
      const unknown = await fetch(`${shop.url}/orders/999`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({ error: 'no order with that number' });

      const booked = await fetch(`${shop.url}/callbacks`, { method: 'POST', body: JSON.stringify({ topic: 'a late parcel', phone: '4915112345678' }) });
      expect(booked.status).toBe(201);
      expect(await booked.json()).toMatchObject({ callback: { status: 'booked', when: 'within the next hour' } });
      expect((await fetch(`${shop.url}/callbacks`, { method: 'POST', body: '{}' })).status).toBe(400);
      expect((await fetch(`${shop.url}/orders/4711`, { method: 'DELETE' })).status).toBe(405);
      expect((await fetch(`${shop.url}/elsewhere`)).status).toBe(404);
    } finally {
      await shop.close();
    }
  });

  test('close() does not wait for answers still in their delay', async () => {
    const shop = await startDemoShop({ delayMs: 60_000 });
    const pending = fetch(`${shop.url}/orders/4711`).then(
      () => 'answered',
      () => 'cut off',
    );
    // Most likely the lookup is waiting in the shop by the time this one is answered at once.
    await fetch(`${shop.url}/elsewhere`);
    const started = performance.now();
    await shop.close();
    expect(await pending).toBe('cut off');
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe('the demo model and the order tool', () => {
  const offered = [{ type: 'function' as const, function: { name: 'order_status', parameters: { type: 'object' } } }];
  const asking = (text: string, tools: ChatRequestBody['tools'] = offered): ChatRequestBody => ({ model: 'hotline-demo', messages: [{ role: 'user', content: text }], tools });
  const answered = (content: string): ChatRequestBody => ({
    model: 'hotline-demo',
    messages: [
      { role: 'user', content: 'Where is my order 4711?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'order_status', arguments: '{"order_number":"4711"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content },
    ],
  });

  test('calls order_status with the digits the caller said, only when it is offered', () => {
    expect(demoScript(asking('Where is my order 4711?'))).toEqual({
      toolCalls: [{ name: 'order_status', arguments: '{"order_number":"4711"}' }],
    });
    expect(demoScript(asking('My parcel number is 47 11')).toolCalls?.[0]?.arguments).toBe('{"order_number":"4711"}');
    expect(demoScript(asking('Where is my order 4711?', [])).content).toMatch(/can't look up order 4711/);
  });

  test('without a number it asks for one, and takes a bare number (or keys) as the answer', () => {
    const asked = demoScript(asking('Where is my package?'));
    expect(asked.content).toMatch(/What's your order number\?/);
    const reply = demoScript({
      model: 'hotline-demo',
      messages: [
        { role: 'user', content: 'Where is my package?' },
        { role: 'assistant', content: asked.content ?? '' },
        { role: 'user', content: '[keypad] 1234' },
      ],
      tools: offered,
    });
    expect(reply.toolCalls).toEqual([{ name: 'order_status', arguments: '{"order_number":"1234"}' }]);
  });

  test('answers from the result: the status, or that the order was not found', () => {
    const shipped = JSON.stringify({ number: '4711', status: 'shipped', carrier: 'Parcel Express', expected_delivery: 'tomorrow' });
    expect(demoScript(answered(shipped))).toEqual({ content: 'Your order 4711 has shipped with Parcel Express and should arrive tomorrow.' });
    expect(demoScript(answered('error: the order could not be looked up (the answer: {"error":"no order with that number"})')).content).toMatch(
      /^I'm sorry, I couldn't find an order with the number 4711\./,
    );
    expect(demoScript(answered('error: the order system did not answer in time')).content).toMatch(/can't reach our order system/);
  });

  test('"call me back" books a callback (not a transfer), and the booking is confirmed', () => {
    const tools = [{ type: 'function' as const, function: { name: 'book_callback' } }];
    const reply = demoScript(asking('Can someone call me back about my invoice?', tools));
    expect(reply.toolCalls).toEqual([{ name: 'book_callback', arguments: JSON.stringify({ topic: 'can someone call me back about my invoice?' }) }]);
    const confirmed = demoScript({
      model: 'hotline-demo',
      messages: [
        { role: 'user', content: 'Can someone call me back?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'book_callback', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"id":"CB-1001","status":"booked","when":"within the next hour"}' },
      ],
    });
    expect(confirmed.content).toBe('Done: a colleague will call you back within the next hour. Your reference is CB-1001.');
  });
});

describe('Hotline in demo mode: the shipped order tool answered by the demo shop', () => {
  let hotline: RunningHotline;
  let transcriptsDir: string;

  beforeAll(async () => {
    transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-demo-tools-'));
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', TRANSCRIPTS_DIR: transcriptsDir, DEMO_TTFT_MS: '0', DEMO_TOKEN_DELAY_MS: '0' });
    expect(config.llm.mode).toBe('demo');
    // No SHOP_API_URL: Hotline starts its own fake shop and points the tool files at it.
    hotline = await startHotline(config, pino({ level: 'silent' }), { watchPrompts: false, env: {} });
  });

  afterAll(async () => {
    await hotline?.close();
    await rm(transcriptsDir, { recursive: true, force: true });
  });

  test('both shipped example tools are offered', () => {
    expect(hotline.tools.files.tools().map((tool) => tool.name)).toEqual(['book_callback', 'order_status']);
  });

  test('an order question: the hold line while the shop looks it up, then the status; an unknown number is not found; no number is asked for', async () => {
    const service = await FakeVoiceService.connect(hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.2 } });
    try {
      service.start();
      expect((await service.nextOfType('speak')).text).toMatch(/thanks for calling/i);

      service.say('Where is my order 4711?');
      expect((await service.nextOfType('speak')).text).toBe(HOLD_LINE);
      expect((await service.nextOfType('speak')).text).toBe('Your order 4711 has shipped with Parcel Express and should arrive tomorrow.');

      service.say('And what about order 999?');
      expect((await service.nextOfType('speak')).text).toBe(HOLD_LINE);
      expect((await service.nextOfType('speak')).text).toBe("I'm sorry, I couldn't find an order with the number 999.");
      expect((await service.nextOfType('speak')).text).toBe('Could you check the number and tell me again?');

      // Without a number it asks for one; typed on the keypad, that is the number it looks up.
      service.say('Where is my package?');
      expect((await service.nextOfType('speak')).text).toBe('Sure, I can check that for you.');
      expect((await service.nextOfType('speak')).text).toBe("What's your order number?");
      await service.next((action) => action.type === 'speak' && /keypad/.test(String(action.text)));
      await service.whenQuiet();
      service.dtmf('1234#');
      expect((await service.nextOfType('speak')).text).toBe(HOLD_LINE);
      expect((await service.nextOfType('speak')).text).toBe('Your order 1234 is being packed right now and should arrive in two to three days.');
    } finally {
      await service.close();
    }
  });

  test('npm run simulate: typing the question shows the hold line, then the answer', async () => {
    const lines: string[] = [];
    const input = new PassThrough();
    input.write('where is my order 4711\n');
    const code = await runSimulate(['--url', hotline.wsUrl, '--speed', '50'], {}, {
      input,
      output: (line) => {
        lines.push(line);
        // Like a person at the keyboard: the next line once the answer is there. Piped all at once, a
        // line could follow the hold line at this speed, before the answer: the simulator cannot tell them apart.
        if (/speak +"Your order 4711/.test(line)) input.end('bye\n');
      },
    });
    expect(code).toBe(0);
    const at = (pattern: RegExp): number => {
      const index = lines.findIndex((line) => pattern.test(line));
      expect(index, `no line matches ${pattern}:\n${lines.join('\n')}`).toBeGreaterThanOrEqual(0);
      return index;
    };
    const order = [
      at(/^you: where is my order 4711$/),
      at(/speak +"One moment, I'm looking up your order\."/),
      at(/speak +"Your order 4711 has shipped with Parcel Express and should arrive tomorrow\."/),
      at(/^you: bye\b/),
    ];
    expect(order).toEqual(order.toSorted((a, b) => a - b));
  });
});

test('the shipped tool files load, and so do the examples once renamed to .yaml', async () => {
  const shipped = await checkToolsFolder(path.resolve('prompts'), { SHOP_API_URL: 'https://shop.example.com/api' });
  expect(shipped.files.map((f) => [f.file, f.problems])).toEqual([
    ['tools/book_callback.yaml', []],
    ['tools/order_status.yaml', []],
  ]);

  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-tool-examples-'));
  try {
    await mkdir(path.join(dir, 'tools'));
    for (const name of ['mcp', 'context']) await copyFile(path.resolve('prompts/tools', `${name}.yaml.example`), path.join(dir, 'tools', `${name}.yaml`));
    const examples = await checkToolsFolder(dir, { CRM_TOKEN: 'crm-token', CALENDAR_TOKEN: 'calendar-token' });
    expect(examples.ok, JSON.stringify(examples.files, null, 2)).toBe(true);
    expect(examples.files.map((f) => f.summary)).toEqual([
      'caller context, GET, 800 ms, needs ${CRM_TOKEN}',
      '2 MCP servers (calendar: stdio, crm: http), needs ${CALENDAR_TOKEN} ${CRM_TOKEN}',
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
