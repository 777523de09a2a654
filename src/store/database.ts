/**
 * Hotline's embedded database: one SQLite file (better-sqlite3) for the
 * record of calls, their reports and the webhook queue — and, next, campaigns.
 *
 * better-sqlite3 is synchronous on purpose: a row is on disk when the call
 * returns, so a process that dies right after still has it, and a write
 * costs tens of microseconds, less than awaiting a promise would. Node's own
 * `node:sqlite` would do the same without a native module, but it is not in
 * Node 20 (it came with 22.5, behind a flag until 22.13).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { SQLITE_MIGRATIONS } from './sqlite/migrations.js';
import { openFailure } from './sqlite/open-failure.js';

export type Sql = BetterSqlite3.Database;

/** How long a write waits for another connection's lock (a second process, an operator's sqlite3 shell) before it fails. */
const BUSY_TIMEOUT_MS = 5_000;

export class Database {
  private constructor(
    /** The connection, for the repositories' prepared statements. */
    readonly sql: Sql,
    readonly file: string,
  ) {}

  /**
   * Opens (or creates, with its folder) the database at `file` and brings its
   * schema up to date; `':memory:'` for a database that lives as long as the
   * object. A file that cannot be opened, or was written by a newer Hotline,
   * stops the start with a line that says what to do.
   */
  static open(file: string, logger: Logger): Database {
    const memory = file === ':memory:';
    let sql: Sql;
    try {
      if (!memory) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      sql = new BetterSqlite3(file, { timeout: BUSY_TIMEOUT_MS });
    } catch (error) {
      throw new ConfigError(openFailure(file, error), { cause: error });
    }
    try {
      // WAL: readers never wait for the writer. NORMAL is safe with WAL against a crash of
      // the process (only a power cut can lose the last commits) and spares an fsync per write.
      if (!memory) sql.pragma('journal_mode = WAL');
      sql.pragma('synchronous = NORMAL');
      sql.pragma('foreign_keys = ON');
      migrate(sql, file, logger);
    } catch (error) {
      sql.close();
      // A damaged file, a lock or a read-only disk shows only once SQLite reads or writes it.
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(openFailure(file, error), { cause: error });
    }
    return new Database(sql, file);
  }

  get open(): boolean {
    return this.sql.open;
  }

  /** Runs `work` in one transaction: all of its writes, or none. */
  transaction<T>(work: () => T): T {
    return this.sql.transaction(work)();
  }

  /** Idempotent: a second close does nothing. */
  close(): void {
    if (this.sql.open) this.sql.close();
  }
}

function migrate(sql: Sql, file: string, logger: Logger): void {
  const version = sql.pragma('user_version', { simple: true });
  if (typeof version !== 'number') throw new Error(`PRAGMA user_version answered ${String(version)}`);
  if (version > SQLITE_MIGRATIONS.length) {
    throw new ConfigError(
      `DATABASE_FILE ${file} has schema version ${version}, newer than this Hotline knows (${SQLITE_MIGRATIONS.length}): ` +
        'run the Hotline release that wrote it, or point DATABASE_FILE at another file',
    );
  }
  for (let next = version; next < SQLITE_MIGRATIONS.length; next++) {
    sql.transaction(() => {
      sql.exec(SQLITE_MIGRATIONS[next]!);
      // PRAGMA takes no bound parameters; `next + 1` is a number of ours.
      sql.pragma(`user_version = ${next + 1}`);
    })();
    logger.info({ file, version: next + 1 }, 'database schema updated');
  }
}

