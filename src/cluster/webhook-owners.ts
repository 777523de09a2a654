/**
 * Webhook calls across replicas. The service sends each event of a call as its own request, and a
 * load balancer may hand each to any replica (the session is named only in the body, so it cannot
 * be sticky). The replica that sees a call's session_start owns it — a row in the store — and the
 * others forward the call's events to it and relay its answers, so the call is answered exactly as
 * one Hotline would answer it.
 */
import { sql } from 'kysely';
import type { CallSoFar } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { CallProgressSchema } from '../store/call-progress-schema.js';
import { beatingSince } from '../store/database-clock.js';
import type { Store } from '../store/store.js';
import { CLUSTER_SECRET_HEADER } from '../transport/internal-api.js';
import { INTERNAL_WEBHOOK_PATH, type Relayed } from '../transport/webhook.js';
import type { ReplicaRegistry } from './replica-registry.js';

/** A handed-over call's record, as the stopping replica wrote it. */
const HandoverSchema = CallProgressSchema.omit({ revision: true, endedAt: true, durationMs: true, endReason: true });

/** Whether a forward failed because nothing listens at the owner's address any more (its process is gone). */
function processGone(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'ECONNREFUSED';
}

/** A forwarded event waits at most this long for the owner's answer (the service gives up after about 5 s). */
const FORWARD_TIMEOUT_MS = 4_500;

export class WebhookOwners {
  readonly secret: string;

  private readonly log: Logger;
  private stopping = false;

  constructor(
    private readonly store: Store,
    private readonly registry: ReplicaRegistry,
    secret: string,
    logger: Logger,
  ) {
    this.secret = secret;
    this.log = logger.child({ component: 'webhook-owners' });
  }

  /**
   * An event of a call this replica does not hold: forwarded to the live replica that owns it, and
   * its answer returned; undefined when this replica is to handle it — a new call (now its own), a
   * call nobody owns, or one whose owner is dead (taken over here).
   */
  async route(sessionId: string, starting: boolean, raw: Buffer): Promise<Relayed | undefined> {
    const owner = starting ? await this.claim(sessionId) : await this.ownerOf(sessionId);
    if (owner === undefined) return undefined;
    try {
      return await this.forward(owner.url, raw);
    } catch (error) {
      if (!processGone(error)) {
        // Slow, not gone: it may have taken the event, and a second replica answering it too would say
        // everything twice. "Nothing yet", as a request waiting too long gets: its answer goes out with
        // the next event, and an owner that has died is dead to all within seconds, then taken over.
        this.log.warn({ err: error, sessionId, owner }, 'the replica of this webhook call did not answer in time; answered with nothing for now');
        return { status: 204, contentType: undefined, body: Buffer.alloc(0) };
      }
      // Its process is gone (the connection refused): the caller must hear something, so the call is taken over here.
      this.log.warn({ err: error, sessionId, owner }, 'the replica of this webhook call is gone; the call is taken over here');
      const taker = await this.takeOver(sessionId, owner.id);
      return taker === undefined || taker.id === owner.id ? undefined : this.forward(taker.url, raw);
    }
  }

  /** The call ended here: its row goes (only if it is still this replica's). */
  release(sessionId: string): void {
    this.store.db
      .deleteFrom('webhook_sessions')
      .where('session_id', '=', sessionId)
      .where('replica', '=', this.registry.id)
      .execute()
      .catch((error: unknown) => this.log.warn({ err: error, sessionId }, 'a webhook call\'s owner row could not be removed'));
  }

  /**
   * This replica is stopping: a new call goes to another one (as its handed-over calls do), and a
   * call whose owner died is taken up by another one.
   */
  stopTaking(): void {
    this.stopping = true;
  }

  /** A live replica that is not stopping, to take a call from this one; the least loaded first, by its calls in progress. */
  async successor(): Promise<{ id: string; url: string } | undefined> {
    const row = await this.store.db
      .selectFrom('replicas')
      .leftJoin('webhook_sessions', 'webhook_sessions.replica', 'replicas.id')
      .select(['replicas.id as id', 'replicas.internal_url as url', (eb) => eb.fn.count<number>('webhook_sessions.session_id').as('calls')])
      .where('replicas.id', '!=', this.registry.id)
      .where('replicas.stopping', '=', 0)
      .where('replicas.internal_url', 'is not', null)
      .where('replicas.heartbeat_at', '>', beatingSince(this.store, this.registry.deadAfterMs))
      .groupBy(['replicas.id', 'replicas.internal_url'])
      .orderBy('calls')
      .orderBy('replicas.id')
      .executeTakeFirst();
    return row?.url ? { id: row.id, url: row.url } : undefined;
  }

