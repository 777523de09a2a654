/**
 * Who may reach Hotline and how often: the transports' secrets, the admin API's and /metrics' tokens,
 * the rate limits, the reverse proxy and the dashboard's sessions behind it. A group of config.ts's
 * environment schema, kept with the part of `Config` it fills so that access is read in one place.
 */
import { z } from 'zod';
import { STAFF_ROLES } from './staff/roles.js';
import { proxyAuthOf, trustProxySchema, type ProxyAuthSettings, type TrustProxy } from './proxy-settings.js';
import { int, text } from './config-values.js';
import { variableDocs } from './config-sections.js';

const headerName = /^[A-Za-z0-9-]+$/;

export const AccessEnv = z.object({
  WEBHOOK_SECRET: text.optional().register(variableDocs, {
    section: 'security',
    doc: `Shared secret of the AI flow's webhook settings. Every POST /webhook must carry it in X-API-TOKEN, else 401.`,
    unsetMeans: 'webhooks are open (a warning is logged at startup)',
  }),
  WS_TOKEN: text.optional().register(variableDocs, {
    section: 'security',
    doc: `Token for WebSocket connections (the spec defines none). When set, the upgrade must present it as ?token=…
      in the URL, as X-API-TOKEN, or as Authorization: Bearer …, else 401.`,
    unsetMeans: 'WebSocket upgrades are open',
  }),
  METRICS_TOKEN: text.optional().register(variableDocs, {
    section: 'operations',
    doc: 'Bearer token GET /metrics requires (at least 16 characters).',
    unsetMeans: '/metrics is open',
  }),
  ADMIN_TOKEN: text.optional().register(variableDocs, {
    section: 'outbound',
    doc: `Bearer token of Hotline's admin API (POST /api/calls, /api/campaigns, used by npm run call and npm run
      campaign), and the password of the dashboard at /dashboard. At least 16 characters (e.g. \`openssl rand -hex
      32\`): \`a\` is guessed in the first minute.`,
    unsetMeans: 'the API and the dashboard are off',
  }),
  RATE_LIMIT_WEBHOOK_PER_MINUTE: int('RATE_LIMIT_WEBHOOK_PER_MINUTE', 0, 6000).register(variableDocs, {
    section: 'security',
    doc: `Authenticated webhook requests per minute per client address; 0 turns the limit off. With several replicas on
      one DATABASE_URL this is for all of them together (each allows its share): the voice service is one client, so
      raise it with the load you run the replicas for.`,
  }),
  RATE_LIMIT_WS_PER_MINUTE: int('RATE_LIMIT_WS_PER_MINUTE', 0, 600).register(variableDocs, {
    section: 'security',
    doc: `Authenticated WebSocket upgrades (new calls) per minute per client address; 0 turns the limit off (for all
      replicas together, as above).`,
  }),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: int('RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 0, 30).register(variableDocs, {
    section: 'security',
    doc: `Missing or wrong secrets per minute per client address, one budget for every edge that checks one (webhook,
      WebSocket, dashboard login, /api/*, /metrics): 401 up to it, then 429 until the minute is over, the right secret
      from that address too (nothing is compared then). Counted apart from the service's requests, whose budget they
      never use up. 0: off.`,
  }),
  TRUST_PROXY: trustProxySchema.register(variableDocs, {
    section: 'security',
    doc: `Behind a reverse proxy, which X-Forwarded-For entries to believe: false (the socket's address), or the
      proxies' own addresses or subnets, separated by commas (10.0.0.5 or 10.0.0.0/24,loopback; also linklocal,
      uniquelocal). Entries a client wrote itself are never used. true, a hop count or a range of every address are
      refused at start: they would believe whoever reaches a replica directly (its pod IP, INTERNAL_URL). A trusted
      proxy's X-Forwarded-Proto and X-Forwarded-Host also tell the dashboard it is served over HTTPS (its cookie is
      then __Host- prefixed and Secure) and under which host (its check of where a form came from).`,
  }),
  PROXY_AUTH_USER_HEADER: text.regex(headerName, { error: 'PROXY_AUTH_USER_HEADER must be a header name, e.g. X-Forwarded-Email' }).optional().register(variableDocs, {
    section: 'dashboard',
    doc: `The header an authenticating reverse proxy names the person in, believed only from TRUST_PROXY's
      addresses.`,
    example: 'X-Forwarded-Email',
    unsetMeans: "Hotline's own login only",
  }),
  PROXY_AUTH_GROUPS_HEADER: text.regex(headerName, { error: 'PROXY_AUTH_GROUPS_HEADER must be a header name, e.g. X-Forwarded-Groups' }).optional().register(variableDocs, {
    section: 'dashboard',
    doc: "The header listing the person's groups, separated by commas or spaces.",
    example: 'X-Forwarded-Groups',
  }),
  PROXY_AUTH_ROLES: text.optional().register(variableDocs, {
    section: 'dashboard',
    doc: "Each group's role, as group=role pairs separated by commas (the highest of a person's groups applies).",
    example: 'hotline-admins=admin,support=operator',
  }),
  PROXY_AUTH_DEFAULT_ROLE: z.enum(STAFF_ROLES, { error: 'PROXY_AUTH_DEFAULT_ROLE must be viewer, operator or admin' }).default('viewer').register(variableDocs, {
    section: 'dashboard',
    doc: 'The role of a person none of whose groups is mapped: viewer, operator or admin.',
  }),
  DASHBOARD_RECHECK_SECONDS: int('DASHBOARD_RECHECK_SECONDS', 1, 30, ' of seconds')
    .refine((s) => s <= 60, { error: 'DASHBOARD_RECHECK_SECONDS must be at most 60' })
    .register(variableDocs, {
      section: 'dashboard',
      doc: `How often (seconds, 1–60) a staff login's account is asked again, by its pages and by each live view or
        export it has open: a removed account, or one given another role, is logged out and its open streams closed
        within this (a logout closes them at once).`,
    }),
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
