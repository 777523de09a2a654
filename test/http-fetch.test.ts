import { spawn } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { getEventListeners, once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  AuthenticationError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, test } from 'vitest';
import { toolDefinitions } from '../src/call/turn/tools.js';
import { createHttpFetch, type HttpFetch } from '../src/net/http-fetch.js';
import { OpenAiLlm, type LlmRequest } from '../src/llm/llm.js';
import { startScriptedLlmServer, type Script, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { sseChunks } from '../src/llm/sse-chunks.js';
import { childEnv, isolatedCwd, tsxLoader } from './helpers/child-process.js';

const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const hello: LlmRequest = { messages: [{ role: 'user', content: 'Hello?' }], tools: toolDefinitions([]) };

async function scripted(script: Script, timing: { ttftMs?: number; tokenDelayMs?: number } = {}): Promise<ScriptedLlmServer> {
  const server = await startScriptedLlmServer({ script, host: '127.0.0.1', ...timing });
  cleanups.push(() => server.close());
  return server;
}

function llmFor(baseURL: string): OpenAiLlm {
  const llm = new OpenAiLlm({ apiKey: 'test-key', baseURL, model: 'test-model' });
  cleanups.push(() => llm.close());
  return llm;
}

function httpFetch(): HttpFetch {
  const client = createHttpFetch();
  cleanups.push(() => client.close());
  return client;
}

/** A bare HTTP server on port 0, for answers the scripted server does not give. */
async function listen(handler: RequestListener): Promise<{ server: Server; url: string; connections: Socket[] }> {
  const server = createHttpServer(handler);
  const connections: Socket[] = [];
  server.on('connection', (socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Client sockets created while `body` runs, whatever created them. */
async function watchingClientSockets<T>(body: (sockets: Socket[]) => Promise<T>): Promise<T> {
  const sockets: Socket[] = [];
  const watch = (message: unknown): void => {
    sockets.push((message as { socket: Socket }).socket);
  };
  diagnostics.subscribe('net.client.socket', watch);
  try {
    return await body(sockets);
  } finally {
    diagnostics.unsubscribe('net.client.socket', watch);
  }
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function contentOf(chunks: ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream' };
const event = (content: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe('OpenAiLlm over node:http', () => {
  test('a streamed reply arrives chunk by chunk, each token as soon as it was written', async () => {
    const server = await scripted(() => ({ content: 'Hello there. How are you today?' }), { ttftMs: 0, tokenDelayMs: 30 });
    const stream = await llmFor(server.baseURL).stream(hello, new AbortController().signal);
    const record = await server.nextRequest();
    const chunks: ChatCompletionChunk[] = [];
    let received = 0;
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (!chunk.choices[0]?.delta.content) continue;
      received++;
      // The next token is written 30 ms later: had anything buffered the body, more would be written by now.
      expect(record.tokens.length).toBe(received);
    }
    expect(contentOf(chunks)).toBe('Hello there. How are you today?');
    expect(received).toBeGreaterThan(5);
    expect(await record.ended).toBe('completed');
  });

  test.each([
    [401, AuthenticationError, 'Incorrect API key: sk-wrong'],
    [429, RateLimitError, 'Slow down, please'],
    [500, InternalServerError, 'The server melted'],
  ])('%i becomes the SDK’s typed error, with the server’s message and request id', async (status, type, message) => {
    const server = await scripted(() => ({ status, errorMessage: message }));
    const error = await failureOf(llmFor(server.baseURL).stream(hello, new AbortController().signal));
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ status, message: `${status} ${message}` });
    expect((error as InstanceType<typeof type>).requestID).toMatch(/^req_/);
  });

  test('the request goes out as the SDK built it: authenticated JSON with its length, no compression asked for', async () => {
    let seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string } | undefined;
    const { url } = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (piece: string) => (body += piece));
      req.on('end', () => {
        seen = { method: req.method, url: req.url, headers: req.headers, body };
        res.writeHead(200, SSE_HEADERS);
        res.end(`${event('Hi')}data: [DONE]\n\n`);
      });
    });
    expect(contentOf(await collect(await llmFor(`${url}/v1`).stream(hello, new AbortController().signal)))).toBe('Hi');
    expect(seen).toMatchObject({ method: 'POST', url: '/v1/chat/completions' });
    expect(seen?.headers).toMatchObject({
      authorization: 'Bearer test-key',
      'content-type': 'application/json',
      'accept-encoding': 'identity',
      'content-length': String(Buffer.byteLength(seen?.body ?? '')),
    });
    expect(JSON.parse(seen?.body ?? '')).toMatchObject({ model: 'test-model', stream: true, messages: hello.messages });
  });

  test('a turn’s request carries the headers and body the SDK’s own create sends, and an error status is the SDK’s error', async () => {
    const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
    const { url } = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (piece: string) => (body += piece));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        if (seen.length > 2) {
          res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': 'req_1' });
          return res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
        }
        res.writeHead(200, SSE_HEADERS);
        res.end(`${event('Hi')}data: [DONE]\n\n`);
      });
    });
    const sdk = new OpenAI({ apiKey: 'test-key', baseURL: `${url}/v1`, maxRetries: 0, fetch: httpFetch().fetch });
    await (await sdk.chat.completions.create({ model: 'test-model', messages: hello.messages, tools: hello.tools, stream: true }).asResponse()).text();
    const llm = llmFor(`${url}/v1`);
    await collect(await llm.stream(hello, new AbortController().signal));
    const [bySdk, byHotline] = seen;
    // Only the length differs: Hotline's body asks for usage too.
    const lengthless = (headers: IncomingMessage['headers'] | undefined) => ({ ...headers, 'content-length': undefined });
    expect(lengthless(byHotline?.headers)).toEqual(lengthless(bySdk?.headers));
    expect(JSON.parse(byHotline?.body ?? '')).toMatchObject({ model: 'test-model', messages: hello.messages, tools: hello.tools, stream: true });

    const error = await failureOf(llm.stream(hello, new AbortController().signal));
    const sdkError = await failureOf(sdk.chat.completions.create({ model: 'test-model', messages: hello.messages, stream: true }));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', requestID: 'req_1', message: (sdkError as Error).message });
  });

  test('an abort before the answer rejects with APIUserAbortError, and the server sees the request go', async () => {
    const server = await scripted((_request, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({}))));
    const controller = new AbortController();
    const streaming = llmFor(server.baseURL).stream(hello, controller.signal);
    const record = await server.nextRequest();
    controller.abort('superseded');
    expect(await failureOf(streaming)).toBeInstanceOf(APIUserAbortError);
    expect(await record.ended).toBe('aborted');
  });

  test('an abort mid-stream destroys the socket at once, ends the iteration as an abort, and the server sees it', async () => {
    const server = await scripted(() => ({ content: 'One two three four five six seven eight nine ten.' }), { ttftMs: 0, tokenDelayMs: 20 });
    const port = new URL(server.baseURL).port;
    await watchingClientSockets(async (sockets) => {
      const controller = new AbortController();
      const stream = await llmFor(server.baseURL).stream(hello, controller.signal);
      const record = await server.nextRequest();
      const socketErrors: Error[] = [];
      const error = await failureOf(
        (async () => {
          for await (const chunk of stream) {
            if (!chunk.choices[0]?.delta.content) continue;
            const ours = sockets.filter((socket) => String(socket.remotePort) === port);
            expect(ours).toHaveLength(1);
            ours[0]?.on('error', (socketError) => socketErrors.push(socketError));
            controller.abort('superseded');
            // Barge-in latency is measured on this: the socket is gone before abort() returns.
            expect(ours[0]?.destroyed).toBe(true);
          }
        })(),
      );
      expect(error).toMatchObject({ name: 'AbortError' });
      // Closed without an error: Node would format an error's stack (costly under source maps) on every barge-in.
      expect(socketErrors).toEqual([]);
      expect(await record.ended).toBe('aborted');
      expect(record.tokens.length).toBeLessThan(5);
    });
  });

  test('a refused connection rejects with APIConnectionError', async () => {
    const port = await closedPort();
    const error = await failureOf(llmFor(`http://127.0.0.1:${port}/v1`).stream(hello, new AbortController().signal));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APIConnectionTimeoutError);
    expect((error as APIConnectionError).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  test('the SDK’s timeout rejects with APIConnectionTimeoutError and closes the request', async () => {
    const server = await scripted((_request, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({}))));
    const client = httpFetch();
    const openai = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL, maxRetries: 0, timeout: 100, fetch: client.fetch });
    const creating = openai.chat.completions.create({ model: 'test-model', messages: hello.messages, stream: true });
    const record = await server.nextRequest();
    expect(await failureOf(creating)).toBeInstanceOf(APIConnectionTimeoutError);
    expect(await record.ended).toBe('aborted');
  });

  test('keep-alive: sequential replies, each read to its end, share one socket', async () => {
    const server = await scripted(() => ({ content: 'Once. Twice.' }));
    const llm = llmFor(server.baseURL);
    await watchingClientSockets(async (sockets) => {
      for (let i = 0; i < 3; i++) expect(contentOf(await collect(await llm.stream(hello, new AbortController().signal)))).toBe('Once. Twice.');
      expect(sockets).toHaveLength(1);
      expect(sockets[0]?.destroyed).toBe(false);
      llm.close();
      expect(sockets[0]?.destroyed).toBe(true);
    });
  });

  test('a socket reset mid-body is an error from the iteration, never an unhandled one', async () => {
    let reset: () => void = () => undefined;
    const { url } = await listen((req, res) => {
      req.resume();
      res.writeHead(200, SSE_HEADERS);
      res.write(event('Half'));
      reset = () => res.socket?.resetAndDestroy();
    });
    const unhandled: unknown[] = [];
    const record = (error: unknown): void => {
      unhandled.push(error);
    };
    process.on('unhandledRejection', record);
    process.on('uncaughtException', record);
    cleanups.push(() => {
      process.off('unhandledRejection', record);
      process.off('uncaughtException', record);
    });
    const stream = await llmFor(`${url}/v1`).stream(hello, new AbortController().signal);
    const chunks: ChatCompletionChunk[] = [];
    const error = await failureOf(
      (async () => {
        for await (const chunk of stream) {
          chunks.push(chunk);
          reset();
        }
      })(),
    );
    expect(contentOf(chunks)).toBe('Half');
    expect(error).toMatchObject({ code: 'ECONNRESET', syscall: 'read' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });

  test('a connection cut mid-reply (scripted break) fails the iteration', async () => {
    const server = await scripted(() => ({ content: 'One two three four five.', breakAfterTokens: 2 }));
    const stream = await llmFor(server.baseURL).stream(hello, new AbortController().signal);
    const chunks: ChatCompletionChunk[] = [];
    const error = await failureOf(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    );
    expect(error).toBeInstanceOf(Error);
    expect(contentOf(chunks)).toBe('One two');
    expect(await (await server.nextRequest()).ended).toBe('broken');
  });
});

