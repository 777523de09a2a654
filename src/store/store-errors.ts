/** An error from the database, with the code SQLite, PostgreSQL or the file system gave it. */
export class StoreError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/** SQLite's codes for a database that is busy, full, read-only, gone or failing: it may work later. */
const SQLITE_PASSING = /^(SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|PROTOCOL|NOTADB|CORRUPT)|HOTLINE_WORKER_GONE)/;

/** The system's own (ECONNREFUSED, ENOSPC, EACCES…): a socket, a disk, a permission. */
const SYSTEM = /^E[A-Z]{3,}$/;

/**
 * PostgreSQL's classes for a server that is unreachable, restarting, out of resources or cancelled
 * us (08 connection, 53 resources, 57 operator intervention, 58 system, 40 serialization), and the
 * driver's own socket errors.
 */
const POSTGRES_PASSING = /^(08|53|57|58|40)/;

/**
 * Whether a failed write should be tried again. A database that is locked, full, read-only,
 * restarting or unreachable gets better by itself or by an operator's hand; a write the schema
 * refuses (a constraint, a type) never will.
 */
export function isPassing(error: unknown): boolean {
  if (error instanceof Error && /timeout|Connection terminated|connect ECONNREFUSED|not queryable|Client was closed|Cannot use a pool/i.test(error.message)) {
    return true;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (SYSTEM.test(code)) return true;
  if (code.length === 5 && /^[0-9A-Z]{5}$/.test(code)) return POSTGRES_PASSING.test(code);
  return SQLITE_PASSING.test(code);
}
