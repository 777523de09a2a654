import { PostgresDialect, type Dialect } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';

/** How many connections one Hotline holds at most: calls queue for one rather than open more. */
const POOL_MAX = 10;
/** A connection attempt or a query that gets no answer fails, so its write can be tried again. */
const CONNECT_TIMEOUT_MS = 5_000;
const QUERY_TIMEOUT_MS = 30_000;

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Counts and epoch milliseconds come back as numbers, as they do from SQLite: pg gives BIGINT
 * and NUMERIC as strings, for values beyond 2^53 no Hotline column ever holds.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 || oid === NUMERIC ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** `max`: connections at most (the store's own pool: 10; a helper's, fewer). */
export function postgresPool(url: string, logger: Logger, max = POOL_MAX): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    types,
    application_name: 'hotline',
  });
  // An idle connection the server closed (a restart, a failover) is an event, not a crash: the pool replaces it.
  pool.on('error', (error) => logger.warn({ err: { message: error.message, code: (error as { code?: unknown }).code } }, 'a PostgreSQL connection was lost'));
  return pool;
}

export function postgresDialect(pool: pg.Pool): Dialect {
  return new PostgresDialect({ pool });
}

/** Any number, the same in every Hotline: the advisory lock that lets one process migrate at a time. */
const MIGRATION_LOCK = 0x484f544c; // "HOTL"

/**
 * A step may rewrite every call's row (step 5 works each call's cost out of its turns: some 3 s per
 * 50,000 calls), and a process starting meanwhile waits for the lock as long: both get far longer
 * than a query's QUERY_TIMEOUT_MS, which would stop a large store's start half-way, every time.
 */
const MIGRATION_TIMEOUT_MS = 30 * 60_000;

/** A connection of its own for the migration: the pool's settings, the migration's time limit. */
async function migrationClient(pool: pg.Pool, logger: Logger): Promise<pg.Client> {
  const client = new pg.Client({ ...pool.options, query_timeout: MIGRATION_TIMEOUT_MS });
  // A connection lost mid-step fails the step's query anyway; without a listener it would end the process.
  client.on('error', (error) => logger.warn({ err: { message: error.message } }, 'the PostgreSQL connection migrating the schema was lost'));
  await client.connect();
  return client;
}

/**
 * Applies the steps the database has not had, each in a transaction, under an advisory lock: two
 * processes starting together migrate once; the second waits, then finds nothing to do.
 */
export async function migratePostgres(pool: pg.Pool, where: string, logger: Logger): Promise<number[]> {
  const client = await migrationClient(pool, logger);
  const migrated: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS hotline_schema (version INTEGER NOT NULL, applied_at TEXT NOT NULL)');
      const { rows } = await client.query<{ version: number | null }>('SELECT MAX(version) AS version FROM hotline_schema');
      const version = rows[0]?.version ?? 0;
      if (version > POSTGRES_MIGRATIONS.length) {
        throw new ConfigError(
          `DATABASE_URL ${where} has schema version ${version}, newer than this Hotline knows (${POSTGRES_MIGRATIONS.length}): ` +
            'run the Hotline release that wrote it, or point DATABASE_URL at another database',
        );
      }
      for (let next = version; next < POSTGRES_MIGRATIONS.length; next++) {
        await client.query('BEGIN');
        try {
          await client.query(POSTGRES_MIGRATIONS[next]!);
          await client.query('INSERT INTO hotline_schema (version, applied_at) VALUES ($1, $2)', [next + 1, new Date().toISOString()]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
        migrated.push(next + 1);
        logger.debug({ database: where, version: next + 1 }, 'database schema step applied');
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await client.end();
  }
  return migrated;
}

/** The server and database a URL names, without its password: for logs and errors. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = parsed.password ? '***' : '';
    return parsed.toString();
  } catch {
    return 'postgres://(unreadable URL)';
  }
}
