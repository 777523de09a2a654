import { config as loadDotenv } from 'dotenv';
import { loadConfig, type Config } from './config.js';
import { HotlineError } from './errors.js';
import { createLogger } from './logger.js';
import { startHotline } from './server.js';

loadDotenv({ quiet: true });

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof HotlineError ? error.message : error);
  process.exit(1);
}

const logger = createLogger({ level: config.logLevel, env: config.env });

// Last line of defence: log, never crash a process that carries live calls.
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

const hotline = await startHotline(config, logger);
const base = config.publicUrl?.replace(/\/+$/, '') ?? hotline.url;
// The token itself is a secret: the log shows where it goes, not what it is.
const websocketUrl = `${base.replace(/^http/, 'ws')}/ws${config.auth.wsToken ? '?token=<WS_TOKEN>' : ''}`;
logger.info(
  {
    websocketUrl,
    webhookUrl: `${base}/webhook`,
    llmEndpoint: hotline.llmEndpoint,
    model: config.llm.model,
    promptsDir: config.promptsDir,
    transcriptsDir: config.transcriptsDir,
  },
  `Hotline is listening on ${config.host}:${hotline.port}. Configure the AI flow's WebSocket URL as ${websocketUrl}`,
);
if (!config.auth.webhookSecret) {
  logger.warn('WEBHOOK_SECRET is not set: anyone who knows the URL can post webhook events. Set it to the AI flow\'s shared secret.');
}
if (!config.auth.wsToken) {
  logger.warn('WS_TOKEN is not set: WebSocket connections are not authenticated. Set it and add ?token=… to the WebSocket URL.');
}
if (config.adminToken) {
  const { apiUrl, accessToken } = config.outbound;
  logger.info(
    { adminApi: `${base}/api/calls`, outboundConfigured: Boolean(apiUrl && accessToken) },
    apiUrl && accessToken
      ? 'outbound calls: POST /api/calls (npm run call) is on'
      : 'admin API is on, but outbound calls need AIFLOW_API_URL and AIFLOW_ACCESS_TOKEN',
  );
}
if (config.llm.mode === 'demo') {
  const lines = [
    'DEMO MODE: no LLM is configured; replies come from a scripted model.',
    'Set OPENAI_API_KEY (and OPENAI_BASE_URL for endpoints other than OpenAI)',
    'and LLM_MODEL to talk to a real LLM. See .env.example.',
  ];
  const width = Math.max(...lines.map((l) => l.length));
  const rule = `  ${'*'.repeat(width + 6)}`;
  logger.warn(['', rule, ...lines.map((l) => `  *  ${l.padEnd(width)}  *`), rule].join('\n'));
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  await hotline.shutdown(config.limits.shutdownGraceMs);
  logger.flush();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
