/**
 * Dashboard logins kept in the store, where every replica behind the balancer sees each login and
 * each logout. Only the session id's hash is kept: someone reading the table cannot make a cookie
 * of it (nor could they without the key the admin token gives, which signs every cookie).
 */
import { createHash } from 'node:crypto';
import type { SessionStore } from '../staff/sessions.js';
import { isStaffRole, type Who } from '../staff/roles.js';
import type { Db } from './schema.js';

/** Expired logins are cleared at most this often, by whichever replica logs someone in. */
const CLEAR_EVERY_MS = 10 * 60_000;

export class StoreSessions implements SessionStore {
  private clearedAt = 0;

  constructor(private readonly db: Db) {}

  async add(id: string, expiresAt: number, now: number, who: Who): Promise<void> {
    if (now - this.clearedAt > CLEAR_EVERY_MS) {
      this.clearedAt = now;
      await this.db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute();
    }
    await this.db.insertInto('dashboard_sessions').values({ id_hash: hashOf(id), expires_at: expiresAt, name: who.name, role: who.role }).execute();
  }

  async get(id: string, now: number): Promise<Who | undefined> {
    const row = await this.db.selectFrom('dashboard_sessions').select(['name', 'role', 'expires_at']).where('id_hash', '=', hashOf(id)).executeTakeFirst();
    if (!row || Number(row.expires_at) <= now || !isStaffRole(row.role)) return undefined;
    return { name: row.name, role: row.role };
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('id_hash', '=', hashOf(id)).execute();
  }
}

function hashOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}
