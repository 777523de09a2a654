/**
 * The stores a test runs against: SQLite always, PostgreSQL when a server listens on
 * 127.0.0.1:5432 (trust auth, or the password `postgres`, as `.ci/run` sets up). Each PostgreSQL
 * test store is a database of its own, created for it and dropped after, so test files running
 * side by side never see each other's rows. Nothing here reads the environment of whoever runs
 * the tests.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { openStore, type Store, type StoreLocation } from '../../src/store/store.js';

export const POSTGRES_SERVER = 'postgres://postgres:postgres@127.0.0.1:5432';

export const STORE_KINDS = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

let reachable: Promise<boolean> | undefined;

/** Whether the PostgreSQL server answers; asked once per test file. */
export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: `${POSTGRES_SERVER}/postgres`, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** The kinds this machine can run: for `describe.each(await storeKinds())`. */
export async function storeKinds(): Promise<StoreKind[]> {
  return (await postgresReachable()) ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A store's place, empty and its own, and how to remove it. */
export interface TestStoreLocation {
  readonly kind: StoreKind;
  readonly location: StoreLocation;
  /** What Hotline's configuration takes: DATABASE_FILE or DATABASE_URL. */
  readonly env: Record<string, string>;
  /** For PostgreSQL: the database's name (to stop or inspect it). */
  readonly database?: string;
  remove(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${POSTGRES_SERVER}/postgres`, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function freshStoreLocation(kind: StoreKind): Promise<TestStoreLocation> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'hotline-store-'));
    const file = path.join(dir, 'hotline.db');
    return {
      kind,
      location: { databaseFile: file },
      env: { DATABASE_FILE: file },
      async remove() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const database = `hotline_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  // The name is ours (letters, digits, underscores): CREATE DATABASE takes no parameters.
  await admin((client) => client.query(`CREATE DATABASE ${database}`));
  const url = `${POSTGRES_SERVER}/${database}`;
  return {
    kind,
    database,
    location: { databaseFile: '', databaseUrl: url },
    env: { DATABASE_URL: url },
    async remove() {
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    },
  };
}

/** An open store in a fresh place; closing it removes the place too. */
export async function freshStore(kind: StoreKind): Promise<Store & { location: TestStoreLocation }> {
  const location = await freshStoreLocation(kind);
  const store = await openStore(location.location, pino({ level: 'silent' }));
  return {
    ...store,
    location,
    async close() {
      await store.close();
      await location.remove();
    },
  };
}
