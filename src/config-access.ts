/**
 * Who may reach Hotline and how often: the transports' secrets, the admin API's and /metrics' tokens,
 * the rate limits, the reverse proxy and the dashboard's sessions behind it. A group of config.ts's
 * environment schema, kept with the part of `Config` it fills so that access is read in one place.
 */
import { z } from 'zod';
import { STAFF_ROLES } from './staff/roles.js';
import { proxyAuthOf, trustProxySchema, type ProxyAuthSettings, type TrustProxy } from './proxy-settings.js';
import { int, text } from './config-values.js';

const headerName = /^[A-Za-z0-9-]+$/;

export const AccessEnv = z.object({
  WEBHOOK_SECRET: text.optional(),
  WS_TOKEN: text.optional(),
  METRICS_TOKEN: text.optional(),
  ADMIN_TOKEN: text.optional(),
  RATE_LIMIT_WEBHOOK_PER_MINUTE: int('RATE_LIMIT_WEBHOOK_PER_MINUTE', 0, 6000),
  RATE_LIMIT_WS_PER_MINUTE: int('RATE_LIMIT_WS_PER_MINUTE', 0, 600),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: int('RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 0, 30),
  TRUST_PROXY: trustProxySchema,
  PROXY_AUTH_USER_HEADER: text.regex(headerName, { error: 'PROXY_AUTH_USER_HEADER must be a header name, e.g. X-Forwarded-Email' }).optional(),
  PROXY_AUTH_GROUPS_HEADER: text.regex(headerName, { error: 'PROXY_AUTH_GROUPS_HEADER must be a header name, e.g. X-Forwarded-Groups' }).optional(),
  PROXY_AUTH_ROLES: text.optional(),
  PROXY_AUTH_DEFAULT_ROLE: z.enum(STAFF_ROLES, { error: 'PROXY_AUTH_DEFAULT_ROLE must be viewer, operator or admin' }).default('viewer'),
  DASHBOARD_RECHECK_SECONDS: int('DASHBOARD_RECHECK_SECONDS', 1, 30, ' of seconds').refine((s) => s <= 60, { error: 'DASHBOARD_RECHECK_SECONDS must be at most 60' }),
});

export interface AccessConfig {
  auth: {
    /** Shared secret the service sends in X-API-TOKEN with every webhook request. */
    webhookSecret: string | undefined;
    /** Token a WebSocket upgrade must present (?token=, X-API-TOKEN or Authorization: Bearer). */
    wsToken: string | undefined;
    /** Bearer token GET /metrics requires; unset leaves it open. */
    metricsToken: string | undefined;
  };
  /** Requests per minute per remote address; 0 turns the limit off. */
  rateLimit: { webhookPerMinute: number; wsUpgradesPerMinute: number; authFailuresPerMinute: number };
  /** Behind a reverse proxy: which X-Forwarded-For entries name the client. */
  trustProxy: TrustProxy;
  /** Bearer token of Hotline's own admin API (POST /api/calls); unset turns that API off. */
  adminToken: string | undefined;
  /** An authenticating reverse proxy's word for who uses the dashboard; undefined: Hotline's own login only. */
  proxyAuth: ProxyAuthSettings | undefined;
  /** How often a dashboard session's account is asked again: a removed or re-roled one is logged out, its streams closed, within it. */
  dashboardRecheckMs: number;
}

export function accessConfigOf(e: z.infer<typeof AccessEnv>): AccessConfig {
  return {
    auth: { webhookSecret: e.WEBHOOK_SECRET, wsToken: e.WS_TOKEN, metricsToken: e.METRICS_TOKEN },
    rateLimit: {
      webhookPerMinute: e.RATE_LIMIT_WEBHOOK_PER_MINUTE,
      wsUpgradesPerMinute: e.RATE_LIMIT_WS_PER_MINUTE,
      authFailuresPerMinute: e.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
    },
    trustProxy: e.TRUST_PROXY,
    adminToken: e.ADMIN_TOKEN,
    proxyAuth: proxyAuthOf(e.PROXY_AUTH_USER_HEADER, e.PROXY_AUTH_GROUPS_HEADER, e.PROXY_AUTH_ROLES, e.PROXY_AUTH_DEFAULT_ROLE, e.TRUST_PROXY),
    dashboardRecheckMs: e.DASHBOARD_RECHECK_SECONDS * 1000,
  };
}
