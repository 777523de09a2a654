/**
 * A scripted, OpenAI-compatible Chat Completions server.
 *
 * Hotline's demo model, the tests, the terminal simulator and the benchmark all talk to it through
 * the real `openai` SDK, so everything above the HTTP boundary runs exactly as in production. It is
 * deliberately built on bare `node:http`: as a benchmark fixture it must cost next to nothing.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type ApiError, type ChatRequestBody, parseChatRequest } from './chat-request.js';
import { ScriptedPromptCache, type PromptCount } from './scripted-prompt-cache.js';
import { tokenize } from './tokenize.js';

export * from './chat-request.js';
export { tokenize } from './tokenize.js';

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

export interface ScriptedToolCall {
  name: string;
  /** JSON text, streamed in tokenize() pieces. Not validated, so scripts can emit broken JSON. */
  arguments: string;
}

export interface ScriptedReply {
  /** Assistant text, streamed as tokenize() pieces. */
  content?: string;
  /** Streamed after the content, each in argument pieces. */
  toolCalls?: ScriptedToolCall[];
  /** Delay before the first token; defaults to the server option. For `status` replies it delays the error. */
  ttftMs?: number;
  /** Delay between tokens; defaults to the server option. */
  tokenDelayMs?: number;
  /** Answer with this HTTP error status and an OpenAI-style error body instead of streaming. */
  status?: number;
  errorMessage?: string;
  /** Extra response headers of an error answer, e.g. `{ 'retry-after': '2' }`. */
  headers?: Record<string, string>;
  /**
   * A server-sent-events body sent as it stands instead of a planned reply: a
   * recorded stream of a real server, or a hostile one. It is sent event by
   * event (split at blank lines), the first after `ttftMs`, then one per `tokenDelayMs`.
   */
  sse?: string;
  /** Send 200 and the headers, then nothing, until the client goes away. */
  hang?: boolean;
  /**
   * Destroy the socket right after the n-th token (content tokens and argument pieces both count;
   * 0 cuts right after the role chunk). If the reply has fewer tokens it completes normally.
   */
  breakAfterTokens?: number;
}

export interface ScriptContext {
  /** Arrival order of the request, starting at 0; equals RecordedRequest.index. */
  index: number;
  /** Aborted when the client goes away before the response is finished, for scripts that wait on something. */
  signal: AbortSignal;
  /** Requests its connection carried before this one (any route): 0 means the client opened a new connection for it. */
  connectionRequests: number;
}

export type Script = (request: ChatRequestBody, context: ScriptContext) => ScriptedReply | Promise<ScriptedReply>;

export type RequestOutcome = 'completed' | 'aborted' | 'broken';

export interface RecordedToken {
  text: string;
  /** performance.timeOrigin + performance.now() right after the write. */
  at: number;
  /** Set for tool-call argument pieces; undefined for content tokens. */
  toolCallIndex?: number;
}

export interface RecordedRequest {
  index: number;
  /**
   * The validated request. When validationError is set the request did not conform, and this holds
   * only the model (or '') and no messages; see rawBody for what was actually sent.
   */
  body: ChatRequestBody;
  /** The parsed JSON exactly as sent; undefined if it was not valid JSON. */
  rawBody: unknown;
  /** The body's text byte for byte as sent: what a provider's prompt cache compares. */
  rawText: string;
  receivedAt: number;
  /** HTTP status answered; 0 while an async script is still deciding. */
  status: number;
  /** Set when the request was rejected with 400. */
  validationError?: string;
  /** Message of the error a throwing script raised (answered with 500). */
  scriptError?: string;
  tokens: RecordedToken[];
  /** 'completed' if the server finished the response, 'aborted' if the client left first, 'broken' if breakAfterTokens cut it. */
  ended: Promise<RequestOutcome>;
}

