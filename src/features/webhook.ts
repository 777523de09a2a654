/**
 * The HTTP webhook, the second transport: POST /webhook when WEBHOOK is among TRANSPORTS (switched
 * off, it is not there at all: a 404 like any unknown path). Among replicas, the cluster's routing
 * stands in front of it, and the internal listener takes the events the others forward.
 */
import type { Router } from 'express';
import { WebhookRouting } from '../cluster/webhook-routing.js';
import type { WebhookOwners } from '../cluster/webhook-owners.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { SecretGate } from '../transport/auth.js';
import { AccessLimits, RateLimit } from '../transport/rate-limit.js';
import { internalWebhookRouter, webhookRouter } from '../transport/webhook.js';
import type { Calls } from './calls.js';
import type { StoreFeature } from './store.js';
import type { Telemetry } from './telemetry.js';

export interface WebhookRoutes {
  /** POST /webhook on the public port, when the transport is on. */
  readonly public: Router | undefined;
  /** POST /internal/webhook on the internal listener, among replicas. */
  readonly internal: Router | undefined;
}

export function webhookRoutes(
  config: Config,
  logger: Logger,
  parts: { calls: Calls; owners: WebhookOwners | undefined; stored: StoreFeature; telemetry: Telemetry; gate: SecretGate },
): WebhookRoutes {
  if (!config.transports.has('webhook')) return { public: undefined, internal: undefined };
  const { calls, owners, gate } = parts;
  const routing = owners && calls.handover && new WebhookRouting(owners, calls.handover, calls.registry, logger);
  const options = {
    registry: calls.registry,
    metrics: parts.telemetry.metrics,
    calls: calls.webhookCalls,
    logger,
    secret: config.auth.webhookSecret,
    maxBytes: config.maxEventBytes,
    limits: new AccessLimits(new RateLimit(config.rateLimit.webhookPerMinute, parts.stored.replicasAlive), gate.failures),
    proxyTrust: gate.proxyTrust,
  };
  const { clusterSecret } = config.replica;
  return {
    public: webhookRouter({ ...options, route: routing?.fromBalancer }),
    internal: routing && clusterSecret ? internalWebhookRouter({ ...options, route: routing.fromReplica, clusterSecret, gate }) : undefined,
  };
}