  /**
   * A call on record as this replica's that this one cannot take (it began to stop while the call's
   * session_start was on its way in): given to a successor, and the event forwarded there.
   * Undefined when there is none to take it.
   */
  async passOn(sessionId: string, raw: Buffer): Promise<Relayed | undefined> {
    const to = await this.successor();
    if (!to) return undefined;
    const result = await this.store.db
      .updateTable('webhook_sessions')
      .set({ replica: to.id })
      .where('session_id', '=', sessionId)
      .where('replica', '=', this.registry.id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      // Not on record as this replica's: whoever it is (if anyone) answers.
      const owner = await this.ownerOf(sessionId);
      return owner && this.forward(owner.url, raw);
    }
    return this.forward(to.url, raw);
  }

  /**
   * Gives a call of this replica to `to`, with its record as it was let go; false when the call is
   * no longer this replica's (nothing changed then).
   */
  async handTo(sessionId: string, to: string, record: CallSoFar): Promise<boolean> {
    const result = await this.store.db
      .updateTable('webhook_sessions')
      .set({ replica: to, handover: JSON.stringify(record) })
      .where('session_id', '=', sessionId)
      .where('replica', '=', this.registry.id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return true;
    // A call that started before its session was on record (an older release): on record now, as the other's.
    const inserted = await this.store.db
      .insertInto('webhook_sessions')
      .values({ session_id: sessionId, replica: to, started_at: new Date().toISOString(), handover: JSON.stringify(record) })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /**
   * The record a stopping replica handed this call over with, if it is this replica's now; taken
   * once (a later owner reads the calls table, which this replica's writes keep newer).
   */
  async takeHandover(sessionId: string): Promise<CallSoFar | undefined> {
    const row = await this.store.db
      .selectFrom('webhook_sessions')
      .select('handover')
      .where('session_id', '=', sessionId)
      .where('replica', '=', this.registry.id)
      .executeTakeFirst();
    if (!row?.handover) return undefined;
    const parsed = HandoverSchema.safeParse(JSON.parse(row.handover));
    await this.store.db
      .updateTable('webhook_sessions')
      .set({ handover: null })
      .where('session_id', '=', sessionId)
      .where('replica', '=', this.registry.id)
      .execute();
    if (!parsed.success) {
      this.log.warn({ sessionId }, 'a handed-over call\'s record is not readable; going on from the stored record');
      return undefined;
    }
    // Absent and undefined are one to the record: the schema's optional fields are the record's "or undefined".
    const { from, to, serviceReason, variables, tags, ...rest } = parsed.data;
    return { ...rest, from, to, serviceReason, variables, tags };
  }

  /** A session_start: this replica's (or, stopping, another's) unless another one got it first (the service sent it twice) and lives. */
  private async claim(sessionId: string): Promise<{ id: string; url: string } | undefined> {
    const owner = this.stopping ? ((await this.successor())?.id ?? this.registry.id) : this.registry.id;
    await this.store.db
      .insertInto('webhook_sessions')
      .values({ session_id: sessionId, replica: owner, started_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .execute();
    return this.ownerOf(sessionId);
  }

  /** The live replica owning the call, if it is another one; a dead owner's call becomes this replica's. */
  private async ownerOf(sessionId: string): Promise<{ id: string; url: string } | undefined> {
    const row = await this.store.db
      .selectFrom('webhook_sessions')
      .leftJoin('replicas', 'replicas.id', 'webhook_sessions.replica')
      .select([
        'webhook_sessions.replica as owner',
        'replicas.internal_url as url',
        sql<number>`CASE WHEN replicas.heartbeat_at > ${beatingSince(this.store, this.registry.deadAfterMs)} THEN 1 ELSE 0 END`.as('alive'),
      ])
      .where('webhook_sessions.session_id', '=', sessionId)
      .executeTakeFirst();
    if (!row || row.owner === this.registry.id) return undefined;
    if (Number(row.alive) === 1 && row.url) return { id: row.owner, url: row.url };
    return this.takeOver(sessionId, row.owner);
  }

  /**
   * The owner is dead, or its process is gone: the call is taken up here — or, this replica stopping,
   * by another one. Only one replica takes it (the update names the owner it replaces); one that
   * lost that race forwards to the winner. Returns where to forward, undefined to answer here.
   */
  private async takeOver(sessionId: string, from: string): Promise<{ id: string; url: string } | undefined> {
    const to = this.stopping ? await this.successor() : undefined;
    const result = await this.store.db
      .updateTable('webhook_sessions')
      .set({ replica: to?.id ?? this.registry.id })
      .where('session_id', '=', sessionId)
      .where('replica', '=', from)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return to;
    return this.ownerOf(sessionId);
  }

  private async forward(ownerUrl: string, raw: Buffer): Promise<Relayed> {
    const res = await fetch(new URL(INTERNAL_WEBHOOK_PATH, ownerUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CLUSTER_SECRET_HEADER]: this.secret },
      body: raw,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? undefined, body: Buffer.from(await res.arrayBuffer()) };
  }
}