export interface ScriptedLlmServer {
  /** e.g. http://127.0.0.1:PORT/v1 — give this to `new OpenAI({ baseURL, apiKey })`. */
  readonly baseURL: string;
  readonly port: number;
  /** Chat completion requests in arrival order (rejected ones included). */
  readonly requests: RecordedRequest[];
  /**
   * Without an argument: the next request not yet handed out by an earlier nextRequest() call,
   * waiting for it to arrive if need be (a cursor, so no request is missed by a late call).
   * With n: the request whose index is n, counted from 0 over the server's lifetime.
   */
  nextRequest(n?: number): Promise<RecordedRequest>;
  /** Closes the server and every open connection; in-flight responses end as 'aborted'. */
  close(): Promise<void>;
}

export interface ScriptedLlmServerOptions {
  script: Script;
  host?: string;
  port?: number;
  ttftMs?: number;
  tokenDelayMs?: number;
  onToken?: (request: RecordedRequest, token: string, at: number) => void;
  /**
   * Keep every request in `requests` (default true). Off for long-running use
   * (the demo model, soak tests): the records would grow without bound.
   */
  record?: boolean;
  /** Serve HTTPS with this key and certificate (PEM) instead of plain HTTP; baseURL then starts with https://. */
  tls?: { key: string; cert: string };
  /**
   * How long an idle keep-alive connection is kept open (default Node's 5 s). A provider's front
   * keeps it much longer; at 5 s a client pausing between turns finds it closed whatever it does.
   */
  keepAliveTimeoutMs?: number;
  /**
   * Whether answers say how long with `Keep-Alive: timeout=…` (default true, as Node's servers do).
   * Some fronts (Cloudflare's) send no such header: the client's own idle limit then decides alone.
   */
  keepAliveHint?: boolean;
}

export const DEMO_MODEL_ID = 'hotline-demo';

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

const DEFAULT_ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: 'Bad request.', type: 'invalid_request_error', code: null },
  401: {
    message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
  403: { message: 'You are not allowed to sample from this model.', type: 'invalid_request_error', code: null },
  404: { message: 'The model does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' },
  408: { message: 'Request timed out.', type: 'server_error', code: null },
  409: { message: 'The request conflicted with another request.', type: 'invalid_request_error', code: null },
  422: { message: 'Unprocessable entity.', type: 'invalid_request_error', code: null },
  429: {
    message: 'Rate limit reached for requests. Please try again later.',
    type: 'requests',
    code: 'rate_limit_exceeded',
  },
  500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
  502: { message: 'Bad gateway.', type: 'server_error', code: null },
  503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
  504: { message: 'Gateway timeout.', type: 'server_error', code: null },
};

function errorFor(status: number, message?: string): ApiError {
  const known = DEFAULT_ERRORS[status];
  const fallbackType = status >= 500 ? 'server_error' : 'invalid_request_error';
  return {
    message: message ?? known?.message ?? `Request failed with status ${status}.`,
    type: known?.type ?? fallbackType,
    param: null,
    code: known?.code ?? null,
  };
}

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(prefix: string, length: number): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const byte of bytes) out += ALPHANUM[byte % ALPHANUM.length];
  return out;
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

