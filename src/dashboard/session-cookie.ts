import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { TOKEN_ADMIN, type Who } from '../staff/roles.js';
import type { SessionStore } from '../staff/sessions.js';

/**
 * The dashboard's logins. The cookie carries a random session id and its
 * expiry, signed with a key made from the admin token; the server keeps the
 * ids in force, so logging out ends a session everywhere at once, and a copy
 * of the cookie is worth nothing after it. A new ADMIN_TOKEN ends every
 * session too (the signature no longer fits).
 *
 * The ids live in this process's memory (a restart logs everyone out, which
 * costs a login and keeps no revoked cookie alive; a list of revoked cookies
 * instead would forget them at a restart and let them in again), or, where
 * several replicas share PostgreSQL, in the store: a login holds on every
 * replica behind the balancer, and a logout ends it on all of them.
 */
export const COOKIE_NAME = 'hotline_dashboard';
/**
 * Over HTTPS the cookie is `__Host-` prefixed: the browser then takes it only
 * with Secure, for the whole host and from the host itself — a sibling
 * subdomain or a plain-HTTP page cannot set or overwrite it.
 */
export const SECURE_COOKIE_NAME = `__Host-${COOKIE_NAME}`;
export const SESSION_MS = 12 * 60 * 60 * 1000;
/** Logins kept at most: the oldest gives way. Only someone with the admin token can make one. */
const MAX_SESSIONS = 1000;


/** One process's sessions. */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, { expires: number; who: Who }>();

  async add(id: string, expiresAt: number, now: number, who: Who): Promise<void> {
    for (const [old, { expires }] of this.sessions) if (expires <= now) this.sessions.delete(old);
    // A Map keeps insertion order: the first key is the oldest login.
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(id, { expires: expiresAt, who });
  }

  async get(id: string, now: number): Promise<Who | undefined> {
    const session = this.sessions.get(id);
    return session !== undefined && session.expires > now ? session.who : undefined;
  }

  async delete(id: string): Promise<void> {
    this.sessions.delete(id);
  }
}

export class SessionCookies {
  private readonly key: Buffer;

  constructor(
    adminToken: string,
    private readonly store: SessionStore = new MemorySessionStore(),
  ) {
    // The token itself never signs anything: a cookie leaking says nothing about it.
    this.key = createHmac('sha256', adminToken).update('hotline dashboard session v2').digest();
  }

  /** A new session of `who`, good until `now + SESSION_MS` or its logout; the cookie's value. */
  async issue(now: number, who: Who = TOKEN_ADMIN): Promise<string> {
    const id = randomBytes(18).toString('base64url');
    const expires = now + SESSION_MS;
    await this.store.add(id, expires, now, who);
    const payload = `${id}.${expires}`;
    return `${payload}.${this.sign(payload)}`;
  }

  /** The session id of a value issued here, with this token, that is still in force; else undefined. */
  async sessionOf(value: string | undefined, now: number): Promise<string | undefined> {
    return (await this.identityOf(value, now))?.id;
  }

  /** The session in force a value names, and whose it is. */
  async identityOf(value: string | undefined, now: number): Promise<{ id: string; who: Who } | undefined> {
    const session = this.read(value);
    // A forged or expired cookie is refused without asking the store.
    if (!session || session.expires <= now) return undefined;
    const who = await this.store.get(session.id, now);
    return who && { id: session.id, who };
  }

  /** Whether the value names a session in force. */
  async valid(value: string | undefined, now: number): Promise<boolean> {
    return (await this.sessionOf(value, now)) !== undefined;
  }

  /** Logs the session out: its cookie, and every copy of it, is refused from now on. */
  async end(value: string | undefined): Promise<string | undefined> {
    const session = this.read(value);
    if (session) await this.store.delete(session.id);
    return session?.id;
  }

  /** The id and expiry of a value whose signature fits. */
  private read(value: string | undefined): { id: string; expires: number } | undefined {
    const match = value?.match(/^([\w-]{24})\.(\d{1,15})\.([\w-]{43})$/);
    if (!match) return undefined;
    const [, id, expires, signature] = match as unknown as [string, string, string, string];
    const presented = Buffer.from(signature, 'base64url');
    const expected = Buffer.from(this.sign(`${id}.${expires}`), 'base64url');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
    return { id, expires: Number(expires) };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
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
