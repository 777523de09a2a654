/**
 * Replicas know each other through the store: each holds a row with its stable id, where the others
 * reach it, and a heartbeat. A replica whose heartbeat is older than `deadAfterMs` is dead to the
 * others, which then settle what it left (its calls, its campaign attempts).
 *
 * Heartbeats are stamped with the database's clock, never a replica's own, so machines whose clocks
 * disagree still agree on who is alive.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { beatingSince, databaseNowMs, REPLICA_DEAD_AFTER_MS } from '../store/database-clock.js';
import type { Store } from '../store/store.js';

export const HEARTBEAT_MS = 2_000;

export interface ReplicaSettings {
  /** Stable across restarts of this replica: what it left in flight is its own again. */
  readonly id: string;
  /** Where the other replicas reach this one, if they may. */
  readonly internalUrl?: string | undefined;
  readonly heartbeatMs?: number;
  readonly deadAfterMs?: number;
}

export interface ReplicaInfo {
  readonly id: string;
  readonly internalUrl: string | null;
  readonly startedAt: string;
  readonly stopping: boolean;
}

function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as somebody else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class ReplicaRegistry {
  readonly id: string;
  readonly instance = randomUUID();
  private readonly heartbeatMs: number;
  readonly deadAfterMs: number;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** When the heartbeats began to succeed without a gap: only a replica that has been in touch for a whole dead window judges others dead. */
  private inTouchSince: number | undefined;
  private readonly beatListeners = new Set<() => void>();
  /** It left the store (a close): a second close does nothing. */
  private left = false;
  private readonly log: Logger;

  private constructor(
    private readonly store: Store,
    private readonly settings: ReplicaSettings,
    logger: Logger,
  ) {
    this.id = settings.id;
    this.heartbeatMs = settings.heartbeatMs ?? HEARTBEAT_MS;
    this.deadAfterMs = settings.deadAfterMs ?? REPLICA_DEAD_AFTER_MS;
    this.log = logger.child({ component: 'replicas', replica: this.id });
  }

  /**
   * Registers this replica and starts its heartbeat. Its id may be held by an earlier start of the
   * same replica: one on this machine whose process is gone, or one whose heartbeat stopped, is
   * taken over; one that still beats is another process given the same id, and refused.
   */
  static async join(store: Store, settings: ReplicaSettings, logger: Logger): Promise<ReplicaRegistry> {
    const registry = new ReplicaRegistry(store, settings, logger);
    await registry.register();
    registry.inTouchSince = Date.now();
    registry.timer = setInterval(() => registry.beat(), registry.heartbeatMs);
    registry.timer.unref();
    return registry;
  }

  private async register(): Promise<void> {
    const { db } = this.store;
    const host = hostname();
    const row = {
      id: this.id,
      instance: this.instance,
      host,
      pid: process.pid,
      internal_url: this.settings.internalUrl ?? null,
      started_at: new Date().toISOString(),
      heartbeat_at: databaseNowMs(this.store),
      stopping: 0,
    };
    const giveUpAt = Date.now() + this.deadAfterMs + this.heartbeatMs;
    let waited = false;
    for (;;) {
      const inserted = await db.insertInto('replicas').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return;
      const held = await db
        .selectFrom('replicas')
        .select(['instance', 'host', 'pid', 'heartbeat_at', sql<number>`${databaseNowMs(this.store)}`.as('now')])
        .where('id', '=', this.id)
        .executeTakeFirst();
      if (!held) continue;
      const stale = Number(held.now) - Number(held.heartbeat_at) > this.deadAfterMs;
      const earlierStartHere = held.host === host && (held.pid === process.pid || !pidRunning(held.pid));
      if (stale || earlierStartHere) {
        const taken = await db
          .updateTable('replicas')
          .set(row)
          .where('id', '=', this.id)
          .where('instance', '=', held.instance)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) > 0) {
          this.log.info({ previous: held.instance }, 'this replica takes over from its earlier start');
          return;
        }
        continue;
      }
      if (this.store.dialect === 'sqlite') {
        // One process per SQLite file (the store's claim says so first): waiting would not make the other go.
        throw new ConfigError(
          `DATABASE_FILE ${this.store.where} is in use by a Hotline that is running (on ${held.host}, pid ${held.pid}): stop that one first, ` +
            'or give this one a DATABASE_FILE (or TRANSCRIPTS_DIR) of its own; several processes share one store only on PostgreSQL (DATABASE_URL)',
        );
      }
      if (Date.now() > giveUpAt) {
        throw new ConfigError(
          `REPLICA_ID ${this.id} is held by a Hotline that is running (on ${held.host}, pid ${held.pid}): give each process sharing DATABASE_URL a REPLICA_ID of its own`,
        );
      }
      if (!waited) this.log.warn({ host: held.host, pid: held.pid }, 'REPLICA_ID is held by another process; waiting to see whether it is gone');
      waited = true;
      await sleep(this.heartbeatMs);
    }
  }

  /** Called after each heartbeat that reached the store (the settlers look for dead replicas' work then). */
  onBeat(listener: () => void): () => void {
    this.beatListeners.add(listener);
    return () => this.beatListeners.delete(listener);
  }

  /** True once this replica has reached the store without a gap for a whole dead window: its view of who is dead can be trusted. */
  get judges(): boolean {
    return this.inTouchSince !== undefined && Date.now() - this.inTouchSince >= this.deadAfterMs;
  }

  private beat(): void {
    if (this.beating) return;
    this.beating = this.store.db
      .updateTable('replicas')
      .set({ heartbeat_at: databaseNowMs(this.store) })
      .where('id', '=', this.id)
      .where('instance', '=', this.instance)
      .executeTakeFirst()
      .then((result) => {
        if (Number(result.numUpdatedRows) === 0) {
          // Another start took the id over: this process was taken for dead (paused, cut off from the store).
          this.log.error('this replica was taken for dead and its id taken over; it keeps its calls but settles nothing of others');
          this.inTouchSince = undefined;
          return;
        }
        this.inTouchSince ??= Date.now();
        for (const listener of this.beatListeners) listener();
      })
      .catch((error: unknown) => {
        // A replica out of touch with the store must not judge the others dead when it is back: they were out of touch too.
        this.inTouchSince = undefined;
        this.log.warn({ err: error }, 'heartbeat not written; trying again');
      })
      .finally(() => {
        this.beating = undefined;
      });
  }

  /** The replicas alive now, this one among them. */
  async alive(): Promise<ReplicaInfo[]> {
    const rows = await this.store.db
      .selectFrom('replicas')
      .select(['id', 'internal_url', 'started_at', 'stopping'])
      .where('heartbeat_at', '>', beatingSince(this.store, this.deadAfterMs))
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, internalUrl: r.internal_url, startedAt: r.started_at, stopping: Number(r.stopping) === 1 }));
  }

  /** Where the others reach this replica, once it listens (when INTERNAL_URL does not say). */
  async setInternalUrl(url: string): Promise<void> {
    await this.store.db.updateTable('replicas').set({ internal_url: url }).where('id', '=', this.id).where('instance', '=', this.instance).execute();
  }

  /** Told to stop: the others see it, and it takes no new work. */
  async stopping(): Promise<void> {
    if (this.left) return;
    await this.store.db.updateTable('replicas').set({ stopping: 1 }).where('id', '=', this.id).where('instance', '=', this.instance).execute();
  }

  /** Leaves cleanly: its row goes (a replica that left is not dead; it left nothing in flight). */
  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    clearInterval(this.timer);
    await this.beating;
    this.beatListeners.clear();
    await this.store.db.deleteFrom('replicas').where('id', '=', this.id).where('instance', '=', this.instance).execute();
  }
}
