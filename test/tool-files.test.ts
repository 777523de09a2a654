/**
 * HTTP tools from tool files: what a tool sends, what the model reads back,
 * and how a broken file is reported. The business systems are real local
 * HTTP servers; fetch is the real one.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import type { BusinessTool, ToolRunContext } from '../src/call/ports/business-tools.js';
import { createHttpTool } from '../src/tools/http-tool.js';
import type { Env } from '../src/tools/request-template.js';
import { CUT_MARK } from '../src/tools/result-text.js';
import { toolFileSchema } from '../src/tools/tool-file.js';
import { toolScrubber } from '../src/tools/tool-scrubber.js';
import { describeYamlProblem, parseYamlFile } from '../src/yaml-file.js';
import { json, startBusinessServer, type BusinessHandler, type BusinessServer } from './helpers/business-server.js';

const logger = pino({ level: 'silent' });
const DEFAULTS = { timeoutMs: 5000, maxChars: 2000 };
const CALLER = '+4915112345678';

const servers: BusinessServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function business(handler: BusinessHandler): Promise<BusinessServer> {
  const server = await startBusinessServer(handler);
  servers.push(server);
  return server;
}

/** The problems of a tool file, as prompts:check lists them under its name. */
function problemsOf(yaml: string, env: Env = {}): string[] {
  const parsed = parseYamlFile(yaml, toolFileSchema(env));
  if ('data' in parsed) throw new Error('expected the tool file to be refused');
  return parsed.problems.map(describeYamlProblem);
}

function toolFrom(yaml: string, env: Env = {}): BusinessTool {
  const parsed = parseYamlFile(yaml, toolFileSchema(env));
  if (!('data' in parsed)) throw new Error(parsed.problems.map(describeYamlProblem).join('\n'));
  return createHttpTool(parsed.data.name ?? 'test_tool', parsed.data, DEFAULTS, toolScrubber([]));
}

function context(overrides: Partial<ToolRunContext> = {}): ToolRunContext {
  return { variables: { caller_number: CALLER }, signal: new AbortController().signal, log: logger, ...overrides };
}

const ORDER_PARAMETERS = `
parameters:
  type: object
  properties:
    order_number: { type: string, description: The order number, pattern: "^[0-9]{4,10}$" }
  required: [order_number]`;

