import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from './http-error.js';
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';
import type { TrustProxy } from '../proxy-settings.js';
import { ConfigError } from '../errors.js';
import type { FailureBudget } from './rate-limit.js';

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

/** The token of `Authorization: Bearer <token>`. */
export function bearerTokenOf(req: IncomingMessage): string | undefined {
  const bearer = header(req, 'authorization')?.match(/^Bearer\s+(.+)$/i);
  return bearer?.[1]?.trim();
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
  return bearerTokenOf(req);
}

/**
 * Whether the hop at `address` (0 = the socket's peer, 1 = the X-Forwarded-For
 * entry it appended, …) is a proxy whose X-Forwarded-For entry is believed.
 * Express's "trust proxy" takes the same function, so the webhook's `req.ip`
 * and the WebSocket upgrade see the same client.
 */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * Compiles TRUST_PROXY once; an address proxy-addr cannot read stops the start with what to fix.
 * Only named addresses are trusted, never a count of hops: a count trusts whoever connects, so a
 * client reaching a replica directly would pick its own address (and failure budget) by writing it.
 */
export function compileProxyTrust(setting: TrustProxy): ProxyTrust {
  if (setting === false) return () => false;
  try {
    return proxyAddr.compile(setting);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`TRUST_PROXY: ${reason} (expected addresses or subnets such as 10.0.0.1,10.1.0.0/16,loopback)`);
  }
}

/**
 * The client address: X-Forwarded-For is read from the right, and only as far
 * as trusted proxies wrote it. The leftmost entry is whatever the client chose
 * to send, so keying a limit on it would let anyone pick their own bucket.
 */
export function clientAddressOf(req: IncomingMessage, trust: ProxyTrust): string {
  // Undefined (typed string) when the socket is already gone; those share one bucket.
  return proxyAddr(req, trust) || 'unknown';
}

/** Where every shared secret an HTTP request presents is checked: one failure budget per client address. */
export interface SecretGate {
  readonly failures: FailureBudget;
  /** Which X-Forwarded-For hops name the client; the same function as the transports'. */
  readonly proxyTrust: ProxyTrust;
}

/**
 * Checks the secret a request presents against the expected one. An address
 * out of failures is refused with 429 before anything is compared (so the
 * right secret from it is refused too, and a guess learns nothing); a wrong or
 * missing secret is counted against its address, then refused with 401.
 */
export async function checkSecret(req: IncomingMessage, gate: SecretGate, presented: string | undefined, expected: string, what: string): Promise<void> {
  const address = clientAddressOf(req, gate.proxyTrust);
  const wait = await gate.failures.exhausted(address);
  if (wait > 0) throw new HttpError(429, `too many wrong secrets from this address: try again in ${wait} s`, { retryAfterSeconds: wait });
  if (secretMatches(presented, expected)) return;
  await gate.failures.spend(address);
  throw new HttpError(401, `missing or wrong ${what}`);
}

/** How an admin API that is off begins its answer: the command-line tools tell it from "not Hotline" by it. */
export const ADMIN_API_OFF = 'the admin API is off';
// Said to whoever sent the request, who may have set ADMIN_TOKEN for a command-line tool only: the server needs it.
const ADMIN_API_OFF_MESSAGE = `${ADMIN_API_OFF}: this Hotline was started without ADMIN_TOKEN; set ADMIN_TOKEN where Hotline runs (its environment or .env) and restart it`;

/**
 * Guards Hotline's own admin API (calls, campaigns, reports): off (404) without
 * ADMIN_TOKEN, 401 without the right `Authorization: Bearer` token, 429 for an
 * address that has run out of failures.
 */
export function requireAdminToken(token: string | undefined, gate: SecretGate) {
  return async function requireAdminToken(req: IncomingMessage, _res: unknown, next: () => void): Promise<void> {
    if (token === undefined) throw new HttpError(404, ADMIN_API_OFF_MESSAGE);
    await checkSecret(req, gate, bearerTokenOf(req), token, 'Authorization: Bearer token');
    next();
  };
}
