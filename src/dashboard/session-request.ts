import type { CookieOptions, Request } from 'express';
import { COOKIE_NAME, cookieOf, SECURE_COOKIE_NAME } from './session-cookie.js';

/**
 * `__Host-hotline_dashboard` over HTTPS (req.secure: TLS here, or X-Forwarded-Proto from a proxy
 * TRUST_PROXY trusts), `hotline_dashboard` over plain HTTP, where a browser may not keep a Secure
 * cookie. Each is read only over its own scheme.
 */
export function cookieName(req: Request): string {
  return req.secure ? SECURE_COOKIE_NAME : COOKIE_NAME;
}

export function sessionCookieOf(req: Request): string | undefined {
  return cookieOf(req.headers.cookie, cookieName(req));
}

/** `__Host-` demands Secure and Path=/ (Express's default) and no Domain. */
export function sessionCookieOptions(req: Request, maxAge?: number): CookieOptions {
  return { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/', ...(maxAge === undefined ? {} : { maxAge }) };
}