describe('the request', () => {
  test('URL, query and body are filled from the arguments and the call variables, each encoded for its place', async () => {
    const shop = await business((req, res) => json(res, { ok: true }));
    const tool = toolFrom(`
name: order_note
description: Adds a note to an order.
parameters:
  type: object
  properties:
    order_number: { type: string }
    note: { type: string }
    count: { type: integer }
    gift: { type: boolean }
    meta: { type: object }
request:
  method: POST
  url: "${shop.url}/orders/{{order_number}}/notes"
  query: { phone: "{{caller_number}}", q: "{{note}}", lang: "{{lang|en}}" }
  body:
    order: "{{order_number}}"
    count: "{{count}}"
    gift: "{{gift}}"
    meta: "{{meta}}"
    text: "Order {{order_number}}: {{note}} (from {{caller_number}})"
    fixed: 3
    list: ["{{count}}", "x", null]
`);
    const args = { order_number: '12 34/5?x#y', note: 'a&b=c ü', count: 3, gift: true, meta: { wrap: 'red' } };
    const result = await tool.run(JSON.stringify(args), context());
    expect(result).toEqual({ content: '{"ok":true}', outcome: 'ok' });
    const [sent] = shop.requests;
    const url = new URL(sent!.url, shop.url);
    expect(url.pathname).toBe('/orders/12%2034%2F5%3Fx%23y/notes');
    expect(decodeURIComponent(url.pathname.split('/')[2]!)).toBe('12 34/5?x#y');
    expect(Object.fromEntries(url.searchParams)).toEqual({ phone: CALLER, q: 'a&b=c ü', lang: 'en' });
    expect(sent!.method).toBe('POST');
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent!.body)).toEqual({
      order: '12 34/5?x#y',
      count: 3,
      gift: true,
      meta: { wrap: 'red' },
      text: `Order 12 34/5?x#y: a&b=c ü (from ${CALLER})`,
      fixed: 3,
      list: [3, 'x', null],
    });
  });

  test.each(['.', '..'])('a URL value of "%s" cannot walk the path: refused, nothing sent', async (value) => {
    const shop = await business((req, res) => json(res, {}));
    const tool = toolFrom(`description: d\nparameters: { type: object, properties: { id: { type: string } } }\nrequest: { url: "${shop.url}/orders/{{id}}/status" }\n`);
    const result = await tool.run(JSON.stringify({ id: value }), context());
    expect(result.outcome).toBe('invalid');
    expect(result.content).toBe(`error: invalid arguments (id cannot be "${value}"); nothing was done`);
    expect(shop.requests).toHaveLength(0);
  });

  test('a secret from the environment reaches the server; a model argument that looks like one stays text', async () => {
    const shop = await business((req, res) => json(res, { status: 'shipped' }));
    const env = { SHOP_API_URL: shop.url, SHOP_API_TOKEN: 's3cr3t-token' };
    const tool = toolFrom(
      `description: d
parameters: { type: object, properties: { order_number: { type: string } } }
request:
  method: POST
  url: "\${SHOP_API_URL}/orders/{{order_number}}"
  headers: { Authorization: "Bearer \${SHOP_API_TOKEN}", X-Order: "{{order_number}}" }
  query: { q: "{{order_number}}" }
  body: { order: "{{order_number}}", literal: "$\${NOT_EXPANDED}" }
`,
      env,
    );
    const result = await tool.run(JSON.stringify({ order_number: '${SHOP_API_TOKEN}' }), context());
    expect(result.outcome).toBe('ok');
    const [sent] = shop.requests;
    expect(sent!.headers.authorization).toBe('Bearer s3cr3t-token');
    expect(sent!.headers['x-order']).toBe('${SHOP_API_TOKEN}');
    expect(sent!.url).toBe('/orders/%24%7BSHOP_API_TOKEN%7D?q=%24%7BSHOP_API_TOKEN%7D');
    expect(JSON.parse(sent!.body)).toEqual({ order: '${SHOP_API_TOKEN}', literal: '${NOT_EXPANDED}' });
    expect(sent!.body).not.toContain('s3cr3t');
  });

  test('a header value with a line break from the model is refused; nothing is sent', async () => {
    const shop = await business((req, res) => json(res, {}));
    const tool = toolFrom(`description: d\nparameters: { type: object, properties: { ref: { type: string } } }\nrequest: { url: "${shop.url}/x", headers: { X-Ref: "{{ref}}" } }\n`);
    const result = await tool.run(JSON.stringify({ ref: 'a\r\nX-Admin: yes' }), context());
    expect(result).toEqual({ content: 'error: invalid arguments (the value for header X-Ref contains a line break); nothing was done', outcome: 'invalid' });
    expect(shop.requests).toHaveLength(0);
  });

  test('an argument the file does not declare cannot replace a call variable', async () => {
    const shop = await business((req, res) => json(res, {}));
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/customers", query: { phone: "{{caller_number}}" } }\n`);
    await tool.run(JSON.stringify({ caller_number: '+1999' }), context());
    expect(new URL(shop.requests[0]!.url, shop.url).searchParams.get('phone')).toBe(CALLER);
  });

  test('a placeholder without a value or a default: invalid, naming it; nothing is sent', async () => {
    const shop = await business((req, res) => json(res, {}));
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/customers", query: { phone: "{{caller_number}}" } }\n`);
    const result = await tool.run('', context({ variables: {} }));
    expect(result).toEqual({ content: 'error: this call has no caller_number; nothing was done', outcome: 'invalid' });
    expect(shop.requests).toHaveLength(0);
  });

  test('an optional argument the model left out, used without a default: invalid, naming it', async () => {
    const shop = await business((req, res) => json(res, {}));
    const tool = toolFrom(`description: d\nparameters: { type: object, properties: { day: { type: string } } }\nrequest: { url: "${shop.url}/slots/{{day}}" }\n`);
    const result = await tool.run('{}', context());
    expect(result).toEqual({ content: 'error: invalid arguments (day: missing); nothing was done', outcome: 'invalid' });
    expect(shop.requests).toHaveLength(0);
  });

  test('the definition is what the model is offered', () => {
    const tool = toolFrom(`name: order_status\ndescription: Looks up an order.${ORDER_PARAMETERS}\nrequest: { url: "https://shop.example/orders/{{order_number}}" }\nhold: ["One moment."]\nside_effect: true\n`);
    expect(tool.definition).toEqual({
      type: 'function',
      function: {
        name: 'order_status',
        description: 'Looks up an order.',
        parameters: {
          type: 'object',
          properties: { order_number: { type: 'string', description: 'The order number', pattern: '^[0-9]{4,10}$' } },
          required: ['order_number'],
        },
      },
    });
    expect(tool.sideEffect).toBe(true);
    expect(tool.holdLines).toEqual(['One moment.']);
  });
});

