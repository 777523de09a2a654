/**
 * Which replica answers a webhook event, decided in front of the webhook's own handler
 * (transport/webhook.ts), which answers every event as one Hotline alone would. The balancer may
 * send a call's events to any replica: one of a call held here is answered here; one of a call
 * another replica owns goes there and its answer comes back (webhook-owners.ts); a call this
 * replica is handing over, or has handed over, goes where it went (webhook-handover.ts).
 */
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';
import type { VoiceEvent } from '../protocol/events.js';
import type { EventRoute, Routed } from '../transport/webhook.js';
import type { WebhookHandover } from './webhook-handover.js';
import type { WebhookOwners } from './webhook-owners.js';

/** What the routing asks of this replica's calls. */
type CallsHere = Pick<CallRegistry, 'get' | 'isLate' | 'isAccepting'>;

export class WebhookRouting {
  /** POST /webhook, from the balancer: an event of a call not held here goes to the replica that owns it. */
  readonly fromBalancer: EventRoute;
  /**
   * POST /internal/webhook, from the replica the balancer chose: this replica owns the call, so the
   * event is answered here, unless this replica has handed the call over since.
   */
  readonly fromReplica: EventRoute;

  constructor(
    private readonly owners: WebhookOwners,
    private readonly handover: WebhookHandover,
    private readonly calls: CallsHere,
    private readonly logger: Logger,
  ) {
    const answered = (sessionId: string): void => handover.answered(sessionId);
    this.fromBalancer = { route: (event, raw) => this.route(event, raw, true), answered };
    this.fromReplica = { route: (event, raw) => this.route(event, raw, false), answered };
  }

  private route(event: VoiceEvent, raw: Buffer, fromBalancer: boolean): Routed | Promise<Routed> {
    // A hand-over of the call under way here: its events wait for it, then go where it went.
    const handingOver = this.handover.settled(event.session.id);
    if (handingOver) return handingOver.then(() => this.decide(event, raw, fromBalancer));
    return this.decide(event, raw, fromBalancer);
  }

  private decide(event: VoiceEvent, raw: Buffer, fromBalancer: boolean): Routed | Promise<Routed> {
    const id = event.session.id;
    // A call this replica handed over goes on to the replica that has it, even when forwarded here.
    if ((fromBalancer || this.handover.handedOver(id)) && !this.calls.get(id)) return this.toOwner(event, raw);
    return this.unlessStopping(event, raw);
  }

  private async toOwner(event: VoiceEvent, raw: Buffer): Promise<Routed> {
    const id = event.session.id;
    try {
      const relayed = await this.owners.route(id, event.type === 'session_start', raw);
      if (relayed) return relayed;
    } catch (error) {
      // The store could not say who owns the call: this replica answers, as a single Hotline would.
      this.logger.warn({ err: error, sessionId: id }, 'the owner of this webhook call could not be looked up; answering here');
    }
    return this.unlessStopping(event, raw);
  }

  /**
   * A new call this replica cannot take, stopping (its session_start came in as this replica began
   * to stop): another replica takes it. When none can, it is answered here (refused: shutting down).
   */
  private unlessStopping(event: VoiceEvent, raw: Buffer): Routed | Promise<Routed> {
    if (this.calls.isAccepting) return 'here';
    const id = event.session.id;
    const newCall = event.type !== 'session_end' && !this.calls.get(id) && !this.calls.isLate(event);
    if (!newCall) return 'here';
    return this.owners.passOn(id, raw).then(
      (passed) => passed ?? 'here',
      (error: unknown) => {
        this.logger.warn({ err: error, sessionId: id }, 'a new call could not be passed to another replica; refused');
        return 'here' as const;
      },
    );
  }
}
