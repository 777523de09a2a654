import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import { html } from './html.js';
import { layout } from './layout.js';
import { pathOf, rootOf, sendPage } from './respond.js';
import { crossOriginProblem } from './same-origin.js';
import type { SessionCookies } from './session-cookie.js';
import { sessionCookieOf } from './session-request.js';

/*
 * What every dashboard request passes before its route. The order they run in is the router's
 * (dashboard-router.ts): it is what keeps them safe.
 */

/** Without an admin token every page says how to turn the dashboard on. */
export const dashboardOff: RequestHandler = (_req, res) => {
  res.status(404).type('html').send(
    layout({ title: 'Dashboard off', root: '', body: html`<div class="login"><h1>The dashboard is off</h1><p>Set <code>ADMIN_TOKEN</code> and restart Hotline to turn it on.</p></div>` }).text,
  );
};

/** Nothing of the dashboard is cached or framed, and its pages load nothing from elsewhere. */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
  });
  next();
};

/** Refuses a request that may change something unless it came from the dashboard's own pages (see same-origin.ts). */
export function sameOriginGate(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const problem = crossOriginProblem(req);
    if (problem === undefined) return next();
    logger.warn({ method: req.method, path: pathOf(req), problem }, 'dashboard request from elsewhere refused');
    res.status(403);
    sendPage(res, layout({ title: 'Refused', root: rootOf(req), body: html`<div class="login"><h1>Refused</h1><p role="alert">This request was ${problem}: only the dashboard's own pages may change anything. Nothing was done.</p></div>` }));
  };
}

/** /dashboard without its slash: relative links would resolve one level too high. */
export const withSlash: RequestHandler = (req, res, next) => {
  if (pathOf(req) === '/dashboard') return res.redirect(301, 'dashboard/');
  next();
};

/** Lets through only a session in force (kept in res.locals.session); without one the browser goes to the login form. */
export function sessionGate(sessions: SessionCookies): RequestHandler {
  return (req, res, next) => {
    const session = sessions.sessionOf(sessionCookieOf(req), Date.now());
    if (session !== undefined) {
      res.locals.session = session;
      return next();
    }
    if (req.method === 'GET' && req.accepts(['html', 'json']) === 'html') return res.redirect(303, `${rootOf(req)}login`);
    res.status(401).json({ error: 'log in to the dashboard first' });
  };
}
