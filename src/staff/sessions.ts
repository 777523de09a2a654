import type { Who } from './roles.js';

/**
 * The sessions in force, by id, with whom each is: the one place a logout is remembered. In this
 * process's memory (one process), or in the store, where every replica sees each login and logout.
 */
export interface SessionStore {
  /** Keeps a new session; `now` lets the store forget those expired. */
  add(id: string, expiresAt: number, now: number, who: Who): Promise<void>;
  /** Whose the session is, while it is in force. */
  get(id: string, now: number): Promise<Who | undefined>;
  delete(id: string): Promise<void>;
}
