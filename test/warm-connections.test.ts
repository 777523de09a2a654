/**
 * Connections kept and opened ahead of need (src/net): a request that matters never waits for a
 * handshake, a connection the server closed costs no request, and idle holders hold nothing.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { createHttpFetch, type HttpFetch } from '../src/net/http-fetch.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Served {
  readonly url: URL;
  readonly server: Server;
  /** Every connection the server accepted, in order. */
  readonly connections: Socket[];
  /** For each request: the index of the connection it came on, and that connection's request count. */
  readonly requests: { connection: number; nth: number }[];
  /** Resolves with the next connection accepted. */
  nextConnection(): Promise<Socket>;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, nth: number) => void = (_req, res) => res.end('ok')): Promise<Served> {
  const connections: Socket[] = [];
  const requests: { connection: number; nth: number }[] = [];
  const counts = new WeakMap<Socket, number>();
  const server = createServer((req, res) => {
    const nth = (counts.get(req.socket) ?? 0) + 1;
    counts.set(req.socket, nth);
    requests.push({ connection: connections.indexOf(req.socket), nth });
    req.resume();
    handler(req, res, nth);
  });
  server.on('connection', (socket: Socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/v1/chat`),
    server,
    connections,
    requests,
    nextConnection: async () => ((await once(server, 'connection')) as [Socket])[0],
  };
}

function client(): HttpFetch {
  const http = createHttpFetch();
  cleanups.push(() => http.close());
  return http;
}

async function get(http: HttpFetch, url: URL): Promise<string> {
  const answer = await http.fetch(url, { method: 'POST', body: '{}' });
  const raw = http.rawBody(answer);
  let text = '';
  if (raw) for await (const piece of raw) text += String(piece);
  return text;
}

describe('connections opened ahead of need', () => {
  test('a connection opened when a call expects to ask is the one its request uses', async () => {
    const model = await serve();
    const http = client();
    const holder = {};
    const opened = model.nextConnection();
    http.expect(holder, model.url);
    await opened;
    expect(model.connections).toHaveLength(1);

    http.spent(holder);
    expect(await get(http, model.url)).toBe('ok');
    expect(model.connections).toHaveLength(1);
    expect(model.requests).toEqual([{ connection: 0, nth: 1 }]);
    expect(http.spareCounts).toEqual({ opened: 1, taken: 1 });
  });

  test('an idle connection already there is enough: nothing more is opened', async () => {
    const model = await serve();
    const http = client();
    await get(http, model.url);
    http.expect({}, model.url);
    expect(http.spareCounts.opened).toBe(0);
    await get(http, model.url);
    expect(model.requests).toEqual([
      { connection: 0, nth: 1 },
      { connection: 0, nth: 2 },
    ]);
  });

  test('a server closing an idle connection early: while a call expects to ask, another is opened, and the request pays no handshake', async () => {
    // It says it keeps a connection a minute, and closes it after 50 ms: far shorter than any turn's
    // pause, so the kept connection is gone before the caller is answered.
    const model = await serve((_req, res) => {
      res.setHeader('Keep-Alive', 'timeout=60');
      res.end('ok');
    });
    model.server.keepAliveTimeout = 50;
    const http = client();
    await get(http, model.url);
    // The agent takes the connection back a moment after the answer's end.
    await new Promise(setImmediate);
    const kept = model.connections[0]!;
    const holder = {};
    http.expect(holder, model.url);
    expect(http.spareCounts.opened).toBe(0);

    const replacement = model.nextConnection();
    await once(kept, 'close');
    await replacement;
    http.spent(holder);
    await get(http, model.url);
    expect(model.requests.at(-1)).toEqual({ connection: 1, nth: 1 });
    expect(http.spareCounts).toEqual({ opened: 1, taken: 1 });
  });

  test('one wish per holder and origin: a call saying so again does not open more, and holders who spent theirs open none', async () => {
    const model = await serve();
    const http = client();
    const [a, b] = [{}, {}];
    const opened = [model.nextConnection()];
    http.expect(a, model.url);
    http.expect(a, model.url);
    http.expect(a, model.url);
    await Promise.all(opened);
    expect(http.spareCounts.opened).toBe(1);
    http.expect(b, model.url);
    expect(http.spareCounts.opened).toBe(2);

    // Both spent: the server closing every connection now leaves nothing to replace.
    http.spent(a);
    http.spent(b);
    model.server.closeAllConnections();
    await get(http, model.url);
    expect(http.spareCounts.opened).toBe(2);
  });
});

describe('a kept connection the server closed as a request went out', () => {
  test('the request is sent again on a new connection, and its caller never hears of it', async () => {
    const model = await serve((req, res, nth) => {
      // The second request on a connection meets a reset, as when the server closed it meanwhile.
      if (nth === 2) req.socket.resetAndDestroy();
      else res.end('ok');
    });
    const http = client();
    expect(await get(http, model.url)).toBe('ok');
    expect(await get(http, model.url)).toBe('ok');
    expect(model.requests).toEqual([
      { connection: 0, nth: 1 },
      { connection: 0, nth: 2 },
      { connection: 1, nth: 1 },
    ]);
  });

  test('a new connection failing is not retried: that is the server, not a stale connection', async () => {
    const model = await serve((req) => req.socket.resetAndDestroy());
    const http = client();
    await expect(get(http, model.url)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(model.requests).toHaveLength(1);
  });
});
