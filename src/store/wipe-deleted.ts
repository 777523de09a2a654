/**
 * Deleted rows out of the database's files, not only out of its tables. A DELETE leaves the row's
 * bytes where they were until the space is used again: in SQLite's pages and in the old page copies
 * of its write-ahead log, in PostgreSQL's pages. After an erasure and a retention sweep they must go.
 *
 * - SQLite: every connection has `secure_delete` on (sqlite/sqlite-worker.ts), so a delete overwrites
 *   what it removes with zeros; the checkpoint here copies the log's pages into the file and truncates
 *   the log, whose older copies of the pages still held the rows.
 * - PostgreSQL: a plain VACUUM frees a dead row's space but leaves its bytes in the page until a new
 *   row lands there; VACUUM FULL writes the table (its TOAST table and indexes too) afresh and removes
 *   the old files. It holds the table's exclusive lock while it copies: writes to the table wait that
 *   long (the call writer's journal keeps the calls meanwhile), and it waits at most LOCK_WAIT for the lock.
 */
import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Dialect, StoreSchema } from './schema.js';

/** Whether everything deleted is gone from the files; what could not be done, when not. */
export type Wiped = { readonly complete: true } | { readonly complete: false; readonly problems: readonly string[] };

/** A reader of another process can keep the log from being truncated: tried again this often, a moment apart. */
const CHECKPOINT_TRIES = 5;
const CHECKPOINT_PAUSE_MS = 200;
/** How long VACUUM FULL waits for a table's lock before it leaves the table for the next time. */
const LOCK_WAIT = '10s';
/** How long it waits for transactions older than the deletion to end, looking this often. */
const SNAPSHOT_WAIT_MS = 10_000;
const SNAPSHOT_POLL_MS = 50;

export async function wipeDeleted(db: Db, dialect: Dialect, tables: readonly (keyof StoreSchema)[]): Promise<Wiped> {
  return dialect === 'sqlite' ? checkpoint(db) : vacuumFull(db, [...new Set(tables)]);
}

async function checkpoint(db: Db): Promise<Wiped> {
  for (let attempt = 1; ; attempt++) {
    const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
    if (rows[0]?.busy !== 1) return { complete: true };
    if (attempt === CHECKPOINT_TRIES) return { complete: false, problems: ['the write-ahead log could not be truncated: another process is reading the database'] };
    await sleep(CHECKPOINT_PAUSE_MS);
  }
}

async function vacuumFull(db: Db, tables: readonly (keyof StoreSchema)[]): Promise<Wiped> {
  if (tables.length === 0) return { complete: true };
  const problems: string[] = [];
  // VACUUM cannot run in a transaction: one connection of the pool, outside any, with its own lock wait.
  await db.connection().execute(async (connection) => {
    const open = await snapshotsOlderThanNow(connection);
    if (open !== undefined) problems.push(`${open}: what it could still read is kept; erase again once it has ended`);
    await sql.raw(`SET lock_timeout = '${LOCK_WAIT}'`).execute(connection);
    try {
      for (const table of tables) {
        try {
          await sql`VACUUM (FULL) ${sql.table(table)}`.execute(connection);
        } catch (error) {
          problems.push(`${table}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    } finally {
      await sql`RESET lock_timeout`.execute(connection);
    }
  });
  return problems.length === 0 ? { complete: true } : { complete: false, problems };
}

/**
 * Waits, at most SNAPSHOT_WAIT_MS, until nothing that began before now can still read what was
 * deleted: VACUUM FULL keeps a deleted row ("recently dead") while a snapshot older than its deletion
 * may be in use, and its bytes with it. That is a transaction still running anywhere on the server
 * (any new snapshot, the vacuum's own too, reaches back to the oldest of them), or a snapshot held in
 * this database (a long query; a connection not yet in any database counts too). What still holds
 * one when the wait ends; nothing when the vacuum may take everything deleted.
 */
async function snapshotsOlderThanNow(connection: Db): Promise<string | undefined> {
  // A transaction id of its own, newer than every delete before it: what an older snapshot is told by.
  const { rows } = await sql<{ xid: string }>`SELECT pg_current_xact_id()::text AS xid`.execute(connection);
  const now = rows[0]!.xid;
  const now32 = (BigInt(now) % 2n ** 32n).toString();
  for (let waited = 0; ; waited += SNAPSHOT_POLL_MS) {
    const older = await sql<{ running: boolean; pids: number[] | null }>`
      SELECT pg_snapshot_xmin(pg_current_snapshot()) <= ${now}::xid8 AS running,
        (SELECT array_agg(pid) FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND (datid IS NULL OR datname = current_database()) AND age(backend_xmin) >= age(${now32}::xid)) AS pids`.execute(connection);
    const { running, pids } = older.rows[0]!;
    if (!running && pids === null) return undefined;
    if (waited >= SNAPSHOT_WAIT_MS) return pids === null ? 'a transaction older than the deletion was still running' : `snapshots older than the deletion were still in use (pid ${pids.join(', ')})`;
    await sleep(SNAPSHOT_POLL_MS);
  }
}
