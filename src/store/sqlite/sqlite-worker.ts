/**
 * The SQLite thread: the one connection to the database file, so that a lock held by another
 * program, a slow disk or a long query waits here and never on the calls' event loop.
 * Queries are answered one at a time, in the order they came.
 *
 * It also watches the file: one deleted while Hotline runs is written back from the connection
 * still open to it, and one replaced (another inode at the path: a restored backup) is opened
 * instead, migrated first; either way the main thread hears a warning.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { claimFile } from './file-owner.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import type { FromWorker, SqlValue, ToWorker, WorkerError, WorkerSettings } from './worker-protocol.js';

const settings = workerData as WorkerSettings;
const port = parentPort!;
const memory = settings.file === ':memory:';

let db: BetterSqlite3.Database;
/** Holds the claim on the file while this thread lives (a server's store only). */
let claim: BetterSqlite3.Database | undefined;
let inode: number | undefined;
const statements = new Map<string, BetterSqlite3.Statement>();

function send(message: FromWorker): void {
  port.postMessage(message);
}

function asError(error: unknown): WorkerError {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return { code: typeof code === 'string' ? code : 'HOTLINE_ERROR', message: typeof message === 'string' ? message : String(error) };
}

/** Opens the file and brings its schema up to date; the versions it migrated to. */
function open(): number[] {
  if (!memory) mkdirSync(path.dirname(path.resolve(settings.file)), { recursive: true });
  // Before the file is touched: a second server must not migrate or write what the first one has.
  if (settings.claim && !memory) claim ??= claimFile(settings.file);
  const next = new BetterSqlite3(settings.file, { timeout: settings.busyTimeoutMs });
  try {
    // WAL: readers never wait for the writer. NORMAL is safe with WAL against a crash of the
    // process (only a power cut can lose the last commits) and spares an fsync per write.
    if (!memory) next.pragma('journal_mode = WAL');
    next.pragma('synchronous = NORMAL');
    next.pragma('foreign_keys = ON');
    // A deleted row's bytes are overwritten, not left in the page: an erasure must leave nothing in the file (see wipe-deleted.ts).
    next.pragma('secure_delete = ON');
    const migrated = settings.migrate ? migrate(next) : [];
    db = next;
    statements.clear();
    inode = memory ? undefined : statSync(settings.file).ino;
    return migrated;
  } catch (error) {
    next.close();
    throw error;
  }
}

/**
 * Each step in a transaction that takes the write lock before it reads the version: two
 * processes starting on one file together migrate it once, the second finding it done.
 */
function migrate(sql: BetterSqlite3.Database): number[] {
  const migrated: number[] = [];
  for (;;) {
    const step = sql.transaction((): number | undefined => {
      const version = sql.pragma('user_version', { simple: true });
      if (typeof version !== 'number') throw new Error(`PRAGMA user_version answered ${String(version)}`);
      if (version > SQLITE_MIGRATIONS.length) {
        throw Object.assign(new Error(`schema version ${version} is newer than this Hotline knows (${SQLITE_MIGRATIONS.length})`), {
          code: 'HOTLINE_SCHEMA_TOO_NEW',
        });
      }
      if (version === SQLITE_MIGRATIONS.length) return undefined;
      sql.exec(SQLITE_MIGRATIONS[version]!);
      // PRAGMA takes no bound parameters; `version + 1` is a number of ours.
      sql.pragma(`user_version = ${version + 1}`);
      return version + 1;
    });
    const done = step.immediate();
    if (done === undefined) return migrated;
    migrated.push(done);
  }
}

/**
 * Before each write that begins something (a statement outside a transaction, or the transaction's
 * BEGIN): is the file at the path still the one open? A stat costs microseconds, on this thread.
 */
async function checkFile(sql: string): Promise<void> {
  if (memory) return;
  if (!db.open) {
    // A reopen failed (the file at the path could not be opened): tried again with each query.
    open();
    return;
  }
  if (db.inTransaction || /^\s*(SELECT|PRAGMA|WITH)\b/i.test(sql)) return;
  let now: number | undefined;
  try {
    now = statSync(settings.file).ino;
  } catch {
    now = undefined;
  }
  if (now === inode) return;
  if (now === undefined) {
    // The connection still reads the deleted file: everything in it is written back to the path.
    await db.backup(settings.file);
    db.close();
    open();
    send({ kind: 'warning', file: settings.file, message: 'the database file was deleted while Hotline ran: it was written back from the open connection and reopened' });
    return;
  }
  db.close();
  open();
  send({
    kind: 'warning',
    file: settings.file,
    message: 'the database file was replaced while Hotline ran: the new file was opened (and migrated); what was written to the old one since is in the old file only',
  });
}

function bound(params: SqlValue[]): SqlValue[] {
  return params.map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value === undefined ? null : value));
}

function run(id: number, sql: string, params: SqlValue[]): FromWorker {
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    // Transaction control and one-off statements are few; the cache stays small regardless.
    if (statements.size < 500) statements.set(sql, statement);
  }
  if (statement.reader) return { kind: 'result', id, rows: statement.all(...bound(params)), changes: undefined, insertId: undefined };
  const { changes, lastInsertRowid } = statement.run(...bound(params));
  return { kind: 'result', id, rows: undefined, changes, insertId: lastInsertRowid };
}

let queue: Promise<void> = Promise.resolve();

port.on('message', (message: ToWorker) => {
  queue = queue.then(async () => {
    if (message.kind === 'close') {
      if (db?.open) db.close();
      claim?.close();
      claim = undefined;
      send({ kind: 'closed' });
      return;
    }
    try {
      await checkFile(message.sql);
      send(run(message.id, message.sql, message.params));
    } catch (error) {
      send({ kind: 'error', id: message.id, error: asError(error) });
    }
  });
});

try {
  const migratedTo = open();
  send({ kind: 'opened', version: SQLITE_MIGRATIONS.length, migratedTo });
} catch (error) {
  send({ kind: 'open-failed', error: asError(error) });
}
