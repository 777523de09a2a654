/**
 * Kysely's SQLite dialect with its one connection on a thread of its own (sqlite-worker.ts):
 * Kysely's own SQLite driver calls better-sqlite3 on the caller's thread, where a locked file
 * or a slow disk would stop every call. The compiler, adapter and introspector are Kysely's.
 */
import type { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import { spawnModule } from '../../worker-module.js';
import { StoreError } from '../store-errors.js';
import type { FromWorker, SqlValue, WorkerError, WorkerSettings } from './worker-protocol.js';

export interface WorkerDialectEvents {
  /** The file was deleted or replaced under Hotline and has been reopened. */
  onWarning(message: string): void;
  /** The schema steps the file was brought through when opened. */
  onMigrated(versions: number[]): void;
}

export function workerSqliteDialect(settings: WorkerSettings, events: WorkerDialectEvents): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new WorkerSqliteDriver(settings, events),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db),
  };
}

type Pending = { resolve(result: FromWorker & { kind: 'result' }): void; reject(error: Error): void };

class WorkerConnection implements DatabaseConnection {
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closing = false;

  constructor(
    private readonly settings: WorkerSettings,
    private readonly events: WorkerDialectEvents,
  ) {}

  /** Starts the thread and waits until the file is open and migrated; a failure says why, as SQLite did. */
  start(): Promise<Worker> {
    this.starting ??= new Promise<Worker>((resolve, reject) => {
      const worker = spawnModule(import.meta.url, 'sqlite-worker', this.settings);
      let opened = false;
      worker.on('message', (message: FromWorker) => {
        switch (message.kind) {
          case 'opened':
            opened = true;
            this.worker = worker;
            if (message.migratedTo.length > 0) this.events.onMigrated(message.migratedTo);
            resolve(worker);
            return;
          case 'open-failed':
            void worker.terminate();
            reject(new StoreError(message.error.code, message.error.message));
            return;
          case 'warning':
            this.events.onWarning(message.message);
            return;
          case 'result':
          case 'error':
            this.settle(message);
            return;
          case 'closed':
            return;
        }
      });
      worker.on('error', (error) => {
        if (!opened) reject(error);
      });
      worker.on('exit', () => {
        // A thread that died (out of memory, a native fault) fails what it had; the next query starts another.
        this.worker = undefined;
        this.starting = undefined;
        for (const [id, waiting] of this.pending) {
          this.pending.delete(id);
          waiting.reject(new StoreError('HOTLINE_WORKER_GONE', 'the SQLite thread stopped'));
        }
        if (!opened) reject(new StoreError('HOTLINE_WORKER_GONE', 'the SQLite thread stopped before the database was open'));
      });
    });
    return this.starting;
  }

  private settle(message: FromWorker & { kind: 'result' | 'error' }): void {
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if (message.kind === 'result') waiting.resolve(message);
    else waiting.reject(fromWorker(message.error));
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.closing) throw new StoreError('HOTLINE_STORE_CLOSED', 'the store is closed');
    const worker = this.worker ?? (await this.start());
    const id = this.nextId++;
    const result = await new Promise<FromWorker & { kind: 'result' }>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ kind: 'query', id, sql: compiledQuery.sql, params: compiledQuery.parameters as SqlValue[] });
    });
    return {
      rows: (result.rows ?? []) as R[],
      ...(result.changes === undefined ? {} : { numAffectedRows: BigInt(result.changes) }),
      ...(result.insertId === undefined ? {} : { insertId: BigInt(result.insertId) }),
    };
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Rows cross the thread boundary in one message anyway; callers that need bounded memory page by key.
    const result = await this.executeQuery<R>(compiledQuery);
    for (const row of result.rows) yield { rows: [row] };
  }

  async close(): Promise<void> {
    this.closing = true;
    const worker = this.worker ?? (this.starting ? await this.starting.catch(() => undefined) : undefined);
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'close' });
    // The thread answers what it was given before the close, then ends with the connection.
    const closed = new Promise<void>((resolve) =>
      worker.on('message', (message: FromWorker) => {
        if (message.kind === 'closed') resolve();
      }),
    );
    await closed;
    await worker.terminate();
    await exited;
  }
}

function fromWorker(error: WorkerError): StoreError {
  return new StoreError(error.code, error.message);
}

/** One connection, as SQLite has: Kysely's queries and transactions take turns on it. */
class WorkerSqliteDriver implements Driver {
  private readonly connection: WorkerConnection;
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;

  constructor(settings: WorkerSettings, events: WorkerDialectEvents) {
    this.connection = new WorkerConnection(settings, events);
  }

  async init(): Promise<void> {
    await this.connection.start();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    while (this.held) await this.held;
    this.held = new Promise<void>((resolve) => (this.release = resolve));
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    // IMMEDIATE takes the write lock at once: a second process makes this wait (on the thread), never fail half-way.
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.held = undefined;
    this.release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {
    await this.connection.close();
  }
}
