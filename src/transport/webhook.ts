import express, { type Request, type Response, type Router } from 'express';
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { AnswerSchema } from '../protocol/actions.js';
import type { VoiceEvent } from '../protocol/events.js';
import { describeIssues, parseEvent } from '../protocol/parse-event.js';
import { clientAddressOf, secretMatches, webhookSecretOf, type ProxyTrust, type SecretGate } from './auth.js';
import { HttpError } from './http-error.js';
import type { AccessLimits } from './rate-limit.js';
import type { WebhookCalls } from './webhook-calls.js';
import { requireClusterSecret } from './internal-api.js';

export interface WebhookOptions {
  registry: CallRegistry;
  metrics: Metrics;
  calls: WebhookCalls;
  logger: Logger;
  secret: string | undefined;
  maxBytes: number;
  /** Per-address limits, applied once the secret has been checked. */
  limits: AccessLimits;
  /** Which X-Forwarded-For hops name the client; the same function as the app's "trust proxy". */
  proxyTrust: ProxyTrust;
  /**
   * Replicas sharing the store: which one answers each event (cluster/webhook-routing.ts). Without
   * it every event is answered here, as one Hotline alone answers.
   */
  route?: EventRoute | undefined;
}

/**
 * What stands in front of this replica's own answer to an event: another replica may be the one to
 * answer it. Declared here, where it is used, and given by the cluster (cluster/webhook-routing.ts).
 */
export interface EventRoute {
  /**
   * 'here' to answer the event here, or the answer another replica gave, to be sent as it is.
   * A value, not a promise, when nothing had to be waited for: an event of a call held here waits
   * for nothing.
   */
  route(event: VoiceEvent, raw: Buffer): Routed | Promise<Routed>;
  /** An event was answered here, its answer sent. */
  answered(sessionId: string): void;
}

export type Routed = 'here' | Relayed;

/** Another replica's answer to an event forwarded to it. */
export interface Relayed {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

/** Where a replica takes the events another one forwards to it. */
export const INTERNAL_WEBHOOK_PATH = '/internal/webhook';

/**
 * POST /webhook: one event per request, answered 200 with one action or 204.
 * A thin edge: checks, then the same call core as the WebSocket.
 */
export function webhookRouter(options: WebhookOptions): Router {
  const router = express.Router();
  const handleWebhookEvent = webhookEventHandler(options, options.route);

  router.post(
    '/webhook',
    function countWebhookAnswers(_req, res, next) {
      res.on('finish', () => options.metrics.webhookAnswered(res.statusCode));
      next();
    },
    // Authentication first: an address out of failures is refused before its secret is compared, and a
    // wrong secret is counted apart: it never spends the budget of the service it may pretend to be.
    async function authenticateThenLimit(req, _res, next) {
      const { secret } = options;
      const authenticates = secret === undefined ? undefined : () => secretMatches(webhookSecretOf(req), secret);
      const admission = await options.limits.admit(clientAddressOf(req, options.proxyTrust), authenticates);
      if (admission === 'limited') throw new HttpError(429, 'too many requests');
      if (admission === 'unauthorized') throw new HttpError(401, 'missing or wrong X-API-TOKEN');
      next();
    },
    function requireJson(req, _res, next) {
      if (!req.is(['application/json', 'application/*+json'])) {
        throw new HttpError(415, 'Content-Type must be application/json');
      }
      next();
    },
    // Raw bytes, so that this module decides what invalid JSON means; the limit answers 413.
    express.raw({ type: () => true, limit: options.maxBytes }),
    handleWebhookEvent,
  );

  router.all('/webhook', function webhookMethodNotAllowed(_req, res) {
    res.set('Allow', 'POST').status(405).json({ error: 'use POST' });
  });
  return router;
}

/**
 * POST /internal/webhook, on the replicas' own listener: an event of a call this replica owns,
 * forwarded by the replica the balancer sent it to. The cluster's secret, and its own route (which
 * forwards on only a call this replica has handed over since).
 */
export function internalWebhookRouter(options: WebhookOptions & { route: EventRoute; clusterSecret: string; gate: SecretGate }): Router {
  const router = express.Router();
  router.post(
    INTERNAL_WEBHOOK_PATH,
    requireClusterSecret(options.clusterSecret, options.gate),
    express.raw({ type: () => true, limit: options.maxBytes }),
    webhookEventHandler(options, options.route),
  );
  return router;
}

/** One event's way through: parsed once, then another replica's answer relayed or the event answered here. */
function webhookEventHandler(options: WebhookOptions, route: EventRoute | undefined): (req: Request, res: Response) => Promise<void> {
  const { logger, registry } = options;
  return async function handleWebhookEvent(req: Request, res: Response): Promise<void> {
    const body: unknown = req.body;
    const raw = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    const parsed = parseEvent(raw.toString('utf8'));
    if (parsed.kind === 'invalid') {
      logger.warn({ reason: parsed.reason, sessionId: parsed.sessionId }, 'malformed webhook event');
      throw new HttpError(400, parsed.reason);
    }
    if (parsed.kind === 'unknown') {
      logger.info({ type: parsed.type, sessionId: parsed.sessionId }, 'unknown event type ignored');
      res.status(204).end();
      return;
    }
    const { event } = parsed;
    if (route) {
      let routed = route.route(event, raw);
      if (routed instanceof Promise) routed = await routed;
      if (routed !== 'here') return relay(res, routed);
    }
    const id = event.session.id;
    // A call this process does not know yet (a start, or one to adopt: a restart, another instance) that it cannot take now.
    if (!registry.canAccept && event.type !== 'session_end' && !registry.get(id) && !registry.isLate(event)) {
      throw new HttpError(503, registry.isAccepting ? 'too many calls: try again later' : 'shutting down');
    }
    let pending;
    try {
      pending = options.calls.answer(event);
    } catch (error) {
      throw new HttpError(500, 'internal error', { cause: error, sessionId: id });
    }
    const action = await pending.answer;
    if (res.writableEnded || res.destroyed) {
      pending.done(false);
      return;
    }
    if (!action) {
      pending.done(true);
      res.status(204).end();
      route?.answered(id);
      return;
    }
    const checked = AnswerSchema.safeParse(action);
    if (!checked.success) {
      pending.done(true);
      logger.error({ sessionId: id, problem: describeIssues(checked.error) }, 'invalid action not sent');
      res.status(204).end();
      route?.answered(id);
      return;
    }
    res.status(200).json(checked.data);
    pending.done(true);
    route?.answered(id);
  };
}

function relay(res: Response, relayed: Relayed): void {
  if (relayed.contentType) res.type(relayed.contentType);
  res.status(relayed.status).send(relayed.body);
}
