/**
 * Hotline's store: the record of calls, their reports and deliveries, and the campaigns. One
 * asynchronous interface (a Kysely query builder) over either database:
 *
 * - SQLite, the default: one file, no configuration, its one connection on a thread of its own
 *   (sqlite/worker-dialect.ts), so nothing the file does can stop the calls' event loop.
 * - PostgreSQL with DATABASE_URL: several Hotline processes can share it; a bounded pool.
 *
 * Either is migrated when opened, under a lock, so processes starting together migrate once.
 */
import { Kysely, sql } from 'kysely';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { describePostgresUrl, migratePostgres, postgresDialect, postgresPool } from './postgres/postgres-dialect.js';
import type { Db, Dialect } from './schema.js';
import { IN_USE_CODE, inUseMessage } from './sqlite/in-use.js';
import { openFailure } from './sqlite/open-failure.js';
import { workerSqliteDialect } from './sqlite/worker-dialect.js';
import { SQLITE_MIGRATIONS } from './sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from './postgres/migrations.js';
import { StoreError } from './store-errors.js';

/** How long a write waits (on the SQLite thread) for another program's lock before it fails and is tried again later. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface StoreLocation {
  /** The SQLite file (or ':memory:'), used unless `databaseUrl` is set. */
  readonly databaseFile: string;
  /** postgres://… — the store is PostgreSQL. */
  readonly databaseUrl?: string | undefined;
}

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The file, or the PostgreSQL URL without its password: for logs, errors and status. */
  readonly where: string;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Default true. False only to look (`npm run db -- status`): a schema behind this Hotline's is left as it is. */
  readonly migrate?: boolean;
  /**
   * A Hotline server's store: a SQLite file is claimed for this process alone, and a second server
   * on it stops at once, naming the first. The CLIs open the file beside a running server and do not claim it.
   */
  readonly claim?: boolean;
}

export async function openStore(location: StoreLocation, logger: Logger, options: OpenOptions = {}): Promise<Store> {
  const migrate = options.migrate ?? true;
  return location.databaseUrl
    ? openPostgres(location.databaseUrl, logger, migrate)
    : openSqlite(location.databaseFile, logger, migrate, options.claim ?? false);
}

/** The schema version the database has, and the one this Hotline brings. */
export async function schemaVersion(store: Store): Promise<{ current: number; latest: number }> {
  if (store.dialect === 'sqlite') {
    const { rows } = await sql<{ user_version: number }>`PRAGMA user_version`.execute(store.db);
    return { current: rows[0]?.user_version ?? 0, latest: SQLITE_MIGRATIONS.length };
  }
  const { rows } = await sql<{ version: number | null }>`SELECT MAX(version) AS version FROM hotline_schema`.execute(store.db).catch(() => ({
    rows: [{ version: 0 }],
  }));
  return { current: rows[0]?.version ?? 0, latest: POSTGRES_MIGRATIONS.length };
}

/** One line for the steps a start applied (a new database takes them all), not one per step. */
function logMigrated(log: Logger, versions: readonly number[]): void {
  const last = versions.at(-1);
  if (last === undefined) return;
  const from = versions[0]! - 1;
  log.info({ version: last, from, steps: versions.length }, `database schema updated from version ${from} to ${last}`);
}

async function openSqlite(file: string, logger: Logger, migrate: boolean, claim: boolean): Promise<Store> {
  const log = logger.child({ database: file });
  const db: Db = new Kysely({
    dialect: workerSqliteDialect(
      { file, busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS, migrate, claim },
      {
        onWarning: (message) => log.warn(message),
        onMigrated: (versions) => logMigrated(log, versions),
      },
    ),
  });
  try {
    // The thread opens and migrates the file before its first answer: a file that cannot be used stops the start here.
    await sql`SELECT 1`.execute(db);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    if (error instanceof StoreError && error.code === IN_USE_CODE) throw new ConfigError(inUseMessage(file, error.message), { cause: error });
    if (error instanceof StoreError && error.code === 'HOTLINE_SCHEMA_TOO_NEW') {
      throw new ConfigError(
        `DATABASE_FILE ${file}: its ${error.message}: run the Hotline release that wrote it, or point DATABASE_FILE at another file`,
        { cause: error },
      );
    }
    throw new ConfigError(openFailure(file, error), { cause: error });
  }
  return { db, dialect: 'sqlite', where: file, close: () => db.destroy() };
}

async function openPostgres(url: string, logger: Logger, migrate: boolean): Promise<Store> {
  const where = describePostgresUrl(url);
  const pool = postgresPool(url, logger.child({ database: where }));
  try {
    if (migrate) logMigrated(logger.child({ database: where }), await migratePostgres(pool, where, logger));
    else await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof ConfigError) throw error;
    const { message, code } = error as { message?: unknown; code?: unknown };
    throw new ConfigError(
      `DATABASE_URL ${where} cannot be used (${typeof code === 'string' ? `${code}: ` : ''}${String(message)}): ` +
        'check that the server runs and is reachable, that the database exists and that the user may create tables in it',
      { cause: error },
    );
  }
  const db: Db = new Kysely({ dialect: postgresDialect(pool) });
  const close = async (): Promise<void> => {
    await db.destroy();
    // Kysely ends the pool only if it ran a query; one that only migrated keeps the process alive for the idle timeout.
    if (!pool.ended) await pool.end();
  };
  return { db, dialect: 'postgres', where, close };
}
