/**
 * A scripted, OpenAI-compatible Chat Completions server.
 *
 * Hotline's demo model, the tests, the terminal simulator and the benchmark all talk to it through
 * the real `openai` SDK, so everything above the HTTP boundary runs exactly as in production. It is
 * deliberately built on bare `node:http`: as a benchmark fixture it must cost next to nothing.
 *
 * This file listens and routes; a chat request's exchange is scripted-chat.ts, the reply's chunks
 * scripted-reply-plan.ts, the HTTP answers scripted-http.ts, and the contract scripts are written
 * against scripted-contract.ts (all exported from here, where every user imports them).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { chatHandler } from './scripted-chat.js';
import { DEMO_MODEL_ID, type RecordedRequest, type ScriptedLlmServer, type ScriptedLlmServerOptions } from './scripted-contract.js';
import { errorFor, randomId, sendJson } from './scripted-http.js';

export * from './chat-request.js';
export * from './scripted-contract.js';
export { tokenize } from './tokenize.js';

const MODELS_CREATED = 1_700_000_000;

export async function startScriptedLlmServer(options: ScriptedLlmServerOptions): Promise<ScriptedLlmServer> {
  const requests: RecordedRequest[] = [];
  const waiters = new Map<number, ((request: RecordedRequest) => void)[]>();
  let cursor = 0;

  const publish = (record: RecordedRequest): void => {
    if (options.record !== false) requests.push(record);
    const pending = waiters.get(record.index);
    if (!pending) return;
    waiters.delete(record.index);
    for (const resolve of pending) resolve(record);
  };

  const handleChat = chatHandler(options, publish);

  const served = new WeakMap<Socket, number>();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = randomId('req_', 32);
    const connectionRequests = served.get(req.socket) ?? 0;
    served.set(req.socket, connectionRequests + 1);
    // Sockets can die at any moment (client aborts, our own breakAfterTokens); none of that may
    // surface as an unhandled error.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    const path = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
    const route = path.startsWith('/v1/') ? path.slice(3) : path;

    if (req.method === 'POST' && route === '/chat/completions') {
      handleChat(req, res, requestId, connectionRequests).catch(() => {
        if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: errorFor(500) }, requestId);
        else res.destroy();
      });
      return;
    }
    req.resume();
    if (req.method === 'GET' && route === '/models') {
      sendJson(
        res,
        200,
        { object: 'list', data: [{ id: DEMO_MODEL_ID, object: 'model', created: MODELS_CREATED, owned_by: 'hotline' }] },
        requestId,
      );
      return;
    }
    if (req.method === 'GET' && route.startsWith('/models/')) {
      const id = decodeURIComponent(route.slice('/models/'.length));
      if (id === DEMO_MODEL_ID) {
        sendJson(res, 200, { id, object: 'model', created: MODELS_CREATED, owned_by: 'hotline' }, requestId);
      } else {
        sendJson(
          res,
          404,
          { error: { ...errorFor(404, `The model '${id}' does not exist`), param: 'model' } },
          requestId,
        );
      }
      return;
    }
    sendJson(
      res,
      404,
      { error: { message: `Invalid URL (${req.method ?? 'GET'} ${req.url ?? '/'})`, type: 'invalid_request_error', param: null, code: null } },
      requestId,
    );
  };
  const server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, handle) : createServer(handle);
  if (options.keepAliveTimeoutMs !== undefined && options.keepAliveHint === false) {
    // Node sends the header whenever its keep-alive timeout is on: off, and the socket's own idle timeout closes it.
    server.keepAliveTimeout = 0;
    server.timeout = options.keepAliveTimeoutMs;
  } else if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => undefined);

  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;

  return {
    baseURL: `${options.tls ? 'https' : 'http'}://${host}:${address.port}/v1`,
    port: address.port,
    requests,
    nextRequest(n?: number): Promise<RecordedRequest> {
      const index = n ?? cursor++;
      // publish() runs in arrival order, so a request's index is its position in the array.
      const existing = requests[index];
      if (existing) return Promise.resolve(existing);
      return new Promise((resolve) => {
        const list = waiters.get(index) ?? [];
        list.push(resolve);
        waiters.set(index, list);
      });
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
