/**
 * One Hotline server per SQLite file: the server holds a write transaction open on a small lock
 * database beside the file (`hotline.db.lock`) for as long as it runs. The lock is SQLite's own
 * (a POSIX lock on Unix): the system releases it when the process ends, however it ends, so there
 * is no stale lock file to clear and no process id that another program may have been given since.
 * A second server finds the lock taken at once and reads, from the same small file, which process
 * holds it. The CLIs (`npm run db`, `npm run data`) open the database itself and never this lock:
 * they keep working beside a running Hotline.
 *
 * Not `PRAGMA locking_mode = EXCLUSIVE` on the database itself: that would lock out the dashboard's
 * reading threads and the CLIs too.
 */
import { hostname } from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { inUseError, type FileOwner } from './in-use.js';

/** How long reading the owner may wait while the holder is writing it (a few milliseconds). */
const READ_WAIT_MS = 1_000;
/** A holder that let go between its two steps is looked at again this often before giving up. */
const ATTEMPTS = 3;

export function lockFileOf(file: string): string {
  return `${file}.lock`;
}

/**
 * Claims `file` for this process; the connection returned holds the claim until it is closed.
 * Throws an in-use error (in-use.ts) when another process holds it.
 */
export function claimFile(file: string): BetterSqlite3.Database {
  const lock = new BetterSqlite3(lockFileOf(file), { timeout: 0 });
  try {
    for (let attempt = 1; ; attempt++) {
      if (tryBegin(lock)) {
        lock.exec('CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, host TEXT NOT NULL, since TEXT NOT NULL)');
        lock.prepare('INSERT OR REPLACE INTO owner (id, pid, host, since) VALUES (1, ?, ?, ?)').run(process.pid, hostname(), new Date().toISOString());
        // Committed, so that a second server can read who holds the file; then held again at once.
        lock.exec('COMMIT');
        if (tryBegin(lock)) return lock;
      }
      if (attempt >= ATTEMPTS) throw inUseError(readOwner(lock));
    }
  } catch (error) {
    lock.close();
    throw error;
  }
}

/** BEGIN IMMEDIATE takes SQLite's write lock, or fails at once when another connection has it. */
function tryBegin(lock: BetterSqlite3.Database): boolean {
  try {
    lock.exec('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return false;
    throw error;
  }
}

function readOwner(lock: BetterSqlite3.Database): FileOwner | undefined {
  lock.pragma(`busy_timeout = ${READ_WAIT_MS}`);
  try {
    const row = lock.prepare('SELECT pid, host, since FROM owner WHERE id = 1').get() as FileOwner | undefined;
    return row && typeof row.pid === 'number' ? row : undefined;
  } catch {
    // Its holder is still writing who it is (the table is not there yet): a Hotline starting this moment.
    return undefined;
  }
}
