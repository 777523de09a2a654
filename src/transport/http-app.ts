import express, { type ErrorRequestHandler, type Express, type Router } from 'express';
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { bearerTokenOf, checkSecret, type ProxyTrust, type SecretGate } from './auth.js';
import { HttpError } from './http-error.js';

export interface HttpAppOptions {
  registry: CallRegistry;
  metrics: Metrics;
  logger: Logger;
  llm: { mode: 'remote' | 'demo'; model: string };
  routers: Router[];
  /** The same function the transports use, so that `req.ip` names the client they rate-limit. */
  proxyTrust: ProxyTrust;
  /** Bearer token GET /metrics requires; undefined leaves it open. */
  metricsToken: string | undefined;
  /** The failure budget a wrong metrics token spends, shared with every other edge. */
  gate: SecretGate;
  /** How far behind the database the calls' record is: shown by /readyz (calls go on either way). */
  storeBacklog?: (() => { pending: number; oldestMs: number; failing: string | undefined }) | undefined;
}

export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.proxyTrust);

  app.get('/healthz', function healthz(_req, res) {
    res.json({
      status: 'ok',
      calls: options.registry.size,
      llm:
        options.llm.mode === 'demo'
          ? { mode: 'demo', model: options.llm.model, warning: 'DEMO MODEL: scripted replies, no real LLM configured' }
          : { mode: 'remote', model: options.llm.model },
    });
  });

  // Liveness above, readiness here: a draining or full Hotline is alive but takes no new calls.
  app.get('/readyz', function readyz(_req, res) {
    const { registry } = options;
    const ready = registry.canAccept;
    const backlog = options.storeBacklog?.();
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : registry.isAccepting ? 'full' : 'shutting down',
      calls: registry.size,
      // A database that is away does not make Hotline unready: calls go on and their records wait.
      ...(backlog && {
        store: {
          behind: backlog.pending > 0,
          pending: backlog.pending,
          oldestMs: backlog.oldestMs,
          ...(backlog.failing === undefined ? {} : { failing: backlog.failing }),
        },
      }),
    });
  });

  // Metrics tell an outsider how busy Hotline is and how its LLM fails; a token keeps them in-house.
  app.get('/metrics', async function requireMetricsToken(req, res, next) {
    const { metricsToken } = options;
    if (metricsToken !== undefined) {
      res.set('WWW-Authenticate', 'Bearer');
      await checkSecret(req, options.gate, bearerTokenOf(req), metricsToken, 'metrics token');
      res.removeHeader('WWW-Authenticate');
    }
    next();
  });
  app.get('/metrics', async function metrics(_req, res) {
    res.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });

  for (const router of options.routers) app.use(router);

  answerErrorsAsJson(app, options.logger);
  return app;
}

/**
 * The replicas' own listener (INTERNAL_URL): what they ask of each other, and nothing of the public
 * app. The public port answers /internal/* with 404, so the cluster's secret cannot be tried there.
 */
export function createInternalApp(options: { routers: Router[]; logger: Logger; registry: CallRegistry }): Express {
  const app = express();
  app.disable('x-powered-by');
  // Alive until the process goes: it outlives the public port of a replica that stops (a liveness probe may ask here).
  app.get('/healthz', function internalHealthz(_req, res) {
    res.json({ status: 'ok', calls: options.registry.size });
  });
  for (const router of options.routers) app.use(router);
  answerErrorsAsJson(app, options.logger);
  return app;
}

/** Unknown paths get a JSON 404; errors a JSON message, never a stack trace or an internal detail. */
function answerErrorsAsJson(app: Express, logger: Logger): void {
  app.use(function notFound(_req, res) {
    res.status(404).json({ error: 'not found' });
  });
  const onError: ErrorRequestHandler = function jsonError(error: unknown, _req, res, _next) {
    const status = statusOf(error);
    if (status >= 500) {
      const sessionId = error instanceof HttpError ? error.sessionId : undefined;
      logger.error({ err: error instanceof HttpError && error.cause ? error.cause : error, sessionId }, 'request failed');
    }
    if (res.headersSent) return;
    if (error instanceof HttpError && error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
    // An HttpError's message is written for the client; any other server error shows a fixed
    // message, never a stack trace or an internal detail.
    const message = error instanceof HttpError || status < 500 ? messageOf(error) : 'internal error';
    res.status(status).json({ error: message });
  };
  app.use(onError);
}

/** HttpError, and the errors body parsers raise (413, 400, 415), keep their status; anything else is a 500. */
function statusOf(error: unknown): number {
  if (error && typeof error === 'object' && 'status' in error && typeof error.status === 'number') {
    return error.status >= 400 && error.status < 600 ? error.status : 500;
  }
  return 500;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : 'bad request';
}
