import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { weakSecrets, type SharedSecret } from './secret-strength.js';
import { headerSecrets } from './telemetry/tracing-settings.js';
import { int, portNumber, text, url } from './config-values.js';
import { variableDocs } from './config-sections.js';
import { transportsConfigOf, TransportsEnv, type TransportsConfig } from './config-transports.js';
import { llmConfigOf, LlmEnv, type LlmConfig } from './config-llm.js';
import { storeConfigOf, StoreEnv, type StoreConfig } from './config-store.js';
import { callsConfigOf, CallsEnv, checkCallSecurity, type CallsConfig } from './config-calls.js';
import { accessConfigOf, AccessEnv, type AccessConfig } from './config-access.js';
import { privacyConfigOf, PrivacyEnv, type PrivacyConfig } from './config-privacy.js';
import { knowledgeConfigOf, KnowledgeEnv, type KnowledgeConfig } from './config-knowledge.js';
import { languagesConfigOf, LanguagesEnv, type LanguagesConfig } from './config-languages.js';

// Their home is beside the settings they type; importers keep naming config.ts.
export type { Transport } from './config-transports.js';
export type { TransferConfig } from './config-calls.js';

const projectRoot = path.resolve(import.meta.dirname, '..');

/** The process's own settings; every other group lives in a src/config-*.ts file of its own. */
const CoreEnv = z.object({
  NODE_ENV: text.default('development').register(variableDocs, {
    section: 'server',
    doc: `development, production or test. In production Hotline refuses to start without an LLM, refuses a secret
      that can be guessed, and refuses to start with outbound calls on (ADMIN_TOKEN and AIFLOW_*) while a served
      transport is unauthenticated.`,
  }),
  PORT: portNumber('PORT').default(3000).register(variableDocs, {
    section: 'server',
    doc: 'Port for HTTP and WebSocket (one port serves both), 1–65535; 0 picks any free port.',
  }),
  HOST: text.default('0.0.0.0').register(variableDocs, {
    section: 'server',
    doc: 'Interface to bind; 0.0.0.0 listens on all of them.',
  }),
  PUBLIC_URL: url('PUBLIC_URL', 'https://hotline.example.com').register(variableDocs, {
    section: 'server',
    doc: `Public base URL as the voice service reaches Hotline (a reverse proxy with TLS, or a tunnel such as
      \`cloudflared tunnel --url http://localhost:3000\`). The startup log prints the WebSocket and webhook URLs with
      it; without it Hotline warns that localhost is unreachable.`,
    example: 'https://hotline.example.com',
  }),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info')
    .register(variableDocs, {
      section: 'server',
      doc: 'fatal, error, warn, info, debug, trace or silent. What callers say is logged only at debug.',
    }),
  MAX_CALLS: int('MAX_CALLS', 1, 2000).register(variableDocs, {
    section: 'operations',
    doc: 'Calls at once; beyond it new WebSocket upgrades and webhook session_starts get 503 (and /readyz 503).',
  }),
  CALL_IDLE_TIMEOUT_MS: int('CALL_IDLE_TIMEOUT_MS', 0, 10 * 60 * 1000, ' of milliseconds').register(variableDocs, {
    section: 'operations',
    doc: `A call with no event for this many milliseconds hears prompts/idle-goodbye.md, is hung up after it and its
      socket closed; 0 never.`,
  }),
  SHUTDOWN_GRACE_MS: int('SHUTDOWN_GRACE_MS', 0, 30_000, ' of milliseconds').register(variableDocs, {
    section: 'operations',
    doc: `On SIGTERM or SIGINT: calls in progress may finish for this many milliseconds, then they are ended,
      transcripts flushed, and the process exits 0. New calls are refused at once. A second SIGINT or SIGTERM exits at
      once (code 130 or 143).`,
  }),
  SHUTDOWN_NOTICE_MS: int('SHUTDOWN_NOTICE_MS', 0, 10_000, ' of milliseconds').register(variableDocs, {
    section: 'operations',
    doc: `This many milliseconds before that deadline, callers still on the line hear prompts/shutdown-transfer.md and
      go to TRANSFER_TARGET, or without one hear prompts/shutdown-goodbye.md and are hung up on.`,
  }),
  PROMPTS_DIR: text.default(path.join(projectRoot, 'prompts')).register(variableDocs, {
    section: 'calls',
    doc: `Folder of prompt files (system.md, greeting.md, error.md, …; docs/prompts.md lists them). Edits, a replaced folder and
      ConfigMap updates apply from the next call.`,
  }),
  TZ: text.optional().register(variableDocs, {
    section: 'calls',
    doc: `Time zone of the {{date}}, {{time}} and {{weekday}} placeholders (an IANA name). Node reads it too, as the
      process's own time zone.`,
    example: 'Europe/Berlin',
    unsetMeans: "the system's time zone",
  }),
});

