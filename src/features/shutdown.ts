/**
 * A graceful stop: new calls are refused (and /readyz says 503) at once, nothing more is dialled,
 * calls in progress may finish for up to `graceMs`; SHUTDOWN_NOTICE_MS before that, the callers
 * still on the line hear why and are transferred or hung up on, politely. Then everything closes.
 */
import type { CallRegistry } from '../call/call-registry.js';
import type { WebhookHandover } from '../cluster/webhook-handover.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Dialling } from './campaigns.js';
import type { Listening } from './listeners.js';
import type { StoreFeature } from './store.js';

export interface DrainParts {
  readonly registry: CallRegistry;
  readonly stored: StoreFeature;
  readonly handover: WebhookHandover | undefined;
  readonly listening: Listening;
  readonly dialling: Dialling;
  /** Closes everything (the start's stack). */
  readonly close: () => Promise<void>;
}

export function gracefulShutdown(config: Config, logger: Logger, parts: DrainParts): (graceMs: number) => Promise<void> {
  const { registry, listening } = parts;
  return async (graceMs) => {
    registry.stopAccepting();
    // The others see it stopping at once: no call is handed to it, and its webhook calls go to them.
    void parts.stored.replica.stopping().catch((error: unknown) => logger.warn({ err: error }, 'the other replicas could not be told this one stops'));
    parts.handover?.begin();
    listening.inFlight.stop();
    // Among replicas, the public port closes at once: a balancer's next connection here is refused and
    // it tries the next replica (nginx has no readiness checks; a refused connection is the one sign it
    // takes). The others forward this one's calls' events to its internal listener until each call is
    // handed over between turns. A lone Hotline keeps listening: its webhook calls' events come here.
    if (listening.internal) void listening.stopListening();
    // Nothing new is dialled: a person picking up now would reach a Hotline on its way out. Campaigns
    // stay running in the store and go on after the restart.
    parts.dialling.outboundCalls.stopDialling();
    parts.dialling.campaigns.stopDialling();
    const deadline = performance.now() + graceMs;
    // Calls may finish by themselves until the callers must be told, SHUTDOWN_NOTICE_MS before the end.
    await untilEmptyOr(registry, graceMs - config.limits.shutdownNoticeMs);
    if (registry.size > 0) {
      logger.info({ calls: registry.size }, 'shutting down: telling the callers still on the line');
      const told = registry.retireAll('shutdown');
      await Promise.race([told, untilEmptyOr(registry, deadline - performance.now())]);
    }
    await parts.close();
  };
}

/** Resolves once no call is in progress, or after `ms`. */
async function untilEmptyOr(registry: CallRegistry, ms: number): Promise<void> {
  if (ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([registry.whenEmpty(), over]);
  clearTimeout(timer);
}
