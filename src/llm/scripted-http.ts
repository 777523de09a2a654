/**
 * The scripted server's plain HTTP answers: OpenAI's error bodies, JSON responses and ids. Apart
 * from the chat exchange and the routes because both answer with them, and a client under test
 * must see exactly the bodies and headers a real provider sends.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from './chat-request.js';

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

export function errorFor(status: number, message?: string): ApiError {
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

export function randomId(prefix: string, length: number): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const byte of bytes) out += ALPHANUM[byte % ALPHANUM.length];
  return out;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, payload: unknown, requestId: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}
