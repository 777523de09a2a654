import type { CallControl, ControlOutcome } from '../call/ports/call-control.js';
import type { Logger } from '../logger.js';
import { beatingSince } from '../store/database-clock.js';
import type { Store } from '../store/store.js';
import { CLUSTER_SECRET_HEADER } from '../transport/internal-api.js';
import type { ReplicaRegistry } from './replica-registry.js';

const OUTCOMES = new Set<ControlOutcome>(['done', 'not_found', 'ending', 'no_destination']);
/** An operator waits at most this long for the replica holding the call. */
const REMOTE_TIMEOUT_MS = 5_000;

/**
 * An operator's transfer or hangup, from the dashboard or the admin API of any replica: carried out
 * here when this replica holds the call, else by the live replica that does (its row in the store
 * names it), over its internal API.
 */
export class ClusterControl implements CallControl {
  constructor(
    private readonly local: CallControl,
    private readonly store: Store,
    private readonly registry: ReplicaRegistry,
    private readonly secret: string,
    private readonly log: Logger,
  ) {}

  transferTargets(): { readonly default: boolean; readonly named: readonly string[] } {
    return this.local.transferTargets();
  }

  async transfer(sessionId: string, target?: string): Promise<ControlOutcome> {
    const here = await this.local.transfer(sessionId, target);
    return here === 'not_found' ? this.remote(sessionId, 'transfer', target === undefined ? {} : { target }) : here;
  }

  async hangUp(sessionId: string): Promise<ControlOutcome> {
    const here = await this.local.hangUp(sessionId);
    return here === 'not_found' ? this.remote(sessionId, 'hangup', {}) : here;
  }

  private async remote(sessionId: string, action: 'transfer' | 'hangup', body: Record<string, string>): Promise<ControlOutcome> {
    const owner = await this.store.db
      .selectFrom('calls')
      .innerJoin('replicas', 'replicas.id', 'calls.owner')
      .select('replicas.internal_url as url')
      .where('calls.session_id', '=', sessionId)
      .where('calls.ended_at', 'is', null)
      .where('calls.owner', '!=', this.registry.id)
      .where('replicas.heartbeat_at', '>', beatingSince(this.store, this.registry.deadAfterMs))
      .executeTakeFirst();
    if (!owner?.url) return 'not_found';
    try {
      const res = await fetch(new URL(`/internal/calls/${encodeURIComponent(sessionId)}/${action}`, owner.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', [CLUSTER_SECRET_HEADER]: this.secret },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS),
      });
      const answer = (await res.json()) as { outcome?: unknown };
      return OUTCOMES.has(answer.outcome as ControlOutcome) ? (answer.outcome as ControlOutcome) : 'not_found';
    } catch (error) {
      this.log.warn({ err: error, sessionId, action }, 'the replica holding the call did not answer the operator\'s request');
      return 'not_found';
    }
  }
}
