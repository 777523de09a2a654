import path from 'node:path';
import { availableParallelism, hostname } from 'node:os';
import { z } from 'zod';
import { parseRedactPatterns, RedactPatternError, type RedactPattern, type RedactionOptions } from './privacy/redaction.js';
import { RETENTION_DEFAULT_VARIABLE, RETENTION_VARIABLES, retentionSettingsFromEnv, type RetentionSettings } from './privacy/retention.js';
import { ConfigError } from './errors.js';
import { STAFF_ROLES } from './staff/roles.js';
import { proxyAuthOf, trustProxySchema, type ProxyAuthSettings, type TrustProxy } from './proxy-settings.js';
import { weakSecrets, type SharedSecret } from './secret-strength.js';
import { CACHE_MARKS, type CacheMarks } from './llm/cache-marks.js';
import { STREAM_USAGE_MODES, type StreamUsageMode } from './llm/stream-usage.js';
import { headerSecrets, tracingSettingsFrom, type TracingSettings } from './telemetry/tracing-settings.js';

const projectRoot = path.resolve(import.meta.dirname, '..');

/**
 * Each variable's schema carries the one line a person reads when it is wrong:
 * the name, what is expected and, where it helps, how to fix it.
 */
const text = z.string().trim();

const int = (name: string, min: number, fallback: number, unit = '') => {
  const error = `${name} must be a whole number${unit}, at least ${min}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).default(fallback);
};

/** A port to listen on; 0 picks any free one. */
const portNumber = (name: string) => {
  const error = `${name} must be a port number 1–65535 (0 picks any free port)`;
  return z.coerce.number({ error }).int({ error }).min(0, { error }).max(65535, { error });
};

const url = (name: string, example: string) =>
  text
    .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), {
      error: `${name} must be an http:// or https:// URL, e.g. ${example}`,
    })
    .optional();

const boolean = (name: string, fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: `${name} must be true or false` })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

// "sales=4930111,support=4940222" → { sales: '4930111', support: '4940222' }
const namedTargets = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const targets: Record<string, string> = {};
    for (const pair of (raw ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [name, target] = pair.split('=').map((p) => p.trim());
      if (!name || !target) {
        ctx.addIssue({ code: 'custom', message: `TRANSFER_TARGETS: "${pair}" is not name=number (e.g. sales=4930111111)` });
        continue;
      }
      targets[name] = target;
    }
    return targets;
  });


export type Transport = 'websocket' | 'webhook';

/** A comma-separated list of transports; with an empty default, none (or `none`) is allowed. */
const transportList = (name: string, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw, ctx) => {
      const names = raw.split(',').map((p) => p.trim().toLowerCase()).filter(Boolean);
      const bad = names.filter((n) => n !== 'websocket' && n !== 'webhook' && n !== 'none');
      const kept = names.filter((n) => n !== 'none');
      if (bad.length > 0 || (fallback !== '' && kept.length === 0)) {
        ctx.addIssue({ code: 'custom', message: `${name} must name websocket, webhook or both, separated by a comma` });
        return z.NEVER;
      }
      return new Set(kept as Transport[]);
    });

const transports = transportList('TRANSPORTS', 'websocket,webhook');

