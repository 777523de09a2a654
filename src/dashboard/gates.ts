import type { Request, RequestHandler, Response } from 'express';
import { roleAtLeast, TOKEN_ADMIN, type StaffRole, type Who } from '../staff/roles.js';
import type { Logger } from '../logger.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { pathOf, rootOf, sendPage } from './respond.js';
import { crossOriginProblem } from './same-origin.js';
import type { SessionStanding } from './session-standing.js';
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

/**
 * Lets through only a session in force (its id in res.locals.session, whose it is in res.locals.who);
 * without one the browser goes to the login form. A staff account's session is checked against the
 * account now and then (SessionStanding): one removed, or given another role, is logged out within
 * DASHBOARD_RECHECK_SECONDS.
 */
export function sessionGate(
  standing: SessionStanding,
  /** Who an authenticating proxy says is there (TRUST_PROXY's addresses only): no login of Hotline's own. */
  fromProxy?: (req: Request) => Who | undefined,
): RequestHandler {
  return async (req, res, next) => {
    const proxied = fromProxy?.(req);
    if (proxied) {
      // Keyed by the person: the live views a logout closes are this person's.
      res.locals.session = proxied.name;
      res.locals.who = proxied;
      res.locals.viaProxy = true;
      return next();
    }
    const session = await standing.of(sessionCookieOf(req), Date.now());
    if (session !== undefined) {
      res.locals.session = session.id;
      res.locals.who = session.who;
      return next();
    }
    refuse(req, res);
  };
}

function refuse(req: Request, res: Response): void {
  if (req.method === 'GET' && req.accepts(['html', 'json']) === 'html') return res.redirect(303, `${rootOf(req)}login`);
  res.status(401).json({ error: 'log in to the dashboard first' });
}

/** Who is signed in: set by sessionGate for every page behind it. */
export function whoOf(res: Response): Who {
  return (res.locals.who as Who | undefined) ?? TOKEN_ADMIN;
}

/** Lets through only someone with `role` or a higher one; the rest get 403 and are told what they may do. */
export function needs(role: StaffRole): RequestHandler {
  return (req, res, next) => {
    const who = whoOf(res);
    if (roleAtLeast(who.role, role)) return next();
    res.status(403);
    const text = `This needs the ${role} role; ${who.name} is a ${who.role}.`;
    if (req.accepts(['html', 'json']) !== 'html') return void res.json({ error: text });
    sendPage(res, layout({ title: 'Not allowed', section: 'calls', root: rootOf(req), role: who.role, body: html`<div class="login"><h1>Not allowed</h1><p role="alert">${text} Nothing was done.</p><p><a href="${rootOf(req)}calls">The calls</a></p></div>` }));
  };
}
