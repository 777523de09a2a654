/**
 * The calls in progress as the dashboard shows them. Replicas on one PostgreSQL show each other's:
 * this one's go out through the database, theirs come in beside its own.
 */
import type { CallActivityObserver } from '../call/ports/call-activity.js';
import type { Redact } from '../call/ports/redaction.js';
import { LiveRelay } from '../cluster/live-relay.js';
import type { Config } from '../config.js';
import { LiveCalls } from '../dashboard/live-calls.js';
import type { Logger } from '../logger.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';

export interface LiveView {
  readonly live: LiveCalls;
  readonly relay: LiveRelay | undefined;
  /** What the calls tell of themselves as they go. */
  readonly activity: CallActivityObserver;
  /** The replica a call in progress runs on. */
  replicaOf(sessionId: string): string;
}

export async function openLiveView(config: Config, logger: Logger, stored: StoreFeature, redact: Redact, opened: OpenedStack): Promise<LiveView> {
  const live = new LiveCalls();
  // Its streams end before the calls do: a viewer is not kept waiting on a Hotline going away.
  opened.push('the live view', { stopTaking: () => live.close() });
  const relay = config.databaseUrl ? new LiveRelay(config.databaseUrl, stored.replica, live, logger, redact) : undefined;
  if (relay) {
    opened.push('the live relay', { close: () => relay.close() });
    await relay.start();
  }
  const activity: CallActivityObserver = relay
    ? {
        changed: (call) => {
          live.changed(call);
          relay.changed(call);
        },
        ended: (sessionId) => {
          live.ended(sessionId);
          relay.ended(sessionId);
        },
      }
    : live;
  return { live, relay, activity, replicaOf: (sessionId) => relay?.replicaOf(sessionId) ?? stored.replica.id };
}