describe('the arguments', () => {
  const orderTool = (url: string) => toolFrom(`name: order_status\ndescription: d${ORDER_PARAMETERS}\nrequest: { url: "${url}/orders/{{order_number}}" }\n`);

  test.each([
    ['a wrong pattern', '{"order_number":"12ab"}', /^error: invalid arguments \(order_number: Invalid string: must match pattern .*\); nothing was done$/],
    ['a missing required one', '{}', /^error: invalid arguments \(order_number: missing\); nothing was done$/],
    ['a wrong type', '{"order_number":4711}', /^error: invalid arguments \(order_number: Invalid input: expected string, received number\); nothing was done$/],
    ['broken JSON', '{"order_number":', /^error: invalid arguments \(not valid JSON\); nothing was done$/],
    ['not an object', '[1]', /^error: invalid arguments \(not a JSON object\); nothing was done$/],
  ])('%s: invalid, and nothing reaches the server', async (_what, args, content) => {
    const shop = await business((req, res) => json(res, {}));
    const result = await orderTool(shop.url).run(args, context());
    expect(result.outcome).toBe('invalid');
    expect(result.content).toMatch(content);
    expect(shop.requests).toHaveLength(0);
  });

  test('empty arguments are {}', async () => {
    const shop = await business((req, res) => json(res, { slots: ['10:00'] }));
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/slots" }\nresponse: { path: slots }\n`);
    expect(await tool.run('  ', context())).toEqual({ content: '["10:00"]', outcome: 'ok' });
  });
});

