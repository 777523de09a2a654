import { TOKEN_ADMIN, type Who } from '../staff/roles.js';
import type { SessionCookies } from './session-cookie.js';

/** How often a session's account is asked again, unless DASHBOARD_RECHECK_SECONDS says otherwise. */
export const RECHECK_MS = 30_000;

export interface StandingSession {
  readonly id: string;
  readonly who: Who;
}

/**
 * Whether a dashboard session still stands: in force (not logged out, not expired) and, for a staff
 * account, the account still there with the role it logged in with. The accounts are changed by
 * `npm run staff` in another process (on any replica's database), so nothing here is told of a
 * change: each session's account is asked again at most `everyMs` apart, by the requests (pages)
 * and by every long-lived response (live views, exports) on a timer of its own. A session found
 * changed is ended here, and `changed` closes what its person has open in this process at once.
 */
export class SessionStanding {
  private readonly checked = new Map<string, number>();

  constructor(
    private readonly sessions: SessionCookies,
    /** The account as it is now (undefined: removed); without accounts, only the session is checked. */
    private readonly account: ((who: Who) => Promise<Who | undefined>) | undefined,
    readonly everyMs: number,
    private readonly changed: (who: Who) => void,
  ) {}

  /** The session the cookie names while it stands; undefined once it does not. `fresh`: ask the account now, whenever it was last asked. */
  async of(cookie: string | undefined, now: number, fresh = false): Promise<StandingSession | undefined> {
    const session = await this.sessions.identityOf(cookie, now);
    if (session === undefined || !this.account || session.who.name === TOKEN_ADMIN.name) return session;
    if (!fresh && (this.checked.get(session.id) ?? -Infinity) > now - this.everyMs) return session;
    // A store briefly away does not log everyone out: the account is asked again next time.
    const current = await this.account(session.who).catch(() => session.who);
    if (current?.role !== session.who.role) {
      await this.sessions.end(cookie);
      this.checked.delete(session.id);
      this.changed(session.who);
      return undefined;
    }
    if (this.checked.size > 10_000) this.checked.clear();
    this.checked.set(session.id, now);
    return session;
  }
}
