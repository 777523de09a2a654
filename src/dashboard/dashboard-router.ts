import express, { type Router } from 'express';
import { assetRoutes, faviconRoutes } from './assets.js';
import { callRoutes } from './call-routes.js';
import { campaignRoutes } from './campaign-routes.js';
import { chartsRoutes } from './charts-routes.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { roleAtLeast } from '../staff/roles.js';
import { auditRoutes } from './audit-routes.js';
import { dashboardOff, needs, sameOriginGate, securityHeaders, sessionGate, whoOf, withSlash } from './gates.js';
import { peopleRoutes } from './people-routes.js';
import { dashboardAudit } from './staff-audit.js';
import { historyRoutes } from './history-routes.js';
import { liveRoutes } from './live-routes.js';
import { OpenStreams } from './open-streams.js';
import { loginRoutes, logoutRoutes } from './login-routes.js';
import { numbersRoutes } from './numbers-shown.js';
import { promptsRoutes } from './prompts-routes.js';
import { SessionCookies } from './session-cookie.js';
import { RECHECK_MS, SessionStanding } from './session-standing.js';

export type { DashboardDeps } from './dashboard-deps.js';

/**
 * The dashboard under /dashboard: live calls, the history, each call's story.
 * Server-rendered pages and a few small scripts; every link is relative, so it
 * works under whatever prefix a reverse proxy adds. Behind the admin token,
 * given once at a login form and kept as a session in an HttpOnly, SameSite
 * cookie; whatever may change something must come from the dashboard's own pages.
 *
 * Here only the order: the gates first, each before what it guards, then each group of routes.
 */
export function dashboardRouter(deps: DashboardDeps): Router {
  const router = express.Router();
  const token = deps.adminToken;
  // Before anything else: every page names it, the page saying the dashboard is off too.
  faviconRoutes(router);
  if (token === undefined) {
    router.use('/dashboard', dashboardOff);
    return router;
  }
  const sessions = new SessionCookies(token, deps.sessionStore);
  // Live views and exports open, per session and person: a logout, or an account found changed, closes them at once.
  const streams = new OpenStreams();
  const account = deps.staff && ((who: { name: string }) => deps.staff!.get(who.name));
  const standing = new SessionStanding(sessions, account, deps.accountRecheckMs ?? RECHECK_MS, (who) => streams.closePerson(who.name));
  const guards = { standing, streams, logger: deps.logger };

  router.use('/dashboard', securityHeaders);
  // Before anything else, the login and the logout too: a page elsewhere on this host (another port,
  // a sibling subdomain) is "same site", so the browser would send the cookie with its forms.
  router.use('/dashboard', sameOriginGate(deps.logger));
  assetRoutes(router);
  loginRoutes(router, deps, token, sessions, deps.audit);
  router.get('/dashboard', withSlash);
  // Every page below needs a session in force; without one the browser goes to the login form.
  router.use('/dashboard', sessionGate(standing, deps.proxyIdentity));
  const audit = dashboardAudit(deps.audit);
  // Someone the proxy let in has logged in there: on record here once in a while, as a look is.
  router.use('/dashboard', (req, res, next) => (res.locals.viaProxy ? void audit(req, res, { action: 'log_in', detail: { via: 'proxy' } }).then(() => next(), next) : next()));

  // What each role may open, before the routes themselves (src/privacy/roles.ts): a request straight to
  // a route meets its gate as a link would. A viewer reads the calls and charts, with numbers masked.
  router.get('/dashboard/', (req, res, next) => (roleAtLeast(whoOf(res).role, 'operator') ? next() : res.redirect(303, 'calls')));
  router.get('/dashboard/live', needs('operator'));
  router.post(['/dashboard/calls/:sessionId/transfer', '/dashboard/calls/:sessionId/hangup', '/dashboard/redeliver', '/dashboard/calls/:sessionId/redeliver', '/dashboard/calls.csv'], needs('operator'));
  router.use(['/dashboard/campaigns', '/dashboard/prompts', '/dashboard/people', '/dashboard/audit'], needs('admin'));

  logoutRoutes(router, sessions, streams);
  numbersRoutes(router, audit);
  liveRoutes(router, deps, guards);
  historyRoutes(router, deps, guards);
  callRoutes(router, deps, audit);
  campaignRoutes(router, deps, audit);
  chartsRoutes(router, deps);
  promptsRoutes(router, deps);
  peopleRoutes(router, deps, audit);
  auditRoutes(router, deps);
  return router;
}