/** The counts as OpenAI reports them; the prompt's, with its cached part, from the server's prompt cache. */
function usageFor(prompt: PromptCount, completionTokens: number): Usage {
  const { promptTokens, cachedTokens } = prompt;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

interface Step {
  data: string;
  delayMs: number;
  token?: Omit<RecordedToken, 'at'>;
}

interface Plan {
  steps: Step[];
  completionTokens: number;
  content: string | null;
  toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
}

function sse(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** `prompt` counts the request's prompt, once and only if the counts are sent. */
function planReply(body: ChatRequestBody, reply: ScriptedReply, ttftMs: number, tokenDelayMs: number, prompt: () => PromptCount): Plan {
  const id = randomId('chatcmpl-', 29);
  const created = Math.floor(Date.now() / 1000);
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): string =>
    sse({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      system_fingerprint: 'fp_hotline',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });

  const steps: Step[] = [{ data: chunk({ role: 'assistant', content: '', refusal: null }), delayMs: 0 }];
  let generated = 0;
  const nextDelay = (): number => (generated++ === 0 ? ttftMs : tokenDelayMs);
  let completionTokens = 0;

  const content = reply.content ?? '';
  for (const text of tokenize(content)) {
    steps.push({ data: chunk({ content: text }), delayMs: nextDelay(), token: { text } });
    completionTokens++;
  }

  const toolCalls: Plan['toolCalls'] = [];
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const callId = randomId('call_', 24);
    toolCalls.push({ id: callId, type: 'function', function: { name: call.name, arguments: call.arguments } });
    steps.push({
      data: chunk({
        tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
      delayMs: nextDelay(),
    });
    completionTokens += 1 + tokenize(call.name).length;
    for (const text of tokenize(call.arguments)) {
      steps.push({
        data: chunk({ tool_calls: [{ index, function: { arguments: text } }] }),
        delayMs: nextDelay(),
        token: { text, toolCallIndex: index },
      });
      completionTokens++;
    }
  }

  const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  steps.push({ data: chunk({}, finishReason), delayMs: generated === 0 ? ttftMs : 0 });
  if (includeUsage) {
    steps.push({
      data: sse({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        system_fingerprint: 'fp_hotline',
        choices: [],
        usage: usageFor(prompt(), completionTokens),
      }),
      delayMs: 0,
    });
  }
  steps.push({ data: 'data: [DONE]\n\n', delayMs: 0 });
  return { steps, completionTokens, content: reply.content ?? (toolCalls.length > 0 ? null : ''), toolCalls };
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, payload: unknown, requestId: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}

/** An SSE body cut into its events, each with the blank line that ends it. */
function sseEvents(body: string): string[] {
  return body.split(/(?<=\r?\n\r?\n)/u).filter((event) => event.trim() !== '');
}

const MODELS_CREATED = 1_700_000_000;

export async function startScriptedLlmServer(options: ScriptedLlmServerOptions): Promise<ScriptedLlmServer> {
  const requests: RecordedRequest[] = [];
  const promptCache = new ScriptedPromptCache();
  const waiters = new Map<number, ((request: RecordedRequest) => void)[]>();
  let cursor = 0;
  let arrivals = 0;

  const publish = (record: RecordedRequest): void => {
    if (options.record !== false) requests.push(record);
    const pending = waiters.get(record.index);
    if (!pending) return;
    waiters.delete(record.index);
    for (const resolve of pending) resolve(record);
  };

  const handleChat = async (req: IncomingMessage, res: ServerResponse, requestId: string, connectionRequests: number): Promise<void> => {
    const receivedAt = now();
    const text = await readBody(req);
    const index = arrivals++;

    let settle: (outcome: RequestOutcome) => void = () => undefined;
    const ended = new Promise<RequestOutcome>((resolve) => {
      settle = (outcome) => {
        settle = () => undefined;
        resolve(outcome);
      };
    });

    // Everything that may still write checks `stopped`; the first of finish/close wins.
    let stopped = false;
    let breaking = false;
    let timer: NodeJS.Timeout | undefined;
    const abort = new AbortController();
    const stop = (): void => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    res.on('finish', () => {
      stop();
      settle('completed');
    });
    res.on('close', () => {
      stop();
      if (!res.writableFinished) abort.abort();
      settle(breaking ? 'broken' : res.writableFinished ? 'completed' : 'aborted');
    });

    const { raw, model, validation } = parseChatRequest(text);

    const record: RecordedRequest = {
      index,
      body: validation.ok
        ? validation.body
        : { model, messages: [] },
      rawBody: raw,
      rawText: text,
      receivedAt,
      status: 0,
      tokens: [],
      ended,
    };

    if (!validation.ok) {
      record.status = 400;
      record.validationError = validation.error.message;
      publish(record);
      sendJson(res, 400, { error: validation.error }, requestId);
      return;
    }
    publish(record);
    const body = validation.body;

    let reply: ScriptedReply;
    try {
      reply = await options.script(body, { index, signal: abort.signal, connectionRequests });
    } catch (error) {
      if (stopped) return;
      record.status = 500;
      record.scriptError = error instanceof Error ? error.message : String(error);
      sendJson(res, 500, { error: errorFor(500) }, requestId);
      return;
    }
    if (stopped) return;

    if (reply.status !== undefined && reply.status !== 200) {
      const status = reply.status;
      record.status = status;
      const send = (): void => {
        timer = undefined;
        if (!stopped) sendJson(res, status, { error: errorFor(status, reply.errorMessage) }, requestId, reply.headers);
      };
      if (reply.ttftMs) timer = setTimeout(send, reply.ttftMs);
      else send();
      return;
    }

    record.status = 200;
    if (reply.sse !== undefined) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
      const events = sseEvents(reply.sse);
      const firstDelay = reply.ttftMs ?? options.ttftMs ?? 0;
      const delay = reply.tokenDelayMs ?? options.tokenDelayMs ?? 0;
      let sent = 0;
      const sendNext = (): void => {
        timer = undefined;
        if (stopped) return;
        if (sent === events.length) {
          res.end();
          return;
        }
        res.write(events[sent++]!);
        timer = setTimeout(sendNext, delay);
      };
      if (firstDelay > 0) {
        res.flushHeaders();
        timer = setTimeout(sendNext, firstDelay);
      } else sendNext();
      return;
    }
    const streaming = body.stream === true;
    const ttftMs = reply.ttftMs ?? options.ttftMs ?? 0;
    const tokenDelayMs = reply.tokenDelayMs ?? options.tokenDelayMs ?? 0;
    let counted: PromptCount | undefined;
    const prompt = (): PromptCount => (counted ??= promptCache.count(raw));
    const plan = planReply(body, reply, ttftMs, tokenDelayMs, prompt);

    if (streaming) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-request-id': requestId,
      });
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    }
    if (reply.hang) {
      res.flushHeaders();
      return;
    }

    const breakAfter = reply.breakAfterTokens;
    const cut = (): void => {
      stop();
      breaking = true;
      res.socket?.destroy();
    };
    const recordToken = (token: Omit<RecordedToken, 'at'>): void => {
      const at = now();
      const entry: RecordedToken = token.toolCallIndex === undefined ? { text: token.text, at } : { ...token, at };
      record.tokens.push(entry);
      options.onToken?.(record, token.text, at);
    };

    if (!streaming) {
      const tokenSteps = plan.steps.filter((step) => step.token !== undefined);
      const generationMs = tokenSteps.length === 0 ? ttftMs : ttftMs + tokenDelayMs * (tokenSteps.length - 1);
      const finish = (): void => {
        timer = undefined;
        if (stopped) return;
        if (breakAfter !== undefined && breakAfter <= tokenSteps.length) {
          cut();
          return;
        }
        const message = {
          role: 'assistant',
          content: plan.content,
          refusal: null,
          annotations: [],
          ...(plan.toolCalls.length > 0 ? { tool_calls: plan.toolCalls } : {}),
        };
        res.end(
          JSON.stringify({
            id: randomId('chatcmpl-', 29),
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [
              { index: 0, message, logprobs: null, finish_reason: plan.toolCalls.length > 0 ? 'tool_calls' : 'stop' },
            ],
            usage: usageFor(prompt(), plan.completionTokens),
            service_tier: 'default',
            system_fingerprint: 'fp_hotline',
          }),
        );
        for (const step of tokenSteps) if (step.token) recordToken(step.token);
      };
      if (generationMs > 0) timer = setTimeout(finish, generationMs);
      else finish();
      return;
    }

    let next = 0;
    let tokensWritten = 0;
    const run = (): void => {
      timer = undefined;
      while (!stopped && next < plan.steps.length) {
        const step = plan.steps[next++];
        if (!step) break;
        if (step.token) tokensWritten++;
        if (breakAfter !== undefined && tokensWritten >= breakAfter && (step.token || next === 1)) {
          // Mark the break before writing so a close racing the write still counts as 'broken';
          // cut only once the chunk has left, or the client would never see the last token.
          stop();
          breaking = true;
          res.write(step.data, () => cut());
          if (step.token) recordToken(step.token);
          return;
        }
        res.write(step.data);
        if (step.token) recordToken(step.token);
        if (stopped) return;
        const following = plan.steps[next];
        if (following && following.delayMs > 0) {
          timer = setTimeout(run, following.delayMs);
          return;
        }
      }
      if (!stopped) res.end();
    };
    run();
  };

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
