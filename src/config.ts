import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors.js';

const projectRoot = path.resolve(import.meta.dirname, '..');

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

// "sales=4930111,support=4940222" → { sales: '4930111', support: '4940222' }
const namedTargets = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const targets: Record<string, string> = {};
    for (const pair of (raw ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
      const [name, target] = pair.split('=').map((p) => p.trim());
      if (!name || !target) {
        ctx.addIssue({ code: 'custom', message: `"${pair}" is not name=target` });
        continue;
      }
      targets[name] = target;
    }
    return targets;
  });

const EnvSchema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: optionalText,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalText,
  LLM_MODEL: z.string().trim().min(1).default('gpt-4o-mini'),
  LLM_TEMPERATURE: z.coerce.number().min(0).max(2).optional(),
  LLM_TIMEOUT_MS: positiveInt(8000),
  LLM_TOTAL_TIMEOUT_MS: positiveInt(30_000),
  LLM_MAX_FAILURES: positiveInt(3),
  LLM_HISTORY_MAX_CHARS: positiveInt(32_000),
  MAX_CALLS: positiveInt(2000),
  CALL_IDLE_TIMEOUT_MS: z.coerce.number().int().min(0).default(10 * 60 * 1000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  PROMPTS_DIR: z.string().default(path.join(projectRoot, 'prompts')),
  TRANSCRIPTS_DIR: z.string().default(path.join(projectRoot, 'data', 'transcripts')),
  TRANSFER_TARGET: optionalText,
  TRANSFER_TARGETS: namedTargets,
  WEBHOOK_SECRET: optionalText,
  WS_TOKEN: optionalText,
  WEBHOOK_MAX_BYTES: positiveInt(64 * 1024),
  WEBHOOK_REPLY: z.enum(['whole', 'sentences']).default('whole'),
  RATE_LIMIT_WEBHOOK_PER_MINUTE: z.coerce.number().int().min(0).default(6000),
  RATE_LIMIT_WS_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  ADMIN_TOKEN: optionalText,
  AIFLOW_API_URL: optionalText.pipe(z.url().optional()),
  AIFLOW_ACCESS_TOKEN: optionalText,
  AIFLOW_ID: optionalText,
  AIFLOW_BILLING_DEVICE: optionalText,
  AIFLOW_TIMEOUT_MS: positiveInt(10_000),
  OUTBOUND_TTL_MS: positiveInt(10 * 60 * 1000),
  DEFAULT_COUNTRY_CODE: optionalText.pipe(z.string().regex(/^\d{1,3}$/, 'digits only, e.g. 49').optional()),
  TZ: optionalText,
  TRUST_PROXY: z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  PLAYBACK_GRACE_MS: z.coerce.number().int().min(0).default(1500),
  DEMO_TTFT_MS: z.coerce.number().int().min(0).default(350),
  DEMO_TOKEN_DELAY_MS: z.coerce.number().int().min(0).default(25),
});

export interface Config {
  env: string;
  port: number;
  host: string;
  publicUrl: string | undefined;
  logLevel: string;
  llm: {
    /** 'demo' runs the built-in scripted model through the same SDK code path. */
    mode: 'remote' | 'demo';
    apiKey: string | undefined;
    baseURL: string | undefined;
    model: string;
    temperature: number | undefined;
    timeoutMs: number;
    totalTimeoutMs: number;
    maxFailures: number;
    /** Budget of the history sent per request, in characters; the transcript on disk stays whole. */
    historyMaxChars: number;
  };
  limits: { maxCalls: number; idleTimeoutMs: number; shutdownGraceMs: number };
  demo: { ttftMs: number; tokenDelayMs: number };
  promptsDir: string;
  transcriptsDir: string;
  transfer: { defaultTarget: string | undefined; targets: Record<string, string> };
  auth: {
    /** Shared secret the service sends in X-API-TOKEN with every webhook request. */
    webhookSecret: string | undefined;
    /** Token a WebSocket upgrade must present (?token=, X-API-TOKEN or Authorization: Bearer). */
    wsToken: string | undefined;
  };
  /** Largest event accepted, by webhook (413) or WebSocket (close 1009). */
  maxEventBytes: number;
  webhookReply: 'whole' | 'sentences';
  /** Requests per minute per remote address; 0 turns the limit off. */
  rateLimit: { webhookPerMinute: number; wsUpgradesPerMinute: number };
  /** Behind a reverse proxy: take the client address from X-Forwarded-For. */
  trustProxy: boolean;
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
}

/** Reads the configuration; throws a ConfigError naming every bad variable and how to fix it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}\nSee .env.example for every variable.`);
  }
  const e = parsed.data;
  const mode = e.OPENAI_API_KEY || e.OPENAI_BASE_URL ? 'remote' : 'demo';
  if (mode === 'demo' && e.NODE_ENV === 'production') {
    throw new ConfigError(
      'No LLM configured: set OPENAI_API_KEY (OpenAI) and/or OPENAI_BASE_URL (Azure, Ollama, vLLM or any ' +
        'OpenAI-compatible endpoint), and LLM_MODEL. The built-in demo model is refused when NODE_ENV=production.',
    );
  }
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL,
    logLevel: e.LOG_LEVEL,
    llm: {
      mode,
      apiKey: e.OPENAI_API_KEY,
      baseURL: e.OPENAI_BASE_URL,
      model: mode === 'demo' ? 'hotline-demo' : e.LLM_MODEL,
      temperature: e.LLM_TEMPERATURE,
      timeoutMs: e.LLM_TIMEOUT_MS,
      totalTimeoutMs: e.LLM_TOTAL_TIMEOUT_MS,
      maxFailures: e.LLM_MAX_FAILURES,
      historyMaxChars: e.LLM_HISTORY_MAX_CHARS,
    },
    limits: { maxCalls: e.MAX_CALLS, idleTimeoutMs: e.CALL_IDLE_TIMEOUT_MS, shutdownGraceMs: e.SHUTDOWN_GRACE_MS },
    demo: { ttftMs: e.DEMO_TTFT_MS, tokenDelayMs: e.DEMO_TOKEN_DELAY_MS },
    promptsDir: path.resolve(e.PROMPTS_DIR),
    transcriptsDir: path.resolve(e.TRANSCRIPTS_DIR),
    transfer: { defaultTarget: e.TRANSFER_TARGET, targets: e.TRANSFER_TARGETS },
    auth: { webhookSecret: e.WEBHOOK_SECRET, wsToken: e.WS_TOKEN },
    maxEventBytes: e.WEBHOOK_MAX_BYTES,
    webhookReply: e.WEBHOOK_REPLY,
    rateLimit: { webhookPerMinute: e.RATE_LIMIT_WEBHOOK_PER_MINUTE, wsUpgradesPerMinute: e.RATE_LIMIT_WS_PER_MINUTE },
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
  };
}