// One flat schema, so that every bad variable is reported at once, whichever group it belongs to.
export const EnvSchema = z.object({
  ...CoreEnv.shape,
  ...TransportsEnv.shape,
  ...LlmEnv.shape,
  ...StoreEnv.shape,
  ...CallsEnv.shape,
  ...AccessEnv.shape,
  ...PrivacyEnv.shape,
  ...KnowledgeEnv.shape,
  ...LanguagesEnv.shape,
});

export interface Config extends TransportsConfig, LlmConfig, StoreConfig, CallsConfig, AccessConfig, PrivacyConfig, KnowledgeConfig, LanguagesConfig {
  env: string;
  port: number;
  host: string;
  publicUrl: string | undefined;
  logLevel: string;
  limits: { maxCalls: number; idleTimeoutMs: number; shutdownGraceMs: number; shutdownNoticeMs: number };
  promptsDir: string;
  /** Time zone of the date and time placeholders. */
  timeZone: string | undefined;
}

/** Every secret of the configuration, for redacting logs. */
export function secretsOf(config: Config): string[] {
  const { auth, llm, adminToken, outbound, reports, replica } = config;
  return [
    llm.apiKey,
    auth.webhookSecret,
    auth.wsToken,
    auth.metricsToken,
    adminToken,
    outbound.accessToken,
    reports.webhookSecret,
    replica.clusterSecret,
    config.knowledge?.embeddings?.apiKey,
    // A collector's headers carry its API key.
    ...headerSecrets(config.tracing),
  ].filter((s): s is string => typeof s === 'string' && s !== '');
}

/** Hotline's own shared secrets by variable name, for the strength check (secret-strength.ts). */
export function sharedSecretsOf(config: Config): Record<SharedSecret, string | undefined> {
  return {
    ADMIN_TOKEN: config.adminToken,
    WS_TOKEN: config.auth.wsToken,
    WEBHOOK_SECRET: config.auth.webhookSecret,
    METRICS_TOKEN: config.auth.metricsToken,
    CLUSTER_SECRET: config.replica.clusterSecret,
    REPORT_WEBHOOK_SECRET: config.reports.webhookSecret,
  };
}

/** `.env` files and shells leave empty values behind: `PORT=` means "not set", never 0. */
function withoutEmptyValues(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value.trim() !== '') out[name] = value;
  return out;
}

/** The one line that explains a bad variable: its own message, or the name and zod's words. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const name = String(issue.path[0] ?? '');
  return issue.message.startsWith(name) ? issue.message : `${name}: ${issue.message}`;
}

/** Reads the configuration; throws a ConfigError with one line per bad variable, saying how to fix it. */
export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(withoutEmptyValues(rawEnv));
  if (!parsed.success) {
    const lines = [...new Set(parsed.error.issues.map(describeIssue))];
    throw new ConfigError(lines.join('\n'));
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  // The groups are built in this order so that, of several refusals, the same one is reported first as ever.
  const llm = llmConfigOf(e, production);
  checkCallSecurity(e, production);
  const store = storeConfigOf(e, e.PORT);
  const config: Config = {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL,
    logLevel: e.LOG_LEVEL,
    limits: {
      maxCalls: e.MAX_CALLS,
      idleTimeoutMs: e.CALL_IDLE_TIMEOUT_MS,
      shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
      shutdownNoticeMs: e.SHUTDOWN_NOTICE_MS,
    },
    promptsDir: path.resolve(e.PROMPTS_DIR),
    timeZone: e.TZ,
    ...transportsConfigOf(e),
    ...llm,
    ...store,
    ...callsConfigOf(e),
    ...accessConfigOf(e),
    ...privacyConfigOf(e, withoutEmptyValues(rawEnv), store.replica.id),
    ...knowledgeConfigOf(e, path.resolve(e.PROMPTS_DIR)),
    ...languagesConfigOf(e),
  };
  // Elsewhere a weak secret is warned about at startup (announce.ts): tests and trials use short ones.
  const weak = weakSecrets(sharedSecretsOf(config));
  if (production && weak.length > 0) {
    throw new ConfigError(`${weak.join('\n')}\nNODE_ENV=production refuses a secret that can be guessed.`);
  }
  return config;
}
