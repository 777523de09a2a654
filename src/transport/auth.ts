import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Compares a presented secret with the expected one in constant time. Both
 * are hashed first so that neither their contents nor their lengths leak
 * through timing.
 */
export function secretMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function header(req: IncomingMessage, name: string): string | undefined {
  // Node lowercases incoming header names; a repeated header arrives as an array.
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The shared secret of a webhook request: X-API-TOKEN, as the spec says. */
export function webhookSecretOf(req: IncomingMessage): string | undefined {
  return header(req, 'x-api-token');
}

/**
 * The token of a WebSocket upgrade. The spec defines none; a URL configured
 * in the service's dashboard can carry `?token=`, proxies and other clients
 * may send X-API-TOKEN or Authorization: Bearer.
 */
export function wsTokenOf(req: IncomingMessage): string | undefined {
  const fromQuery = new URL(req.url ?? '/', 'http://localhost').searchParams.get('token');
  if (fromQuery) return fromQuery;
  const apiToken = header(req, 'x-api-token');
  if (apiToken) return apiToken;
  const authorization = header(req, 'authorization');
  const bearer = authorization?.match(/^Bearer\s+(.+)$/i);
  return bearer?.[1]?.trim();
}

/** The client address, from X-Forwarded-For only when a trusted proxy sets it. */
export function remoteAddressOf(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = header(req, 'x-forwarded-for')?.split(',')[0]?.trim();
    if (forwarded) return forwarded;
  }
  return req.socket.remoteAddress ?? 'unknown';
}
