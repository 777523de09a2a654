import { sql, type RawBuilder } from 'kysely';
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
