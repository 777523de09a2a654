import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * The database's own clock in epoch ms, on either dialect: what replicas on machines whose clocks
 * disagree compare their heartbeats with.
 */
export function databaseNowMs(store: { readonly dialect: Dialect }): RawBuilder<number> {
  return store.dialect === 'postgres'
    ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
    : sql<number>`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;
}

/** A replica is alive while its heartbeat is younger than this (cluster/replica-registry.ts beats every 2 s). */
export const REPLICA_DEAD_AFTER_MS = 6_000;

/** A heartbeat after this moment (epoch ms, the database's clock) is a live replica's. */
export function beatingSince(store: { readonly dialect: Dialect }, deadAfterMs: number): RawBuilder<number> {
  return sql<number>`${databaseNowMs(store)} - ${deadAfterMs}`;
}

/**
 * True where the replica named by `column` has stopped beating for `deadAfterMs` (or never
 * registered): what it held is the others' to settle.
 */
export function replicaDead(store: { readonly dialect: Dialect }, column: string, deadAfterMs: number): RawBuilder<SqlBool> {
  return sql<SqlBool>`NOT EXISTS (SELECT 1 FROM replicas WHERE replicas.id = ${sql.ref(column)} AND replicas.heartbeat_at > ${beatingSince(store, deadAfterMs)})`;
}