describe('the answer', () => {
  test('response.path picks the part the model reads; numeric parts index lists', async () => {
    const shop = await business((req, res) => json(res, { order: { items: [{ name: 'tea' }, { name: 'cups' }], status: 'shipped' } }));
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/o" }\nresponse: { path: order.items.1.name }\n`);
    expect(await tool.run('{}', context())).toEqual({ content: 'cups', outcome: 'ok' });
  });

  test('a path the answer does not have is an error the model can tell the caller', async () => {
    const shop = await business((req, res) => json(res, { order: {} }));
    const tool = toolFrom(`name: order_status\ndescription: d\nrequest: { url: "${shop.url}/o" }\nresponse: { path: order.status }\n`);
    expect(await tool.run('{}', context())).toEqual({ content: 'error: order_status answered without order.status', outcome: 'error' });
  });

  test('a 1 MB answer reaches the model capped to max_chars', async () => {
    const huge = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item number ${i} with some padding text` })) };
    expect(JSON.stringify(huge).length).toBeGreaterThan(1_000_000);
    const shop = await business((req, res) => json(res, huge));
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/items" }\nresponse: { max_chars: 500 }\n`);
    const result = await tool.run('{}', context());
    expect(result.outcome).toBe('ok');
    expect(result.content.length).toBeLessThanOrEqual(500);
    expect(result.content.startsWith('{"items":[{"id":0,')).toBe(true);
    expect(result.content.endsWith(CUT_MARK)).toBe(true);
  });

  test('an answer past 4 MB is read no further: its beginning is used', async () => {
    let piecesWhenClosed: (sent: number) => void = () => undefined;
    const closed = new Promise<number>((resolve) => (piecesWhenClosed = resolve));
    const shop = await business((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // 64 MB in pieces, as fast as the client takes them; it stops reading (and drops the connection) at 4 MB.
      const piece = 'x'.repeat(64 * 1024);
      let sent = 0;
      const more = (): void => {
        while (sent < 1024) {
          sent += 1;
          if (!res.write(piece)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('error', () => undefined);
      res.on('close', () => piecesWhenClosed(sent));
      more();
    });
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/dump" }\n`);
    const result = await tool.run('{}', context());
    expect(result.outcome).toBe('ok');
    expect(result.content).toBe(`${'x'.repeat(2000 - CUT_MARK.length)}${CUT_MARK}`);
    // Dropped long before the 64 MB were written (socket buffers take some MB on their own): the rest was never read.
    expect(await closed).toBeLessThan(256);
  });

  test('HTTP 409: an error with what the system said, which often says why', async () => {
    const shop = await business((req, res) => json(res, { error: 'slot taken', detail: 'x'.repeat(1000) }, 409));
    const tool = toolFrom(`name: book\ndescription: d\nrequest: { method: POST, url: "${shop.url}/bookings", body: { at: "10:00" } }\n`);
    const result = await tool.run('{}', context());
    expect(result.outcome).toBe('error');
    expect(result.content).toMatch(/^error: book answered HTTP 409 \(the answer: \{"error":"slot taken","detail":"x+ …\[cut\]\)$/);
    expect(result.content.length).toBeLessThan(400);
  });

  test('errors.failed words a failure for the model', async () => {
    const shop = await business((req, res) => {
      res.writeHead(503);
      res.end();
    });
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/x" }\nerrors: { failed: the order system could not be reached }\n`);
    expect(await tool.run('{}', context())).toEqual({ content: 'error: the order system could not be reached', outcome: 'error' });
  });

  test('a system that cannot be reached is an error, never a rejection', async () => {
    const shop = await business((req, res) => json(res, {}));
    await shop.close();
    const tool = toolFrom(`name: order_status\ndescription: d\nrequest: { url: "${shop.url}/x" }\n`);
    expect(await tool.run('{}', context())).toEqual({ content: 'error: order_status could not be reached', outcome: 'error' });
  });

  test('a system that never answers: a timeout within timeout_ms', async () => {
    const shop = await business(() => undefined);
    const tool = toolFrom(`name: order_status\ndescription: d\nrequest: { url: "${shop.url}/x" }\ntimeout_ms: 300\n`);
    const started = performance.now();
    const result = await tool.run('{}', context());
    const elapsed = performance.now() - started;
    expect(result).toEqual({ content: 'error: order_status did not answer within 0.3 s', outcome: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
  });

  test('errors.timeout words a timeout for the model', async () => {
    const shop = await business(() => undefined);
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/x" }\ntimeout_ms: 100\nerrors: { timeout: the order system did not answer in time }\n`);
    expect(await tool.run('{}', context())).toEqual({ content: 'error: the order system did not answer in time', outcome: 'timeout' });
  });

  test('the caller interrupts: aborted at once, while the system still has not answered', async () => {
    const shop = await business(() => undefined);
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/x" }\ntimeout_ms: 10000\n`);
    const controller = new AbortController();
    const run = tool.run('{}', context({ signal: controller.signal }));
    await shop.request(0);
    const started = performance.now();
    controller.abort();
    expect(await run).toEqual({ content: 'not done: the caller interrupted', outcome: 'aborted' });
    expect(performance.now() - started).toBeLessThan(500);
  });

  test('a signal aborted before the run: nothing is sent', async () => {
    const shop = await business((req, res) => json(res, {}));
    const tool = toolFrom(`description: d\nrequest: { url: "${shop.url}/x" }\n`);
    expect((await tool.run('{}', context({ signal: AbortSignal.abort() }))).outcome).toBe('aborted');
    expect(shop.requests).toHaveLength(0);
  });
});

describe('a broken tool file names the line and what is wrong', () => {
  test('an unknown key', () => {
    expect(problemsOf('description: d\nrequest:\n  url: https://x.example/\n  metod: POST\n')).toEqual(['line 4: request.metod: unknown key "metod"']);
  });

  test('a wrong type and a wrong method', () => {
    expect(problemsOf('description: d\nrequest:\n  method: FETCH\n  url: https://x.example/\ntimeout_ms: soon\n')).toEqual([
      'line 3: request.method: use GET, POST, PUT, PATCH or DELETE',
      'line 5: timeout_ms: Invalid input: expected number, received string',
    ]);
  });

  test('a YAML syntax error', () => {
    const [problem, ...rest] = problemsOf('description: d\nrequest:\n  url: "https://x.example/\n  method: GET\n');
    expect(problem).toMatch(/^line \d: YAML: /);
    expect(rest.every((p) => p.startsWith('line '))).toBe(true);
  });

  test('a placeholder left open', () => {
    expect(problemsOf('description: d\nrequest:\n  url: "https://x.example/{{id"\n')).toEqual([
      'line 3: request.url: unclosed "{{": a placeholder needs "}}" on the same line',
    ]);
  });

  test('a JSON schema zod cannot convert points at the property', () => {
    expect(problemsOf('description: d\nparameters:\n  type: object\n  properties:\n    id: { type: string }\n    at: { type: datetime }\nrequest: { url: "https://x.example/" }\n')).toEqual([
      'line 6: parameters.properties.at: cannot be used as a JSON schema: Unsupported type: datetime',
    ]);
    expect(problemsOf('description: d\nparameters: { type: array }\nrequest: { url: "https://x.example/" }\n')).toEqual([
      'line 2: parameters.type: the arguments are an object: write type: object',
    ]);
  });

  test('a schema that is no valid JSON schema, a dangling $ref, too big a schema or description: each points at what to fix', () => {
    const file = (parameters: string, description = 'd') => `description: "${description}"\nparameters:\n${parameters}request: { url: "https://x.example/" }\n`;
    expect(problemsOf(file('  type: object\n  properties:\n    n: { type: number, minimum: one }\n'))).toEqual([
      'line 5: parameters.properties.n.minimum: is no valid JSON schema: Invalid input: expected number, received string',
    ]);
    expect(problemsOf(file('  type: object\n  properties:\n    n: { $ref: "#/$defs/count" }\n'))).toEqual([
      'line 5: parameters.properties.n: cannot be used as a JSON schema: Reference not found: #/$defs/count',
    ]);
    const many = Array.from({ length: 600 }, (_, i) => `    field_${i}: { type: string }\n`).join('');
    expect(problemsOf(file(`  type: object\n  properties:\n${many}`))).toEqual([
      expect.stringMatching(/^line 2: parameters: is \d+ characters of JSON; a tool's schema may have at most 16000$/),
    ]);
    expect(problemsOf(file('  type: object\n', 'x'.repeat(1025)))).toEqual([
      "line 1: description: at most 1024 characters: the model's provider refuses a longer one (put the rest in system.md)",
    ]);
  });

  test('a body on a GET, a reserved name, no description', () => {
    expect(problemsOf('name: transfer\nrequest: { url: "https://x.example/", body: { a: 1 } }\n')).toEqual([
      'line 1: name: "transfer" is the name of one of Hotline\'s own tools (speak, transfer, hangup, do_not_call, send_sms), in any spelling',
      'line 1: description: Invalid input: expected string, received undefined',
      'line 2: request.body: a GET request has no body: use POST, PUT, PATCH or DELETE, or send the values as query',
    ]);
  });

  test('a URL that is no http(s) URL once the environment is filled in', () => {
    expect(problemsOf('description: d\nrequest: { url: "${BASE}/x" }\n', { BASE: 'ftp://files.example' })).toEqual([
      'line 2: request.url: is not an http:// or https:// URL (with the environment variables it uses as they are set)',
    ]);
  });

  test('a header that a secret would break', () => {
    expect(problemsOf('description: d\nrequest:\n  url: https://x.example/\n  headers: { Authorization: "Bearer ${TOKEN}" }\n', { TOKEN: 'a\nb' })).toEqual([
      'line 4: request.headers.Authorization: a header value cannot contain a line break (nor can the environment variables it uses)',
    ]);
  });
});
