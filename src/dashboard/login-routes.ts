import type { Request, Response, Router } from 'express';
import { bounded } from '../privacy/audit-bounds.js';
import type { AuditLog } from '../privacy/audit-log.js';
import { MAX_STAFF_NAME_LENGTH } from '../store/staff-repository.js';
import { roleAtLeast, TOKEN_ADMIN, type Who } from '../staff/roles.js';
import { checkSecret, clientAddressOf } from '../transport/auth.js';
import { HttpError } from '../transport/http-error.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { html, type Html } from '../html.js';
import { layout } from './layout.js';
import type { OpenStreams } from './open-streams.js';
import { RefusalsNoted } from './refusals-noted.js';
import { formBody, rootOf, sendPage } from './respond.js';
import { SESSION_MS, type SessionCookies } from './session-cookie.js';
import { cookieName, sessionCookieOf, sessionCookieOptions } from './session-request.js';

/**
 * The login form: a staff account's name and password, or (the name left empty) the admin token, the
 * first admin's way in. Either, given once, becomes a session kept in the cookie. A wrong password
 * spends the same failure budget as a wrong token, and an unknown name costs the same time as a
 * wrong password, so neither a name nor a password can be guessed faster than the other.
 */
export function loginRoutes(router: Router, deps: Pick<DashboardDeps, 'gate' | 'logger' | 'staff'>, token: string, sessions: SessionCookies, audit: AuditLog | undefined): void {
  const refusals = new RefusalsNoted();
  router.get('/dashboard/login', (req, res) => void sendPage(res, loginPage(rootOf(req), undefined, deps.staff !== undefined)));
  router.post('/dashboard/login', formBody, async (req: Request, res: Response) => {
    const field = (name: string): string | undefined => (typeof req.body?.[name] === 'string' ? (req.body[name] as string) : undefined);
    const name = field('name')?.trim().toLowerCase() ?? '';
    const secret = field('password') ?? field('token');
    const address = clientAddressOf(req, deps.gate.proxyTrust);
    let who: Who | undefined;
    try {
      if (name === '' || !deps.staff) {
        // As at every edge: an address out of failures is refused before the token is compared.
        await checkSecret(req, deps.gate, secret, token, 'admin token');
        who = TOKEN_ADMIN;
      } else {
        const wait = await deps.gate.failures.exhausted(address);
        if (wait > 0) throw new HttpError(429, `too many wrong passwords from this address: try again in ${wait} s`, { retryAfterSeconds: wait });
        who = await deps.staff.check(name, secret ?? '');
        if (!who) {
          await deps.gate.failures.spend(address);
          throw new HttpError(401, 'wrong name or password');
        }
      }
    } catch (error) {
      if (!(error instanceof HttpError) || (error.status !== 401 && error.status !== 429)) throw error;
      // A wrong password is on record each time (the budget bounds how often); a try refused unheard, once per window.
      if (error.status === 401 || refusals.first(address, error.retryAfterSeconds ?? 60)) {
        const staff = name ? bounded(name, MAX_STAFF_NAME_LENGTH + 1) : undefined;
        deps.logger.warn({ ip: req.ip, status: error.status, staff }, 'dashboard login refused');
        const detail: Record<string, number> = error.status === 429 ? { status: 429, refused_for_s: error.retryAfterSeconds ?? 60 } : { status: 401 };
        await audit?.record({ actor: staff ?? TOKEN_ADMIN.name, role: 'none', action: 'log_in_failed', source: req.ip, detail });
      }
      if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
      res.status(error.status);
      const problem =
        error.status === 401
          ? name === ''
            ? 'That is not the admin token.'
            : 'Wrong name or password.'
          : `Too many wrong attempts from this address: try again in ${error.retryAfterSeconds ?? 60} s.`;
      return sendPage(res, loginPage('', problem, deps.staff !== undefined));
    }
    await audit?.record({ actor: who.name, role: who.role, action: 'log_in', source: req.ip });
    res.cookie(cookieName(req), await sessions.issue(Date.now(), who), sessionCookieOptions(req, SESSION_MS));
    // A viewer has no live view: the calls are where they start.
    res.redirect(303, roleAtLeast(who.role, 'operator') ? './' : 'calls');
  });
}

/** The logout: the session ends everywhere, its live views and exports with it. */
export function logoutRoutes(router: Router, sessions: SessionCookies, streams: OpenStreams): void {
  router.post('/dashboard/logout', async (req, res) => {
    streams.closeSession(await sessions.end(sessionCookieOf(req)));
    res.clearCookie(cookieName(req), sessionCookieOptions(req));
    res.redirect(303, 'login');
  });
}

function loginPage(root: string, problem: string | undefined, accounts: boolean): Html {
  return layout({
    title: 'Log in',
    root,
    body: html`<form method="post" action="${root}login" class="login">
  <h1>Hotline dashboard</h1>
  ${problem ? html`<p class="warning" role="alert">${problem}</p>` : ''}
  ${accounts ? html`<label>Name <input name="name" autocomplete="username" autofocus></label>` : ''}
  <label>${accounts ? 'Password' : 'Admin token'} <input type="password" name="password" autocomplete="current-password" required${accounts ? '' : html` autofocus`}></label>
  ${accounts ? html`<p class="muted">Without a name, the password is the admin token.</p>` : ''}
  <button type="submit">Log in</button>
</form>`,
  });
}
