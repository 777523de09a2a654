import express, { type Router } from 'express';
import { assetRoutes, faviconRoutes } from './assets.js';
import { callRoutes } from './call-routes.js';
import { campaignRoutes } from './campaign-routes.js';
import { chartsRoutes } from './charts-routes.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { dashboardOff, sameOriginGate, securityHeaders, sessionGate, withSlash } from './gates.js';
import { historyRoutes } from './history-routes.js';
import { liveRoutes } from './live-routes.js';
import { LiveViews } from './live-views.js';
import { loginRoutes, logoutRoutes } from './login-routes.js';
import { numbersRoutes } from './numbers-shown.js';
import { promptsRoutes } from './prompts-routes.js';
import { SessionCookies } from './session-cookie.js';

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
  const sessions = new SessionCookies(token);
  // Live views open per session: a logout closes its own at once.
  const liveViews = new LiveViews();

  router.use('/dashboard', securityHeaders);
  // Before anything else, the login and the logout too: a page elsewhere on this host (another port,
  // a sibling subdomain) is "same site", so the browser would send the cookie with its forms.
  router.use('/dashboard', sameOriginGate(deps.logger));
  assetRoutes(router);
  loginRoutes(router, deps, token, sessions);
  router.get('/dashboard', withSlash);
  // Every page below needs a session in force; without one the browser goes to the login form.
  router.use('/dashboard', sessionGate(sessions));

  logoutRoutes(router, sessions, liveViews);
  numbersRoutes(router);
  liveRoutes(router, deps, sessions, liveViews);
  historyRoutes(router, deps);
  callRoutes(router, deps);
  campaignRoutes(router, deps);
  chartsRoutes(router, deps);
  promptsRoutes(router, deps);
  return router;
}
