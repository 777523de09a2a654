import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.js';
import type { SharedFailureCount } from '../transport/rate-limit.js';

/**
 * Wrong secrets per address, counted across the replicas sharing PostgreSQL (its `auth_failures`
 * table, rate-limiter-flexible's). A database that cannot count leaves each replica its own budget.
 */
export function sharedFailureCount(pool: pg.Pool, perMinute: number, logger: Logger): SharedFailureCount {
  const limiter = new RateLimiterPostgres({
    storeClient: pool,
    storeType: 'pool',
    tableName: 'auth_failures',
    tableCreated: true,
    points: perMinute,
    duration: 60,
    keyPrefix: 'auth',
    clearExpiredByTimeout: true,
  });
  return {
    async count(address) {
      try {
        const res = await limiter.penalty(address, 1);
        return { failures: res.consumedPoints, msLeft: res.msBeforeNext };
      } catch (error) {
        if (error instanceof RateLimiterRes) return { failures: error.consumedPoints, msLeft: error.msBeforeNext };
        logger.warn({ err: error }, 'wrong secrets could not be counted across replicas; this replica counts its own');
        return undefined;
      }
    },
  };
}
