/**
 * Who may come in, read once for every edge: one reading of X-Forwarded-For, and one count of failed
 * authentications per address for every edge that compares a secret (transports, dashboard, admin
 * API, metrics), so a guesser gains nothing by switching between them. Replicas on one PostgreSQL
 * share the count: a guesser does not get the budget once per replica.
 */
import { sharedFailureCount } from '../cluster/shared-failures.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { postgresPool } from '../store/postgres/postgres-dialect.js';
import { compileProxyTrust, type SecretGate } from '../transport/auth.js';
import { FailureBudget } from '../transport/rate-limit.js';
import type { OpenedStack } from './opened.js';

/** Connections for counting wrong secrets across replicas: only failures use them. */
const FAILURE_POOL_MAX = 2;

export function openAccess(config: Config, logger: Logger, opened: OpenedStack): SecretGate {
  const proxyTrust = compileProxyTrust(config.trustProxy);
  const pool = config.databaseUrl && config.rateLimit.authFailuresPerMinute > 0 ? postgresPool(config.databaseUrl, logger, FAILURE_POOL_MAX) : undefined;
  // A shutdown then a test's close: the pool ends once.
  if (pool) opened.push('the failure count', { close: () => (pool.ended || pool.ending ? undefined : pool.end()) });
  const failures = new FailureBudget(config.rateLimit.authFailuresPerMinute, pool && sharedFailureCount(pool, config.rateLimit.authFailuresPerMinute, logger));
  return { failures, proxyTrust };
}
