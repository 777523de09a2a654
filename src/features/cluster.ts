/**
 * Replicas on one PostgreSQL with a CLUSTER_SECRET: each webhook call has an owner among them, and
 * an event reaching another replica is forwarded to it.
 */
import { WebhookOwners } from '../cluster/webhook-owners.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { StoreFeature } from './store.js';

export function openWebhookOwners(config: Config, logger: Logger, stored: StoreFeature): WebhookOwners | undefined {
  const { clusterSecret } = config.replica;
  const { store, replica } = stored;
  const owners = clusterSecret && store.dialect === 'postgres' ? new WebhookOwners(store, replica, clusterSecret, logger) : undefined;
  if (store.dialect === 'postgres' && config.transports.has('webhook') && !owners) {
    logger.warn('webhook calls stay with one replica: with several replicas sharing DATABASE_URL, set CLUSTER_SECRET (and INTERNAL_URL) on each');
  }
  return owners;
}
