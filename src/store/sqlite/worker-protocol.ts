/** The messages between the SQLite thread (sqlite-worker.ts) and its driver (worker-dialect.ts). */

export type SqlValue = string | number | bigint | Buffer | null;

export type ToWorker = { kind: 'query'; id: number; sql: string; params: SqlValue[] } | { kind: 'close' };

/** An error as SQLite or the file system gave it: its code decides whether a write is tried again. */
export interface WorkerError {
  readonly code: string;
  readonly message: string;
}

export type FromWorker =
  | { kind: 'result'; id: number; rows: unknown[] | undefined; changes: number | undefined; insertId: number | bigint | undefined }
  | { kind: 'error'; id: number; error: WorkerError }
  | { kind: 'opened'; version: number; migratedTo: number[] }
  | { kind: 'open-failed'; error: WorkerError }
  | { kind: 'warning'; message: string; file: string }
  | { kind: 'closed' };

export interface WorkerSettings {
  readonly file: string;
  readonly busyTimeoutMs: number;
  /** False for a look that must change nothing (`npm run db -- status`): the schema is left as it is. */
  readonly migrate: boolean;
  /** A Hotline server's store: the file is claimed for this process alone (file-owner.ts). */
  readonly claim?: boolean;
}
