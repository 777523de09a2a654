import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// Self-contained on purpose (node:http only): it is meant to move into a simulator unchanged.

/** One request that reached the fake service, whatever it was answered. */
export interface RecordedOutboundCall {
  method: string;
  /** Path without the query, e.g. /v3/ai-flows/flow-1/call. */
  path: string;
  /** Decoded from the path; undefined when the path is not the outbound endpoint. */
  aiFlowId: string | undefined;
  /** Lower-cased names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when it is not JSON, or undefined when empty. */
  body: unknown;
  /** What the fake answered. */
  status: number;
  /** The body of that answer. */
  responseBody: string;
}

export interface FakeFlow {
  /** False: the service does not know this flow and answers 404. Default true. */
  exists?: boolean;
  /** Whether the flow has a phone number (caller ID); without one the service answers 400. Default true. */
  phoneNumber?: boolean;
  /** A fixed answer instead of the flow's normal behaviour (e.g. 403 before support has enabled outbound calls). */
  respond?: { status: number; body?: string };
}

export interface FakeAiFlowApiOptions {
  /** When set, requests without `Authorization: Bearer <token>` get 401. */
  token?: string;
  /** Without `token`: still refuse (401) a request that carries no `Authorization: Bearer …` at all. */
  requireBearer?: boolean;
  flows?: Record<string, FakeFlow>;
  /** How a flow missing from `flows` behaves; without it such a flow does not exist (404). */
  defaultFlow?: FakeFlow;
  /** Called for every request, before its answer is written. */
  onCall?: (call: RecordedOutboundCall) => void;
  /** Called for every request once its answer has been written (a 201 means the call now rings). */
  onAnswered?: (call: RecordedOutboundCall) => void;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface FakeAiFlowApi {
  /** http://127.0.0.1:port, the base URL to give the client. */
  url: string;
  port: number;
  calls: RecordedOutboundCall[];
  /** From now on, answer this flow's requests with this status and body (also for a flow not configured). */
  setResponse(aiFlowId: string, status: number, body?: string): void;
  /** Back to the flow's normal behaviour. */
  clearResponse(aiFlowId: string): void;
  close(): Promise<void>;
}

const CALL_PATH = /^\/v3\/ai-flows\/([^/]+)\/call$/;

/**
 * Plays the voice service's outbound endpoint, POST /v3/ai-flows/:id/call, the
 * way the spec and what is known beyond it describe it: 401 for a wrong token,
 * 404 for an unknown flow, 400 for a flow without phone number, 201 otherwise.
 */
export async function startFakeAiFlowApi(options: FakeAiFlowApiOptions = {}): Promise<FakeAiFlowApi> {
  const flows = new Map(Object.entries(options.flows ?? {}));
  const overrides = new Map<string, { status: number; body?: string }>();
  for (const [id, flow] of flows) if (flow.respond) overrides.set(id, flow.respond);
  const calls: RecordedOutboundCall[] = [];
  let callCount = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const match = CALL_PATH.exec(path);
      const aiFlowId = match?.[1] === undefined ? undefined : safeDecode(match[1]);
      const body = parseBody(text);

      const answer = decide(req.method ?? 'GET', req.headers, aiFlowId, body);
      const call: RecordedOutboundCall = {
        method: req.method ?? 'GET',
        path,
        aiFlowId,
        headers: req.headers,
        body,
        status: answer.status,
        responseBody: answer.body,
      };
      calls.push(call);
      options.onCall?.(call);
      res.once('finish', () => options.onAnswered?.(call));
      send(res, answer.status, answer.body);
    });
  });

  function decide(
    method: string,
    headers: IncomingHttpHeaders,
    aiFlowId: string | undefined,
    body: unknown,
  ): { status: number; body: string } {
    if (aiFlowId === undefined) return { status: 404, body: json({ message: 'Not Found' }) };
    if (method !== 'POST') return { status: 405, body: json({ message: 'Method Not Allowed' }) };
    if (options.token !== undefined && headers.authorization !== `Bearer ${options.token}`) {
      return { status: 401, body: json({ message: 'Unauthorized' }) };
    }
    if (options.requireBearer && !/^Bearer \S/.test(headers.authorization ?? '')) {
      return { status: 401, body: json({ message: 'Unauthorized' }) };
    }
    const override = overrides.get(aiFlowId);
    if (override) return { status: override.status, body: override.body ?? '' };
    const flow = flows.get(aiFlowId) ?? options.defaultFlow;
    if (!flow || flow.exists === false) return { status: 404, body: json({ message: `AI flow ${aiFlowId} not found` }) };
    if (flow.phoneNumber === false) return { status: 400, body: json({ message: 'AI flow has no phone number' }) };
    // Not in the spec: the fake is strict about the body so that a client sending the wrong shape shows up in tests.
    const problem = bodyProblem(headers, body);
    if (problem) return { status: 422, body: json({ message: problem }) };
    callCount += 1;
    const { toPhoneNumber } = body as { toPhoneNumber: string };
    return { status: 201, body: json({ id: `call-${callCount}`, status: 'initiated', toPhoneNumber }) };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${urlHost(options.host ?? '127.0.0.1')}:${port}`,
    port,
    calls,
    setResponse(aiFlowId, status, body) {
      overrides.set(aiFlowId, body === undefined ? { status } : { status, body });
    },
    clearResponse(aiFlowId) {
      overrides.delete(aiFlowId);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function bodyProblem(headers: IncomingHttpHeaders, body: unknown): string | undefined {
  if (!headers['content-type']?.startsWith('application/json')) return 'Content-Type must be application/json';
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  const { billingDevice, toPhoneNumber } = body as Record<string, unknown>;
  if (typeof billingDevice !== 'string' || billingDevice === '') return 'billingDevice is required';
  if (typeof toPhoneNumber !== 'string' || !/^[1-9]\d{7,14}$/.test(toPhoneNumber)) {
    return 'toPhoneNumber must be E.164 digits without +';
  }
  return undefined;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': body.startsWith('{') ? 'application/json' : 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
