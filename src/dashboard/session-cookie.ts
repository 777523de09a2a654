import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The dashboard's login, kept in a cookie the server can check without
 * storing anything: an expiry signed with a key made from the admin token.
 * A new ADMIN_TOKEN ends every session at once.
 */
export const COOKIE_NAME = 'hotline_dashboard';
export const SESSION_MS = 12 * 60 * 60 * 1000;

export class SessionCookies {
  private readonly key: Buffer;

  constructor(adminToken: string) {
    // The token itself never signs anything: a cookie leaking says nothing about it.
    this.key = createHmac('sha256', adminToken).update('hotline dashboard session v1').digest();
  }

  /** A cookie value good until `now + SESSION_MS`. */
  issue(now: number): string {
    const expires = String(now + SESSION_MS);
    return `${expires}.${this.sign(expires)}`;
  }

  /** Whether the value was issued here, with this token, and has not expired. */
  valid(value: string | undefined, now: number): boolean {
    if (!value) return false;
    const dot = value.indexOf('.');
    if (dot <= 0) return false;
    const expires = value.slice(0, dot);
    const presented = Buffer.from(value.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(expires), 'base64url');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return false;
    return /^\d+$/.test(expires) && Number(expires) > now;
  }

  private sign(expires: string): string {
    return createHmac('sha256', this.key).update(expires).digest('base64url');
  }
}

/** The value of one cookie of a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}