const EnvSchema = z.object({
  NODE_ENV: text.default('development'),
  PORT: portNumber('PORT').default(3000),
  HOST: text.default('0.0.0.0'),
  PUBLIC_URL: url('PUBLIC_URL', 'https://hotline.example.com'),
  TRANSPORTS: transports,
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  OPENAI_API_KEY: text.optional(),
  OPENAI_BASE_URL: url('OPENAI_BASE_URL', 'http://localhost:11434/v1'),
  LLM_MODEL: text.min(1).default('gpt-4o-mini'),
  LLM_TEMPERATURE: z.coerce
    .number({ error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .min(0, { error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .max(2, { error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .optional(),
  LLM_TIMEOUT_MS: int('LLM_TIMEOUT_MS', 1, 8000, ' of milliseconds'),
  LLM_THINKING_TIMEOUT_MS: int('LLM_THINKING_TIMEOUT_MS', 1, 20_000, ' of milliseconds'),
  LLM_TOTAL_TIMEOUT_MS: int('LLM_TOTAL_TIMEOUT_MS', 1, 30_000, ' of milliseconds'),
  LLM_MAX_FAILURES: int('LLM_MAX_FAILURES', 1, 3),
  LLM_HISTORY_MAX_CHARS: int('LLM_HISTORY_MAX_CHARS', 1, 32_000, ' of characters'),
  LLM_MAX_TOKENS: int('LLM_MAX_TOKENS', 0, 2048, ' of tokens'),
  LLM_MAX_TOKENS_PARAM: z
    .enum(['auto', 'max_tokens', 'max_completion_tokens'], {
      error: 'LLM_MAX_TOKENS_PARAM must be auto, max_tokens or max_completion_tokens',
    })
    .default('auto'),
  LLM_MAX_TOOL_ROUNDS: int('LLM_MAX_TOOL_ROUNDS', 1, 4),
  LLM_CACHE_MARKS: z.enum(CACHE_MARKS, { error: 'LLM_CACHE_MARKS must be none or anthropic' }).default('none'),
  LLM_PRICES_FILE: text.optional(),
  LLM_STREAM_USAGE: z.enum(STREAM_USAGE_MODES, { error: 'LLM_STREAM_USAGE must be auto, true or false' }).default('auto'),
  TOOL_HOLD_MS: int('TOOL_HOLD_MS', 0, 500, ' of milliseconds'),
  TOOL_HOLD_REPEAT_MS: int('TOOL_HOLD_REPEAT_MS', 500, 5000, ' of milliseconds'),
  TOOL_TIMEOUT_MS: int('TOOL_TIMEOUT_MS', 100, 5000, ' of milliseconds'),
  TOOL_RESULT_MAX_CHARS: int('TOOL_RESULT_MAX_CHARS', 100, 2000, ' of characters'),
  LLM_CHECK_AT_START: boolean('LLM_CHECK_AT_START', true),
  REPLY_MAX_CHARS: int('REPLY_MAX_CHARS', 1, 1000, ' of characters'),
  THINKING_FILLER_MS: int('THINKING_FILLER_MS', 0, 2500, ' of milliseconds'),
  MAX_CALLS: int('MAX_CALLS', 1, 2000),
  CALL_IDLE_TIMEOUT_MS: int('CALL_IDLE_TIMEOUT_MS', 0, 10 * 60 * 1000, ' of milliseconds'),
  SHUTDOWN_GRACE_MS: int('SHUTDOWN_GRACE_MS', 0, 30_000, ' of milliseconds'),
  SHUTDOWN_NOTICE_MS: int('SHUTDOWN_NOTICE_MS', 0, 10_000, ' of milliseconds'),
  WS_START_TIMEOUT_MS: int('WS_START_TIMEOUT_MS', 1, 5000, ' of milliseconds'),
  WS_PING_INTERVAL_MS: int('WS_PING_INTERVAL_MS', 0, 30_000, ' of milliseconds'),
  WS_RECONNECT_GRACE_MS: int('WS_RECONNECT_GRACE_MS', 0, 5000, ' of milliseconds'),
  PROMPTS_DIR: text.default(path.join(projectRoot, 'prompts')),
  TRANSCRIPTS_DIR: text.default(path.join(projectRoot, 'data', 'transcripts')),
  DATABASE_FILE: text.min(1).optional(),
  DATABASE_URL: text
    .regex(/^postgres(ql)?:\/\/./, 'DATABASE_URL must be a PostgreSQL URL, e.g. postgres://hotline:secret@db.example.com:5432/hotline')
    .optional(),
  REPLICA_ID: text
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'REPLICA_ID must be 1–64 letters, digits, dots, dashes, colons or underscores, e.g. hotline-1')
    .optional(),
  INTERNAL_URL: url('INTERNAL_URL', 'http://10.0.0.12:3001'),
  INTERNAL_PORT: portNumber('INTERNAL_PORT').optional(),
  CLUSTER_SECRET: text.optional(),
  WORKERS: text
    .regex(/^(auto|[1-9]\d?)$/, 'WORKERS must be auto (one process per core) or a number of processes, 1–99')
    .default('1'),
  REPORT_WEBHOOK_URL: url('REPORT_WEBHOOK_URL', 'https://crm.example.com/hotline-reports'),
  REPORT_WEBHOOK_SECRET: text.optional(),
  REPORT_WEBHOOK_GIVE_UP_MS: int('REPORT_WEBHOOK_GIVE_UP_MS', 1, 24 * 60 * 60 * 1000, ' of milliseconds'),
  REPORT_MODEL: text.min(1).optional(),
  REPORT_FIELDS: boolean('REPORT_FIELDS', true),
  VOICEMAIL_DETECTION: boolean('VOICEMAIL_DETECTION', true),
  VOICEMAIL_JUDGE_MS: int('VOICEMAIL_JUDGE_MS', 100, 2000, ' of milliseconds'),
  VOICEMAIL_QUIET_MS: int('VOICEMAIL_QUIET_MS', 100, 1200, ' of milliseconds'),
  VOICEMAIL_MODEL: text.min(1).optional(),
  TRANSFER_TARGET: text.optional(),
  TRANSFER_TARGETS: namedTargets,
  TRANSFER_CALLER_ID_NAME: text.max(64, { error: 'TRANSFER_CALLER_ID_NAME must be at most 64 characters' }).optional(),
  TRANSFER_CALLER_ID_NUMBER: text
    .regex(/^\+?[0-9 ()/-]{3,32}$/, { error: 'TRANSFER_CALLER_ID_NUMBER must be a phone number, e.g. 4930123456' })
    .optional(),
  TRANSFER_TIMEOUT_SECONDS: z.coerce
    .number({ error: 'TRANSFER_TIMEOUT_SECONDS must be a whole number of seconds, 5–120' })
    .int({ error: 'TRANSFER_TIMEOUT_SECONDS must be a whole number of seconds, 5–120' })
    .min(5, { error: 'TRANSFER_TIMEOUT_SECONDS must be a whole number of seconds, 5–120' })
    .max(120, { error: 'TRANSFER_TIMEOUT_SECONDS must be a whole number of seconds, 5–120' })
    .optional(),
  WEBHOOK_SECRET: text.optional(),
  WS_TOKEN: text.optional(),
  METRICS_TOKEN: text.optional(),
  WEBHOOK_MAX_BYTES: int('WEBHOOK_MAX_BYTES', 1, 64 * 1024, ' of bytes'),
  WEBHOOK_REPLY: z
    .enum(['whole', 'sentences'], { error: 'WEBHOOK_REPLY must be whole or sentences' })
    .default('sentences'),
  WEBHOOK_HOLD_MS: int('WEBHOOK_HOLD_MS', 0, 1000, ' of milliseconds'),
  ACTION_ARRAYS: transportList('ACTION_ARRAYS', ''),
  RATE_LIMIT_WEBHOOK_PER_MINUTE: int('RATE_LIMIT_WEBHOOK_PER_MINUTE', 0, 6000),
  RATE_LIMIT_WS_PER_MINUTE: int('RATE_LIMIT_WS_PER_MINUTE', 0, 600),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: int('RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 0, 30),
  ADMIN_TOKEN: text.optional(),
  AIFLOW_API_URL: url('AIFLOW_API_URL', 'https://api.example.com'),
  AIFLOW_ACCESS_TOKEN: text.optional(),
  AIFLOW_ID: text.optional(),
  AIFLOW_BILLING_DEVICE: text.optional(),
  AIFLOW_TIMEOUT_MS: int('AIFLOW_TIMEOUT_MS', 1, 10_000, ' of milliseconds'),
  OUTBOUND_TTL_MS: int('OUTBOUND_TTL_MS', 1, 10 * 60 * 1000, ' of milliseconds'),
  DEFAULT_COUNTRY_CODE: text.regex(/^\d{1,3}$/, { error: 'DEFAULT_COUNTRY_CODE must be 1–3 digits, e.g. 49' }).optional(),
  TZ: text.optional(),
  TRUST_PROXY: trustProxySchema,
  PLAYBACK_GRACE_MS: int('PLAYBACK_GRACE_MS', 0, 1500, ' of milliseconds'),
  DEMO_TTFT_MS: int('DEMO_TTFT_MS', 0, 300, ' of milliseconds'),
  DEMO_TOKEN_DELAY_MS: int('DEMO_TOKEN_DELAY_MS', 0, 15, ' of milliseconds'),
  PROXY_AUTH_USER_HEADER: text.regex(/^[A-Za-z0-9-]+$/, { error: 'PROXY_AUTH_USER_HEADER must be a header name, e.g. X-Forwarded-Email' }).optional(),
  PROXY_AUTH_GROUPS_HEADER: text.regex(/^[A-Za-z0-9-]+$/, { error: 'PROXY_AUTH_GROUPS_HEADER must be a header name, e.g. X-Forwarded-Groups' }).optional(),
  PROXY_AUTH_ROLES: text.optional(),
  PROXY_AUTH_DEFAULT_ROLE: z.enum(STAFF_ROLES, { error: 'PROXY_AUTH_DEFAULT_ROLE must be viewer, operator or admin' }).default('viewer'),
  DASHBOARD_RECHECK_SECONDS: int('DASHBOARD_RECHECK_SECONDS', 1, 30, ' of seconds').refine((s) => s <= 60, { error: 'DASHBOARD_RECHECK_SECONDS must be at most 60' }),
  REDACT_CARDS: boolean('REDACT_CARDS', true),
  REDACT_IBANS: boolean('REDACT_IBANS', true),
  REDACT_PATTERNS: text.optional(),
  REDACT_FROM_MODEL: boolean('REDACT_FROM_MODEL', false),
  // OpenTelemetry's standard variables (src/telemetry/tracing-settings.ts), and Hotline's content switch.
  OTEL_SDK_DISABLED: text.optional(),
  OTEL_TRACES_EXPORTER: text.optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('OTEL_EXPORTER_OTLP_ENDPOINT', 'http://localhost:4318'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'http://localhost:4318/v1/traces'),
  OTEL_EXPORTER_OTLP_HEADERS: text.optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: text.optional(),
  OTEL_SERVICE_NAME: text.min(1).default('hotline'),
  OTEL_INCLUDE_CONTENT: boolean('OTEL_INCLUDE_CONTENT', false),
  // Read, checked and turned into days by retentionSettingsFromEnv; listed so the schema names every variable.
  ...Object.fromEntries([RETENTION_DEFAULT_VARIABLE, ...Object.values(RETENTION_VARIABLES)].map((name) => [name, text.optional()])),
});

/** Where transfers go, and the caller id the person who picks up sees (production service fields). */
export interface TransferConfig {
  defaultTarget: string | undefined;
  targets: Record<string, string>;
  callerIdName: string | undefined;
  callerIdNumber: string | undefined;
  timeoutSeconds: number | undefined;
}

export interface Config {
  env: string;
  port: number;
  host: string;
  publicUrl: string | undefined;
  /** The call transports served; a deployment switches off the one it does not use. */
  transports: ReadonlySet<Transport>;
  logLevel: string;
  llm: {
    /** 'demo' runs the built-in scripted model through the same SDK code path. */
    mode: 'remote' | 'demo';
    apiKey: string | undefined;
    baseURL: string | undefined;
    model: string;
    temperature: number | undefined;
    /** No first token (answer or reasoning) within this: the turn fails. */
    timeoutMs: number;
    /** A model still only reasoning after this has nothing to say: the turn fails. */
    thinkingTimeoutMs: number;
    totalTimeoutMs: number;
    maxFailures: number;
    /** Budget of the history sent per request, in characters; the transcript on disk stays whole. */
    historyMaxChars: number;
    /** Sent as `maxTokensParam`; undefined sends no cap. */
    maxTokens: number | undefined;
    maxTokensParam: 'max_tokens' | 'max_completion_tokens';
    /** LLM requests one turn may make while the model calls tools. */
    maxToolRounds: number;
    /** Anthropic-style cache marks after the static system prompt and the tools, for gateways that cache only where marked. */
    cacheMarks: CacheMarks;
    /** A JSON price table over the built-in list prices (src/llm/prices.ts). */
    pricesFile: string | undefined;
    /** Whether each request asks for its token usage (`stream_options.include_usage`). */
    streamUsage: StreamUsageMode;
    /** A cheap request at startup tells whether the LLM is reachable and the key accepted. */
    checkAtStart: boolean;
  };
  /** The longest reply spoken, in characters; the LLM stream is closed there. */
  replyMaxChars: number;
  /** A reasoning model silent this long: WebSocket callers hear prompts/thinking.md; 0 never. */
  thinkingFillerMs: number;
  tools: {
    /** A tool still running this long after the model's call: the caller hears its hold line. */
    holdMs: number;
    /** While it runs on, another hold line this long after the last one has played. */
    holdRepeatMs: number;
    /** Defaults of tool files and MCP servers that set none. */
    timeoutMs: number;
    resultMaxChars: number;
  };
  limits: { maxCalls: number; idleTimeoutMs: number; shutdownGraceMs: number; shutdownNoticeMs: number };
  websocket: {
    startTimeoutMs: number;
    pingIntervalMs: number;
    /** A socket that drops without a close handshake: its call waits this long for the service to reconnect. */
    reconnectGraceMs: number;
  };
  demo: { ttftMs: number; tokenDelayMs: number };
  promptsDir: string;
  transcriptsDir: string;
  /** The embedded database of calls, reports and their deliveries (unless `databaseUrl` is set). */
  databaseFile: string;
  /** A PostgreSQL database instead of the SQLite file: several Hotline processes can share it. */
  databaseUrl: string | undefined;
  replica: {
    /** This process's name among the replicas sharing the store, stable across its restarts (default: the host name). */
    id: string;
    /** Where the other replicas reach this one; default this host's name (or HOST) and `internalPort`. */
    internalUrl: string | undefined;
    /** The port of the listener that alone serves what replicas ask of each other (never the public one); 0 any free port. */
    internalPort: number;
    /** What replicas present to each other (a webhook event forwarded to its call's replica); unset, none is forwarded. */
    clusterSecret: string | undefined;
  };
  /** Processes on this machine behind one port (WORKERS), each a replica of its own. */
  workers: number;
  reports: {
    /** Where each call's report is POSTed, signed with `webhookSecret`; unset keeps reports in the database only. */
    webhookUrl: string | undefined;
    webhookSecret: string | undefined;
    /** How long a delivery is retried before it is given up (it can be sent again from the dashboard or the API). */
    giveUpAfterMs: number;
    /** The model that writes the summary and fields; default LLM_MODEL. */
    model: string | undefined;
    /** Ask the LLM for report.md's summary and fields after each call. */
    fields: boolean;
  };
  voicemail: {
    /** Outbound calls listen for a mailbox in the first words. */
    enabled: boolean;
    /** The longest the model may judge words the phrases are unsure of. */
    judgeMs: number;
    /** A mailbox quiet this long has finished its greeting: the message starts. */
    quietMs: number;
    /** The model that judges unsure first words; default LLM_MODEL. */
    model: string | undefined;
  };
  transfer: TransferConfig;
  auth: {
    /** Shared secret the service sends in X-API-TOKEN with every webhook request. */
    webhookSecret: string | undefined;
    /** Token a WebSocket upgrade must present (?token=, X-API-TOKEN or Authorization: Bearer). */
    wsToken: string | undefined;
    /** Bearer token GET /metrics requires; unset leaves it open. */
    metricsToken: string | undefined;
  };
  /** Largest event accepted, by webhook (413) or WebSocket (close 1009). */
  maxEventBytes: number;
  webhookReply: 'whole' | 'sentences';
  /** A webhook request that waits this long for the model gets the hold line (prompts/thinking.md); 0 never. */
  webhookHoldMs: number;
  /** Transports whose answers may carry several actions at once (production service only). */
  actionArrays: ReadonlySet<Transport>;
  /** Requests per minute per remote address; 0 turns the limit off. */
  rateLimit: { webhookPerMinute: number; wsUpgradesPerMinute: number; authFailuresPerMinute: number };
  /** Behind a reverse proxy: which X-Forwarded-For entries name the client. */
  trustProxy: TrustProxy;
  /** Bearer token of Hotline's own admin API (POST /api/calls); unset turns that API off. */
  adminToken: string | undefined;
  outbound: {
    apiUrl: string | undefined;
    accessToken: string | undefined;
    aiFlowId: string | undefined;
    billingDevice: string | undefined;
    timeoutMs: number;
    /** How long a requested call waits for its session_start. */
    ttlMs: number;
    /** For numbers given in national form (0151…). */
    defaultCountryCode: string | undefined;
  };
  /** Time zone of the date and time placeholders. */
  timeZone: string | undefined;
  /** How long past the estimated end of playback a hangup or transfer waits for assistant_speech_ended. */
  playbackGraceMs: number;
  /** An authenticating reverse proxy's word for who uses the dashboard; undefined: Hotline's own login only. */
  proxyAuth: ProxyAuthSettings | undefined;
  /** How often a dashboard session's account is asked again: a removed or re-roled one is logged out, its streams closed, within it. */
  dashboardRecheckMs: number;
  privacy: {
    /** What is redacted from the caller's words (and Hotline's) before anything is written. */
    redaction: RedactionOptions;
    /** Whether the model gets the redacted words too; by default it gets what the caller said, within the call. */
    redactFromModel: boolean;
    /** Days each kind of personal data is kept (undefined: kept until erased). */
    retention: RetentionSettings;
  };
  /** OpenTelemetry traces of every call, over OTLP/HTTP; undefined (the default) traces nothing and loads none of it. */
  tracing: TracingSettings | undefined;
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

/** OpenAI itself wants max_completion_tokens (its reasoning models refuse max_tokens); every other server knows max_tokens. */
function maxTokensParamFor(baseURL: string | undefined): 'max_tokens' | 'max_completion_tokens' {
  if (!baseURL) return 'max_completion_tokens';
  const host = new URL(baseURL).hostname;
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'max_completion_tokens' : 'max_tokens';
}

function redactPatterns(text: string | undefined): RedactPattern[] {
  try {
    return parseRedactPatterns(text ?? '');
  } catch (error) {
    if (error instanceof RedactPatternError) throw new ConfigError(`REDACT_PATTERNS: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * The internal listener's port: INTERNAL_PORT, else the port INTERNAL_URL names (where the others are
 * told to reach it), else any free one. Never the public port: the replicas' routes are not served there.
 */
function internalPortOf(explicit: number | undefined, internalUrl: string | undefined, publicPort: number): number {
  const named = internalUrl === undefined ? undefined : new URL(internalUrl);
  const port = explicit ?? (named ? Number(named.port || (named.protocol === 'https:' ? 443 : 80)) : 0);
  if (port !== 0 && port === publicPort) {
    throw new ConfigError(
      `${explicit === undefined ? `INTERNAL_URL (${internalUrl})` : 'INTERNAL_PORT'} names port ${port}, which is PORT: what replicas ask of each other ` +
        'is served on a port of its own, never the public one. Use another port, e.g. INTERNAL_URL=http://<this host>:3001.',
    );
  }
  return port;
}

/** Reads the configuration; throws a ConfigError with one line per bad variable, saying how to fix it. */
export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(withoutEmptyValues(rawEnv));
  if (!parsed.success) {
    const lines = [...new Set(parsed.error.issues.map(describeIssue))];
    throw new ConfigError(lines.join('\n'));
  }
  const e = parsed.data;
  const mode = e.OPENAI_API_KEY || e.OPENAI_BASE_URL ? 'remote' : 'demo';
  const production = e.NODE_ENV === 'production';
  if (mode === 'demo' && production) {
    throw new ConfigError(
      'No LLM configured: set OPENAI_API_KEY (OpenAI) and/or OPENAI_BASE_URL (Azure, Ollama, vLLM or any ' +
        'OpenAI-compatible endpoint), and LLM_MODEL. The built-in demo model is refused when NODE_ENV=production.',
    );
  }
  if (e.REPORT_WEBHOOK_URL && !e.REPORT_WEBHOOK_SECRET) {
    // An unsigned report could be forged by anyone who knows the receiver's address.
    throw new ConfigError('REPORT_WEBHOOK_URL is set without REPORT_WEBHOOK_SECRET: set the secret the receiver checks the signature with.');
  }
  const outboundOn = Boolean(e.ADMIN_TOKEN && e.AIFLOW_API_URL && e.AIFLOW_ACCESS_TOKEN);
  if (production && outboundOn) {
    // An open transport lets anyone claim an outbound call's variables by posting its session_start.
    const open = [
      e.TRANSPORTS.has('webhook') && !e.WEBHOOK_SECRET ? 'the webhook (set WEBHOOK_SECRET)' : undefined,
      e.TRANSPORTS.has('websocket') && !e.WS_TOKEN ? 'the WebSocket (set WS_TOKEN)' : undefined,
    ].filter(Boolean);
    if (open.length > 0) {
      throw new ConfigError(
        `Outbound calls are on, but ${open.join(' and ')} ${open.length > 1 ? 'are' : 'is'} open to anyone: ` +
          'secure it, or switch off the transport you do not use with TRANSPORTS=websocket or TRANSPORTS=webhook.',
      );
    }
  }
  const workers = e.WORKERS === 'auto' ? availableParallelism() : Number(e.WORKERS);
  if (workers > 1 && !e.DATABASE_URL) {
    throw new ConfigError(
      `WORKERS=${e.WORKERS} runs ${workers} processes, and they must share one store: set DATABASE_URL (PostgreSQL). ` +
        'The SQLite file is one process\'s; without DATABASE_URL run one (WORKERS=1).',
    );
  }
  const replicaId = e.REPLICA_ID ?? hostname().slice(0, 64);
  const config: Config = {
    env: e.NODE_ENV,
    workers,
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL,
    transports: e.TRANSPORTS,
    logLevel: e.LOG_LEVEL,
    llm: {
      mode,
      apiKey: e.OPENAI_API_KEY,
      baseURL: e.OPENAI_BASE_URL,
      model: mode === 'demo' ? 'hotline-demo' : e.LLM_MODEL,
      temperature: e.LLM_TEMPERATURE,
      timeoutMs: e.LLM_TIMEOUT_MS,
      thinkingTimeoutMs: e.LLM_THINKING_TIMEOUT_MS,
      totalTimeoutMs: e.LLM_TOTAL_TIMEOUT_MS,
      maxFailures: e.LLM_MAX_FAILURES,
      historyMaxChars: e.LLM_HISTORY_MAX_CHARS,
      maxTokens: e.LLM_MAX_TOKENS > 0 ? e.LLM_MAX_TOKENS : undefined,
      maxTokensParam: e.LLM_MAX_TOKENS_PARAM === 'auto' ? maxTokensParamFor(e.OPENAI_BASE_URL) : e.LLM_MAX_TOKENS_PARAM,
      maxToolRounds: e.LLM_MAX_TOOL_ROUNDS,
      cacheMarks: e.LLM_CACHE_MARKS,
      pricesFile: e.LLM_PRICES_FILE,
      streamUsage: e.LLM_STREAM_USAGE,
      checkAtStart: e.LLM_CHECK_AT_START,
    },
    replyMaxChars: e.REPLY_MAX_CHARS,
    thinkingFillerMs: e.THINKING_FILLER_MS,
    tools: {
      holdMs: e.TOOL_HOLD_MS,
      holdRepeatMs: e.TOOL_HOLD_REPEAT_MS,
      timeoutMs: e.TOOL_TIMEOUT_MS,
      resultMaxChars: e.TOOL_RESULT_MAX_CHARS,
    },
    limits: {
      maxCalls: e.MAX_CALLS,
      idleTimeoutMs: e.CALL_IDLE_TIMEOUT_MS,
      shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
      shutdownNoticeMs: e.SHUTDOWN_NOTICE_MS,
    },
    websocket: {
      startTimeoutMs: e.WS_START_TIMEOUT_MS,
      pingIntervalMs: e.WS_PING_INTERVAL_MS,
      reconnectGraceMs: e.WS_RECONNECT_GRACE_MS,
    },
    demo: { ttftMs: e.DEMO_TTFT_MS, tokenDelayMs: e.DEMO_TOKEN_DELAY_MS },
    promptsDir: path.resolve(e.PROMPTS_DIR),
    transcriptsDir: path.resolve(e.TRANSCRIPTS_DIR),
    // Beside the transcripts by default: one folder holds the whole record of the calls.
    databaseFile:
      e.DATABASE_FILE === undefined
        ? path.join(path.resolve(e.TRANSCRIPTS_DIR), 'hotline.db')
        : e.DATABASE_FILE === ':memory:'
          ? e.DATABASE_FILE
          : path.resolve(e.DATABASE_FILE),
    databaseUrl: e.DATABASE_URL,
    // A container's or pod's host name is its own, and the same across a restart of the process in it.
    replica: { id: replicaId, internalUrl: e.INTERNAL_URL, internalPort: internalPortOf(e.INTERNAL_PORT, e.INTERNAL_URL, e.PORT), clusterSecret: e.CLUSTER_SECRET },
    reports: {
      webhookUrl: e.REPORT_WEBHOOK_URL,
      webhookSecret: e.REPORT_WEBHOOK_SECRET,
      giveUpAfterMs: e.REPORT_WEBHOOK_GIVE_UP_MS,
      model: e.REPORT_MODEL,
      fields: e.REPORT_FIELDS,
    },
    voicemail: { enabled: e.VOICEMAIL_DETECTION, judgeMs: e.VOICEMAIL_JUDGE_MS, quietMs: e.VOICEMAIL_QUIET_MS, model: e.VOICEMAIL_MODEL },
    transfer: {
      defaultTarget: e.TRANSFER_TARGET,
      targets: e.TRANSFER_TARGETS,
      callerIdName: e.TRANSFER_CALLER_ID_NAME,
      callerIdNumber: e.TRANSFER_CALLER_ID_NUMBER,
      timeoutSeconds: e.TRANSFER_TIMEOUT_SECONDS,
    },
    auth: { webhookSecret: e.WEBHOOK_SECRET, wsToken: e.WS_TOKEN, metricsToken: e.METRICS_TOKEN },
    maxEventBytes: e.WEBHOOK_MAX_BYTES,
    webhookReply: e.WEBHOOK_REPLY,
    webhookHoldMs: e.WEBHOOK_HOLD_MS,
    actionArrays: e.ACTION_ARRAYS,
    rateLimit: {
      webhookPerMinute: e.RATE_LIMIT_WEBHOOK_PER_MINUTE,
      wsUpgradesPerMinute: e.RATE_LIMIT_WS_PER_MINUTE,
      authFailuresPerMinute: e.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
    },
    trustProxy: e.TRUST_PROXY,
    adminToken: e.ADMIN_TOKEN,
    outbound: {
      apiUrl: e.AIFLOW_API_URL,
      accessToken: e.AIFLOW_ACCESS_TOKEN,
      aiFlowId: e.AIFLOW_ID,
      billingDevice: e.AIFLOW_BILLING_DEVICE,
      timeoutMs: e.AIFLOW_TIMEOUT_MS,
      ttlMs: e.OUTBOUND_TTL_MS,
      defaultCountryCode: e.DEFAULT_COUNTRY_CODE,
    },
    timeZone: e.TZ,
    playbackGraceMs: e.PLAYBACK_GRACE_MS,
    proxyAuth: proxyAuthOf(e.PROXY_AUTH_USER_HEADER, e.PROXY_AUTH_GROUPS_HEADER, e.PROXY_AUTH_ROLES, e.PROXY_AUTH_DEFAULT_ROLE, e.TRUST_PROXY),
    dashboardRecheckMs: e.DASHBOARD_RECHECK_SECONDS * 1000,
    privacy: {
      redaction: { cards: e.REDACT_CARDS, ibans: e.REDACT_IBANS, patterns: redactPatterns(e.REDACT_PATTERNS) },
      redactFromModel: e.REDACT_FROM_MODEL,
      retention: retentionSettingsFromEnv(withoutEmptyValues(rawEnv)),
    },
    tracing: tracingSettingsFrom(e, replicaId),
  };
  // Elsewhere a weak secret is warned about at startup (announce.ts): tests and trials use short ones.
  const weak = weakSecrets(sharedSecretsOf(config));
  if (production && weak.length > 0) {
    throw new ConfigError(`${weak.join('\n')}\nNODE_ENV=production refuses a secret that can be guessed.`);
  }
  return config;
}
