/**
 * What a script answers and what the scripted server records of each request: the contract the
 * tests, the demo model and the benchmark write against, apart from the server that keeps it, so
 * that a script's author reads the words of the contract without the HTTP plumbing around them.
 */
import type { ChatRequestBody } from './chat-request.js';

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
