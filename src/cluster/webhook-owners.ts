/**
 * Webhook calls across replicas. The service sends each event of a call as its own request, and a
 * load balancer may hand each to any replica (the session is named only in the body, so it cannot
 * be sticky). The replica that sees a call's session_start owns it — a row in the store — and the
 * others forward the call's events to it and relay its answers, so the call is answered exactly as
 * one Hotline would answer it.
 */
import { sql } from 'kysely';
import type { Logger } from '../logger.js';
import { beatingSince } from '../store/database-clock.js';
import type { Store } from '../store/store.js';
import { CLUSTER_SECRET_HEADER } from '../transport/internal-api.js';
import { INTERNAL_WEBHOOK_PATH, type Relayed } from '../transport/webhook.js';
import type { ReplicaRegistry } from './replica-registry.js';

/** A forwarded event waits at most this long for the owner's answer (the service gives up after about 5 s). */
const FORWARD_TIMEOUT_MS = 4_500;

export class WebhookOwners {
  readonly secret: string;

  private readonly log: Logger;

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
      return await this.forward(owner, raw);
    } catch (error) {
      // Alive by its heartbeat but not answering: the caller must hear something, so the call is taken over here.
      this.log.warn({ err: error, sessionId, owner }, 'the replica of this webhook call did not answer; the call is taken over here');
      await this.takeOver(sessionId);
      return undefined;
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

  /** A session_start: this replica's unless another one got it first (the service sent it twice) and lives. */
  private async claim(sessionId: string): Promise<string | undefined> {
    await this.store.db
      .insertInto('webhook_sessions')
      .values({ session_id: sessionId, replica: this.registry.id, started_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .execute();
    return this.ownerOf(sessionId);
  }

  /** The internal URL of the live replica owning the call, if it is another one; a dead owner's call becomes this replica's. */
  private async ownerOf(sessionId: string): Promise<string | undefined> {
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
    if (Number(row.alive) === 1 && row.url) return row.url;
    await this.takeOver(sessionId);
    return undefined;
  }

  private async takeOver(sessionId: string): Promise<void> {
    await this.store.db.updateTable('webhook_sessions').set({ replica: this.registry.id }).where('session_id', '=', sessionId).execute();
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
