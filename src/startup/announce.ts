import { isIP } from 'node:net';
import { sharedSecretsOf, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { redactUrlCredentials } from '../logger.js';
import { weakSecrets } from '../secret-strength.js';

/** What the announcement needs of the running server. */
export interface Listening {
  port: number;
  llmEndpoint: string;
  /** Where the other replicas reach this one (its internal listener); undefined when none is open. */
  internalUrl: string | undefined;
}

export interface StartupUrls {
  /** PUBLIC_URL without a trailing slash, else http://<bound address>. */
  base: string;
  /** Undefined when TRANSPORTS leaves that transport out. */
  websocket: string | undefined;
  webhook: string | undefined;
  health: string;
  /** Where people log in to see the calls; undefined without ADMIN_TOKEN (the dashboard is off). */
  dashboard: string | undefined;
}

const isAllInterfaces = (host: string): boolean => host === '0.0.0.0' || host === '::';
const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || host.startsWith('127.');
const hostForUrl = (host: string): string => (isIP(host) === 6 ? `[${host}]` : host);

/** The URLs to configure in the AI flow: PUBLIC_URL's when set, else the bound address's. */
export function startupUrls(config: Config, port: number): StartupUrls {
  const local = `http://${isAllInterfaces(config.host) ? 'localhost' : hostForUrl(config.host)}:${port}`;
  const base = config.publicUrl?.replace(/\/+$/, '') ?? local;
  // The token itself is a secret: the log shows where it goes, not what it is.
  const token = config.auth.wsToken ? '?token=<WS_TOKEN>' : '';
  return {
    base,
    websocket: config.transports.has('websocket') ? `${base.replace(/^http/, 'ws')}/ws${token}` : undefined,
    webhook: config.transports.has('webhook') ? `${base}/webhook` : undefined,
    health: `${base}/healthz`,
    dashboard: config.adminToken ? `${base}/dashboard/` : undefined,
  };
}

/**
 * The first line a person reads: where Hotline listens and what to configure, one URL per line,
 * and where the dashboard is, or, while it is off, how to turn it on.
 */
export function listeningMessage(config: Config, port: number, urls: StartupUrls): string {
  return [
    `Hotline is listening on ${hostForUrl(config.host)}:${port}`,
    urls.websocket && `  WebSocket URL for the AI flow: ${urls.websocket}`,
    urls.webhook && `  Webhook URL: ${urls.webhook}`,
    `  Health: ${urls.health}`,
    urls.dashboard ? `  Dashboard: ${urls.dashboard}` : `  Dashboard: off — set ADMIN_TOKEN (16+ random characters) to open it at ${urls.base}/dashboard/`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** Without PUBLIC_URL the printed URLs name this machine, which the voice service cannot reach. */
export function exposureAdvice(config: Config, port: number): string | undefined {
  if (config.publicUrl) return undefined;
  if (!isAllInterfaces(config.host) && !isLoopback(config.host)) return undefined;
  return [
    'PUBLIC_URL is not set: the URLs above are local, and the voice service cannot reach localhost.',
    '  Make Hotline reachable from the internet: a public host name, a reverse proxy with TLS, or a tunnel',
    `  (e.g. \`cloudflared tunnel --url http://localhost:${port}\` or \`ngrok http ${port}\`),`,
    '  then set PUBLIC_URL to that address (e.g. https://hotline.example.com) to print the URLs to configure.',
  ].join('\n');
}

function demoBanner(): string {
  const lines = [
    'DEMO MODE: no LLM is configured; replies come from a scripted model.',
    'Set OPENAI_API_KEY (and OPENAI_BASE_URL for endpoints other than OpenAI)',
    'and LLM_MODEL to talk to a real LLM. See .env.example.',
  ];
  const width = Math.max(...lines.map((l) => l.length));
  const rule = `  ${'*'.repeat(width + 6)}`;
  return ['', rule, ...lines.map((l) => `  *  ${l.padEnd(width)}  *`), rule].join('\n');
}

/** Logs what a person starting Hotline needs to know, and what is missing for production. */
export function announceStartup(logger: Logger, config: Config, listening: Listening): void {
  const urls = startupUrls(config, listening.port);
  logger.info(
    {
      websocketUrl: urls.websocket,
      webhookUrl: urls.webhook,
      healthUrl: urls.health,
      dashboardUrl: urls.dashboard,
      llmEndpoint: redactUrlCredentials(listening.llmEndpoint),
      internalUrl: listening.internalUrl,
      model: config.llm.model,
      promptsDir: config.promptsDir,
      transcriptsDir: config.transcriptsDir,
      store: config.databaseUrl ? `postgres ${redactUrlCredentials(config.databaseUrl)}` : `sqlite ${config.databaseFile}`,
    },
    listeningMessage(config, listening.port, urls),
  );
  const advice = exposureAdvice(config, listening.port);
  if (advice) logger.warn(advice);
  if (urls.webhook && !config.auth.webhookSecret) {
    logger.warn("WEBHOOK_SECRET is not set: anyone who knows the URL can post webhook events. Set it to the AI flow's shared secret.");
  }
  if (urls.websocket && !config.auth.wsToken) {
    logger.warn('WS_TOKEN is not set: WebSocket connections are not authenticated. Set it and add ?token=… to the WebSocket URL.');
  }
  // NODE_ENV=production refuses these at loadConfig; anywhere else they are said plainly, once each.
  for (const weak of weakSecrets(sharedSecretsOf(config))) logger.warn(`${weak}. Anyone may guess it; NODE_ENV=production refuses to start with it.`);
  if (config.adminToken) {
    const { apiUrl, accessToken } = config.outbound;
    logger.info(
      { adminApi: `${urls.base}/api/calls`, outboundConfigured: Boolean(apiUrl && accessToken) },
      apiUrl && accessToken
        ? 'outbound calls: POST /api/calls (npm run call) is on'
        : 'admin API is on, but outbound calls need AIFLOW_API_URL and AIFLOW_ACCESS_TOKEN',
    );
  }
  if (config.llm.mode === 'demo') logger.warn(demoBanner());
}
