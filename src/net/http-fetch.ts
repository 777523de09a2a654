/**
 * The openai SDK's HTTP client: `node:http` / `node:https` with keep-alive agents in place of
 * undici's fetch. The SDK still builds, authenticates and times the request and maps error
 * statuses to its typed errors; a successful body is handed over as Node's own stream, because
 * undici and web streams cost several times Hotline's own work per streamed token.
 */
import http, { type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import { WarmAgents } from './warm-agents.js';

/** The `fetch` the openai SDK accepts. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface HttpFetch {
  /**
   * A 2xx answer comes back with a null body: read it through rawBody. Other answers carry their
   * (capped) body, so the SDK reads its error JSON as usual. Redirects are not followed.
   */
  readonly fetch: Fetch;
  /** The unread body of a 2xx answer of this client (of every answer, with rawBodies: 'all'); undefined for any other. */
  rawBody(response: Response): IncomingMessage | undefined;
  /**
   * `holder` (a call) will soon send a request to `url`'s origin: a connection is opened now if
   * none is idle, so that request pays no handshake. Its wish is spent by `spent`.
   */
  expect(holder: object, url: URL): void;
  /** `holder`'s request has gone out, or it needs none any more. */
  spent(holder: object): void;
  /** Connections opened ahead of need, and how many of them a request took. */
  readonly spareCounts: { opened: number; taken: number };
  /** Destroys every socket, idle or busy, so no keep-alive connection outlives the server. */
  close(): void;
}

/** Error bodies are read whole for the SDK; a misbehaving server must not make that unbounded. */
const ERROR_BODY_LIMIT = 1024 * 1024;

export interface HttpFetchOptions {
  /**
   * Every answer's body is handed over unread, through rawBody, whatever its status: for a reader
   * that caps and digests bodies itself (a business system's error can be worth reading whole).
   */
  readonly rawBodies?: 'all';
}

export function createHttpFetch(options: HttpFetchOptions = {}): HttpFetch {
  // No socket limit: every call streams its own reply at once. Idle connections are kept as long as
  // the server allows (see warm-agents.ts), and unref'd by the agent, so they never hold the process open.
  const agents = new WarmAgents();
  const bodies = new WeakMap<Response, IncomingMessage>();

  const fetch: Fetch = (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(abortError(signal));
      if (input instanceof Request) return reject(new TypeError('http-fetch takes a URL, not a Request'));
      const url = typeof input === 'string' ? new URL(input) : input;
      const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
      if (!client) return reject(new TypeError(`http-fetch cannot fetch ${url.protocol} URLs`));
      const body = init.body ?? undefined;
      if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
        return reject(new TypeError('http-fetch sends a string or Uint8Array body only'));
      }

      const headers = requestHeaders(init.headers);
      // Bodies are handed on as sent; undici used to decompress them, this client does not.
      headers['accept-encoding'] = 'identity';
      if (body !== undefined) headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;

      let settled = false;
      let request: ClientRequest | undefined;
      let response: IncomingMessage | undefined;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        return true;
      };
      const fail = (error: Error): void => {
        if (!settle()) return;
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = (): void => {
        const error = abortError(signal);
        fail(error);
        // Synchronously, so barge-in closes the LLM's socket at once. Destroying an unfinished body
        // destroys its socket, and the body's reader gets the same error as the SDK's callers would.
        if (response) response.destroy(error);
        else request?.destroy(error);
      };

      const agent = client === https ? agents.https : agents.http;
      let retried = false;
      const send = (): void => {
        const sent = client.request(url, { method: init.method ?? 'GET', headers, agent });
        request = sent;
        sent.on('error', (error) => {
          if (sent !== request) return;
          // A kept (or spare) connection the server closed as the request went out: it never reached
          // the server, so it is sent again at once on a new connection, and nobody waits or hears of it.
          const stale = sent.reusedSocket || agents.wasSpare(sent.socket);
          if (!response && !settled && !retried && stale && isDeadConnection(error)) {
            retried = true;
            send();
            return;
          }
          if (!response) fail(error);
          // The body's reader must see the socket's own error, not the generic "aborted" that follows it.
          else if (!response.complete) response.destroy(error);
        });
        sent.on('response', onResponse);
        sent.end(body);
      };
      const onResponse = (res: IncomingMessage): void => {
        response = res;
        const status = res.statusCode ?? 0;
        if ((status >= 200 && status < 300) || options.rawBodies === 'all') {
          // An unread body's failure must not crash the process: its reader gets the error from the stream.
          res.on('error', ignore);
          res.once('close', () => signal?.removeEventListener('abort', onAbort));
          try {
            const answer = new Response(null, responseInit(res));
            bodies.set(answer, res);
            if (settle()) resolve(answer);
          } catch (error) {
            fail(toError(error));
            res.destroy();
          }
          return;
        }
        readErrorBody(res, (bytes) => {
          if (!settle()) return;
          signal?.removeEventListener('abort', onAbort);
          try {
            // 304 is a null-body status: the Response constructor refuses a body for it.
            resolve(new Response(status === 304 ? null : bytes, responseInit(res)));
          } catch (error) {
            reject(toError(error));
          }
        }, fail);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      send();
    });

  return {
    fetch,
    rawBody: (response) => bodies.get(response),
    expect: (holder, url) => agents.expect(holder, url),
    spent: (holder) => agents.spent(holder),
    get spareCounts() {
      return agents.spareCounts;
    },
    close: () => agents.close(),
  };
}

/** How a connection the server had already closed fails a request written to it. */
function isDeadConnection(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED';
}

function readErrorBody(res: IncomingMessage, done: (bytes: Buffer) => void, fail: (error: Error) => void): void {
  const chunks: Buffer[] = [];
  let length = 0;
  res.on('data', (chunk: Buffer) => {
    if (length >= ERROR_BODY_LIMIT) return;
    chunks.push(chunk);
    length += chunk.length;
    if (length < ERROR_BODY_LIMIT) return;
    // Enough to explain the error; the rest is not worth a socket.
    done(Buffer.concat(chunks).subarray(0, ERROR_BODY_LIMIT));
    res.destroy();
  });
  res.on('end', () => done(Buffer.concat(chunks)));
  res.on('error', fail);
  res.on('close', () => fail(new Error('the connection closed before the error body ended')));
}

function requestHeaders(init: RequestInit['headers']): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  if (init === undefined) return headers;
  if (init instanceof Headers) {
    init.forEach((value, name) => {
      headers[name] = value;
    });
  } else if (Array.isArray(init)) {
    for (const [name, value] of init) if (name !== undefined && value !== undefined) headers[name.toLowerCase()] = value;
  } else {
    for (const [name, value] of Object.entries(init)) headers[name.toLowerCase()] = typeof value === 'string' ? value : [...value];
  }
  return headers;
}

function responseInit(res: IncomingMessage): ResponseInit {
  const headers: [string, string][] = [];
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
  return { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers };
}

/**
 * What undici rejects with on an abort: the signal's reason, or an AbortError when the reason is no
 * error. The SDK tells the caller's abort (its own signal is aborted) from its timeout (an error
 * named AbortError, its signal not aborted) by exactly these.
 */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function ignore(): void {}
