import cluster from 'node:cluster';
import type { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { config as loadDotenv } from 'dotenv';
import { command, commandLineOrExit } from './command-line.js';
import { loadConfig, type Config } from './config.js';
import { checkLlmAtStartup } from './llm/startup-check.js';
import { createLogger, createScrubber } from './logger.js';
import { startHotline, type RunningHotline } from './server.js';
import { announceStartup } from './startup/announce.js';
import { logSecrets } from './startup/log-secrets.js';
import { onStopSignals } from './startup/signals.js';
import { startupErrorText } from './startup/startup-error.js';
import { redactorOf } from './privacy/redactor-of.js';
import { runWorkers } from './startup/workers.js';

// Its modules are loaded: `npm start` (scripts/start.mjs) stops saying it waits for them.
(process as EventEmitter).emit('hotline:loaded');

const START = command({
  name: 'start',
  usage: `Usage: npm run start --     (or npm start; npm run dev runs the TypeScript and restarts on changes)

Runs Hotline: the phone agent behind a voice service's AI flow, on PORT (default 3000). It takes no
options: everything is configured by environment variables or a .env file in the working directory —
OPENAI_API_KEY, OPENAI_BASE_URL and LLM_MODEL for the LLM (none set: the built-in demo model),
PUBLIC_URL, WS_TOKEN, WEBHOOK_SECRET, PROMPTS_DIR, TRANSCRIPTS_DIR, … Every one is listed, with its
default, in .env.example.

Example:
  npm run start --      (the demo model; OPENAI_BASE_URL=http://localhost:11434/v1 LLM_MODEL=llama3.1 in front: Ollama)`,
  options: {},
  allowPositionals: false,
});
commandLineOrExit(START, process.argv.slice(2), () => undefined);

// From the working directory, as people are told to put it there; the environment wins.
loadDotenv({ quiet: true });

/** A failed start is one line on stderr that says what to fix, and exit code 1: no stack trace. */
function exitOnStartupError(error: unknown, config: Config | undefined): never {
  const target = { host: config?.host ?? '0.0.0.0', port: config?.port ?? 3000 };
  const debug = config?.logLevel === 'debug' || config?.logLevel === 'trace';
  const scrub = createScrubber(config ? logSecrets(config) : []);
  process.stderr.write(`${scrub(startupErrorText(error, target, { debug }))}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  exitOnStartupError(error, undefined);
}

const logger = createLogger({ level: config.logLevel, env: config.env, secrets: logSecrets(config), redact: redactorOf(config.privacy.redaction) });

// WORKERS=N: this process only starts and watches N Hotline processes on its port (startup/workers.ts).
if (cluster.isPrimary && config.workers > 1) {
  // Each worker runs this file, whatever started this process (npm start runs scripts/start.mjs).
  runWorkers(config, logger, fileURLToPath(import.meta.url));
} else {
  await run(config);
}

async function run(config: Config): Promise<void> {
  // Last line of defence: log, never crash a process that carries live calls.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  let hotline: RunningHotline;
  try {
    // A worker of WORKERS is reached by the others on a loopback port of its own: the shared one reaches any worker.
    hotline = await startHotline(config, logger, { worker: cluster.isWorker });
  } catch (error) {
    exitOnStartupError(error, config);
  }

  announceStartup(logger, config, hotline);
  if (config.llm.mode === 'remote' && config.llm.checkAtStart) void checkLlmAtStartup(config, logger, hotline.llmEndpoint);

  onStopSignals(
    logger,
    async (signal) => {
      const seconds = config.limits.shutdownGraceMs / 1000;
      logger.info({ signal }, `shutting down: calls in progress may finish within ${seconds} s (SHUTDOWN_GRACE_MS); a second Ctrl-C (SIGINT or SIGTERM) stops at once`);
      await hotline.shutdown(config.limits.shutdownGraceMs);
    },
    undefined,
    cluster.isWorker ? ['SIGTERM'] : ['SIGTERM', 'SIGINT'],
  );
}
