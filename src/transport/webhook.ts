import express, { type Request, type Response, type Router } from 'express';
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import { AnswerSchema } from '../protocol/actions.js';
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
   * Replicas sharing the store: an event of a call another replica owns goes there, and its answer
   * comes back (cluster/webhook-owners.ts). `secret` is what they present to each other.
   */
  peers?: WebhookPeers | undefined;
}

/** The other replicas, as the webhook edge sees them (cluster/webhook-handover.ts). */
export interface WebhookPeers {
  readonly secret: string;
  /** Where an event of a call this replica does not hold goes: another replica's answer, or undefined to answer here. */
  route(sessionId: string, starting: boolean, raw: Buffer): Promise<Relayed | undefined>;
  /** A hand-over of this call to another replica under way here: its events wait for it. */
  settled(sessionId: string): Promise<void> | undefined;
  /** This replica handed the call over: its events go on to the replica that has it, even those forwarded here. */
  handedOver(sessionId: string): boolean;
  /** An event of a call here was answered: a stopping replica may hand the call over now. */
  answered(sessionId: string): void;
  /** A call this replica cannot take, stopping: another replica's answer, or undefined when none can take it. */
  passOn(sessionId: string, raw: Buffer): Promise<Relayed | undefined>;
}

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
  const handleWebhookEvent = webhookEventHandler(options);

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
    (req: Request, res: Response) => handleWebhookEvent(req, res, true),
  );

  router.all('/webhook', function webhookMethodNotAllowed(_req, res) {
    res.set('Allow', 'POST').status(405).json({ error: 'use POST' });
  });
  return router;
}

/**
 * POST /internal/webhook, on the replicas' own listener: an event of a call this replica owns,
 * forwarded by the replica the balancer sent it to. The cluster's secret, and no forwarding on.
 */
export function internalWebhookRouter(options: WebhookOptions & { peers: WebhookPeers; gate: SecretGate }): Router {
  const router = express.Router();
  const handleWebhookEvent = webhookEventHandler(options);
  router.post(
    INTERNAL_WEBHOOK_PATH,
    requireClusterSecret(options.peers.secret, options.gate),
    express.raw({ type: () => true, limit: options.maxBytes }),
    (req: Request, res: Response) => handleWebhookEvent(req, res, false),
  );
  return router;
}

/** One event's way through, from either route: parsed, passed to its call's replica or answered here. */
function webhookEventHandler(options: WebhookOptions): (req: Request, res: Response, mayForward: boolean) => Promise<void> {
  const { logger, peers } = options;
  return async function handleWebhookEvent(req: Request, res: Response, mayForward: boolean): Promise<void> {
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
    const id = event.session.id;
    const handingOver = peers?.settled(id);
    if (handingOver) await handingOver;
    if (peers && (mayForward || peers.handedOver(id)) && !options.registry.get(id)) {
      let relayed: Relayed | undefined;
      try {
        relayed = await peers.route(id, event.type === 'session_start', raw);
      } catch (error) {
        // The store could not say who owns the call: this replica answers, as a single Hotline would.
        logger.warn({ err: error, sessionId: id }, 'the owner of this webhook call could not be looked up; answering here');
      }
      if (relayed) return relay(res, relayed);
    }
    // A call this process does not know yet: a start, or one to adopt (a restart, another instance).
    const newCall = event.type !== 'session_end' && !options.registry.get(id) && !options.registry.isLate(event);
    if (newCall && !options.registry.canAccept) {
      // Stopping: the others take the call (its session_start came in as this replica began to stop).
      const passed =
        peers && !options.registry.isAccepting
          ? await peers.passOn(id, raw).catch((error: unknown) => {
              logger.warn({ err: error, sessionId: id }, 'a new call could not be passed to another replica; refused');
              return undefined;
            })
          : undefined;
      if (passed) return relay(res, passed);
      throw new HttpError(503, options.registry.isAccepting ? 'too many calls: try again later' : 'shutting down');
    }
    let pending;
    try {
      pending = options.calls.answer(event);
    } catch (error) {
      throw new HttpError(500, 'internal error', { cause: error, sessionId: event.session.id });
    }
    const action = await pending.answer;
    if (res.writableEnded || res.destroyed) {
      pending.done(false);
      return;
    }
    if (!action) {
      pending.done(true);
      res.status(204).end();
      peers?.answered(id);
      return;
    }
    const checked = AnswerSchema.safeParse(action);
    if (!checked.success) {
      pending.done(true);
      logger.error({ sessionId: event.session.id, problem: describeIssues(checked.error) }, 'invalid action not sent');
      res.status(204).end();
      peers?.answered(id);
      return;
    }
    res.status(200).json(checked.data);
    pending.done(true);
    peers?.answered(id);
  };
}

function relay(res: Response, relayed: Relayed): void {
  if (relayed.contentType) res.type(relayed.contentType);
  res.status(relayed.status).send(relayed.body);
}
