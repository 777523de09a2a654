/**
 * The record of every call: SQLite (DATABASE_FILE) on a thread of its own, or PostgreSQL
 * (DATABASE_URL), and this process as one of the replicas sharing it: named, beating, and settling
 * what dead ones left.
 */
import { ReplicaRegistry } from '../cluster/replica-registry.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { openStore, type Store } from '../store/store.js';
import type { OpenedStack } from './opened.js';

export interface StoreFeature {
  readonly store: Store;
  readonly replica: ReplicaRegistry;
  /** How many replicas share the request budgets: counted at each heartbeat, never per request. */
  readonly replicasAlive: () => number;
}

export async function openStoreFeature(config: Config, logger: Logger, opened: OpenedStack): Promise<StoreFeature> {
  const store = await openStore({ databaseFile: config.databaseFile, databaseUrl: config.databaseUrl }, logger, { claim: true });
  opened.push('the store', { close: () => store.close() });
  const replica = await ReplicaRegistry.join(store, config.replica, logger);
  opened.push('this replica', {
    // The others see it stopping at once: no call is handed to it.
    stopTaking: () => replica.stopping().catch((error: unknown) => logger.warn({ err: error }, 'the other replicas could not be told this one stops')),
    close: () =>
      replica.leave().catch((error: unknown) => logger.warn({ err: error }, 'this replica could not leave the store; the others will find it stopped beating')),
  });
  let alive = 1;
  replica.onBeat(() => {
    replica.alive().then(
      (replicas) => (alive = Math.max(1, replicas.length)),
      () => undefined,
    );
  });
  return { store, replica, replicasAlive: () => alive };
}
