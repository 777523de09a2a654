import type { Request, Response, Router } from 'express';
import { checkSecret } from '../transport/auth.js';
import { HttpError } from '../transport/http-error.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { html, type Html } from './html.js';
import { layout } from './layout.js';
import type { LiveViews } from './live-views.js';
import { formBody, rootOf, sendPage } from './respond.js';
import { SESSION_MS, type SessionCookies } from './session-cookie.js';
import { cookieName, sessionCookieOf, sessionCookieOptions } from './session-request.js';

/** The login form: the admin token, given once, becomes a session kept in the cookie. */
export function loginRoutes(router: Router, deps: Pick<DashboardDeps, 'gate' | 'logger'>, token: string, sessions: SessionCookies): void {
  router.get('/dashboard/login', (req, res) => void sendPage(res, loginPage(rootOf(req), undefined)));
  router.post('/dashboard/login', formBody, async (req: Request, res: Response) => {
    const presented = typeof req.body?.token === 'string' ? (req.body.token as string) : undefined;
    // As at every edge: an address out of failures is refused before the token is compared.
    try {
      await checkSecret(req, deps.gate, presented, token, 'admin token');
    } catch (error) {
      if (!(error instanceof HttpError) || (error.status !== 401 && error.status !== 429)) throw error;
      deps.logger.warn({ ip: req.ip, status: error.status }, 'dashboard login refused');
      if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
      res.status(error.status);
      const problem = error.status === 401 ? 'That is not the admin token.' : `Too many wrong tokens from this address: try again in ${error.retryAfterSeconds ?? 60} s.`;
      return sendPage(res, loginPage('', problem));
    }
    res.cookie(cookieName(req), sessions.issue(Date.now()), sessionCookieOptions(req, SESSION_MS));
    res.redirect(303, './');
  });
}

/** The logout: the session ends everywhere, its live views with it. */
export function logoutRoutes(router: Router, sessions: SessionCookies, liveViews: LiveViews): void {
  router.post('/dashboard/logout', (req, res) => {
    liveViews.closeAll(sessions.end(sessionCookieOf(req)));
    res.clearCookie(cookieName(req), sessionCookieOptions(req));
    res.redirect(303, 'login');
  });
}

function loginPage(root: string, problem: string | undefined): Html {
  return layout({
    title: 'Log in',
    root,
    body: html`<form method="post" action="${root}login" class="login">
  <h1>Hotline dashboard</h1>
  ${problem ? html`<p class="warning" role="alert">${problem}</p>` : ''}
  <label>Admin token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
  <button type="submit">Log in</button>
</form>`,
  });
}
