import type { Request } from 'express';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Why a request that may change something (a POST: a hangup, a transfer, a
 * logout, …) did not come from the dashboard's own pages; undefined when it did.
 *
 * SameSite cookies do not stop this: a page on another port or a sibling
 * subdomain of the same host is "same site", and the browser sends the
 * cookie along. What the browser says about where the request came from
 * decides instead, the way Go's CrossOriginProtection does:
 *
 * - `Sec-Fetch-Site` (every current browser sends it, and no page can forge
 *   it): only `same-origin`, or `none` (typed or bookmarked by the user), passes.
 * - Without it, `Origin` (older browsers): its host must be the host the
 *   request was sent to, and its scheme this one or https (a TLS proxy that
 *   TRUST_PROXY does not trust makes the request look like http).
 * - Neither: not a browser, so no one's cookie was taken along without them
 *   knowing; a script holding the cookie could send anything anyway.
 *
 * The host is the request's own Host header (a path prefix changes nothing),
 * or X-Forwarded-Host when TRUST_PROXY trusts the proxy (Express's req.host):
 * a proxy that rewrites Host needs TRUST_PROXY for browsers without Sec-Fetch-Site.
 */
export function crossOriginProblem(req: Request): string | undefined {
  if (SAFE_METHODS.has(req.method)) return undefined;
  const site = req.get('sec-fetch-site');
  if (site !== undefined) {
    return site === 'same-origin' || site === 'none' ? undefined : `sent from another site or origin (Sec-Fetch-Site: ${site.slice(0, 20)})`;
  }
  const origin = req.get('origin');
  if (origin === undefined) return undefined;
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return 'sent from an origin that cannot be read';
  }
  const host = req.host?.toLowerCase();
  const sameHost = host !== undefined && from.host === host;
  const sameScheme = from.protocol === `${req.protocol}:` || from.protocol === 'https:';
  return sameHost && sameScheme ? undefined : 'sent from another origin (Origin does not match the dashboard)';
}