describe('createHttpFetch', () => {
  test('a 2xx answer leaves its body unread for rawBody; another answer carries its body', async () => {
    const { url } = await listen((req, res) => {
      req.resume();
      if (req.url === '/ok') {
        res.writeHead(200, { ...SSE_HEADERS, 'x-request-id': 'req_1' });
        res.end(event('Hi'));
      } else {
        res.writeHead(404, 'Nope', { 'content-type': 'application/json' });
        res.end('{"error":{"message":"no such thing"}}');
      }
    });
    const client = httpFetch();
    const ok = await client.fetch(`${url}/ok`);
    expect(ok).toMatchObject({ status: 200, ok: true, body: null });
    expect(ok.headers.get('x-request-id')).toBe('req_1');
    const raw = client.rawBody(ok);
    expect(raw).toBeDefined();
    expect(contentOf(await collect(sseChunks(raw!)))).toBe('Hi');

    const missing = await client.fetch(`${url}/missing`);
    expect(missing).toMatchObject({ status: 404, statusText: 'Nope', ok: false });
    expect(client.rawBody(missing)).toBeUndefined();
    expect(await missing.json()).toEqual({ error: { message: 'no such thing' } });
  });

  test('headers as a Headers object, a plain object or pairs; string and byte bodies with their length', async () => {
    const seen: IncomingMessage['headers'][] = [];
    const bodies: string[] = [];
    const { url } = await listen((req, res) => {
      seen.push(req.headers);
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (piece: string) => (body += piece));
      req.on('end', () => {
        bodies.push(body);
        res.end();
      });
    });
    const client = httpFetch();
    await client.fetch(url, { method: 'POST', headers: new Headers({ 'X-One': 'a' }), body: 'héllo' });
    await client.fetch(url, { method: 'POST', headers: { 'X-Two': 'b' }, body: new TextEncoder().encode('bytes') });
    await client.fetch(url, { headers: [['X-Three', 'c']] });
    expect(seen[0]).toMatchObject({ 'x-one': 'a', 'content-length': '6', 'accept-encoding': 'identity' });
    expect(seen[1]).toMatchObject({ 'x-two': 'b', 'content-length': '5' });
    expect(seen[2]).toMatchObject({ 'x-three': 'c', 'accept-encoding': 'identity' });
    expect(seen[2]?.['content-length']).toBeUndefined();
    expect(bodies).toEqual(['héllo', 'bytes', '']);
  });

  test('an already aborted signal rejects at once, without a connection', async () => {
    const { url, connections } = await listen((_req, res) => res.end());
    const error = await failureOf(httpFetch().fetch(url, { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(connections).toHaveLength(0);
  });

  test('the abort listener goes once the body has ended, an error body was read, or the connection failed', async () => {
    const { url } = await listen((req, res) => {
      req.resume();
      res.writeHead(req.url === '/ok' ? 200 : 500);
      res.end('body');
    });
    const client = httpFetch();
    const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

    const okSignal = new AbortController().signal;
    const raw = client.rawBody(await client.fetch(`${url}/ok`, { signal: okSignal }));
    expect(listeners(okSignal)).toBe(1);
    raw?.resume();
    await once(raw!, 'close');
    expect(listeners(okSignal)).toBe(0);

    const errorSignal = new AbortController().signal;
    await client.fetch(`${url}/fail`, { signal: errorSignal });
    expect(listeners(errorSignal)).toBe(0);

    const refusedSignal = new AbortController().signal;
    await failureOf(client.fetch(`http://127.0.0.1:${await closedPort()}/`, { signal: refusedSignal }));
    expect(listeners(refusedSignal)).toBe(0);
  });

  test('a reset while nobody reads the body yet surfaces when it is read, not as an unhandled error', async () => {
    let reset: () => void = () => undefined;
    const { url } = await listen((req, res) => {
      req.resume();
      res.writeHead(200, SSE_HEADERS);
      res.flushHeaders();
      reset = () => res.socket?.resetAndDestroy();
    });
    const client = httpFetch();
    const raw = client.rawBody(await client.fetch(url))!;
    const closed = new Promise((resolve) => raw.once('close', resolve));
    reset();
    await closed;
    expect(await failureOf(collect(sseChunks(raw)))).toMatchObject({ code: 'ECONNRESET', syscall: 'read' });
  });

  test('an error body is capped at 1 MiB', async () => {
    const { url } = await listen((req, res) => {
      req.resume();
      res.writeHead(500);
      res.end('x'.repeat(3 * 1024 * 1024));
    });
    const answer = await httpFetch().fetch(url);
    expect(answer.status).toBe(500);
    expect((await answer.text()).length).toBe(1024 * 1024);
  });

  test('https: the request opens with a TLS handshake naming the host (no certificate here, so it then fails)', async () => {
    const server = createTcpServer();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const firstBytes = new Promise<Buffer>((resolve) =>
      server.once('connection', (socket) =>
        socket.once('data', (bytes: Buffer) => {
          resolve(bytes);
          socket.destroy();
        }),
      ),
    );
    const { port } = server.address() as AddressInfo;
    const failure = failureOf(llmFor(`https://localhost:${port}/v1`).stream(hello, new AbortController().signal));
    const bytes = await firstBytes;
    // A TLS record of type handshake (22) carrying a ClientHello (1), with the host as its server name.
    expect(bytes[0]).toBe(22);
    expect(bytes[5]).toBe(1);
    expect(bytes.includes(Buffer.from('localhost'))).toBe(true);
    expect(await failure).toBeInstanceOf(APIConnectionError);
  });

  test('idle keep-alive sockets do not keep a process alive', async () => {
    const { server, url } = await listen((req, res) => {
      req.resume();
      res.end('ok');
    });
    // Without unref'd idle sockets the child would wait for this to run out.
    server.keepAliveTimeout = 60_000;
    const script = `
      import { createHttpFetch } from ${JSON.stringify(new URL('../src/net/http-fetch.ts', import.meta.url).href)};
      const client = createHttpFetch();
      const answer = await client.fetch(${JSON.stringify(url)});
      const raw = client.rawBody(answer);
      for await (const _ of raw) {}
      console.log(answer.status);
    `;
    const child = spawn(process.execPath, ['--import', tsxLoader, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: childEnv(),
      cwd: isolatedCwd(),
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (piece: string) => (output += piece));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(output.trim()).toBe('200');
  }, 15_000);
});
