/**
 * Rolling deploys over the webhook. A replica told to stop keeps its WebSocket calls until they end
 * (their socket is here), but a webhook call is only a series of requests: between two turns it is
 * handed to another replica with its record — the conversation as heard, its turns so far — and the
 * caller notices nothing. Its events then go to the replica that has it, wherever they land.
 */
import type { CallSoFar } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import type { WebhookOwners } from './webhook-owners.js';

/** How often a stopping replica looks again for calls that have come between turns (a turn ends without an event). */
const RETRY_MS = 200;
/** A hand-over the store refused is tried again this often before the call is given up on. */
const STORE_ATTEMPTS = 3;

export interface HandoverHost {
  /** The calls' core: lets go of a call between turns, giving its record (CallRegistry.letGo). */
  letGo(sessionId: string): CallSoFar | undefined;
}

export interface WebhookCallsView {
  sessions(): Iterable<string>;
  /** Nothing of the call waits to be answered. */
  idle(sessionId: string): boolean;
}

export class WebhookHandover {
  private readonly log: Logger;
  /** Hand-overs under way: the call's events wait for them. */
  private readonly handing = new Map<string, Promise<void>>();
  /** Calls handed over, with the replica that has each now. */
  private readonly handed = new Map<string, { to: string; callId: string }>();
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly owners: WebhookOwners,
    private readonly host: HandoverHost,
    private readonly calls: WebhookCallsView,
    /** Names the new holder in the call's stored record and its campaign attempt, if any (CallRepository.passTo, passAttempt). */
    private readonly passRecord: (call: { callId: string; sessionId: string }, to: string) => Promise<void>,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'webhook-handover' });
  }

  /** A hand-over of this call to another replica under way here: its events wait for it. */
  settled(sessionId: string): Promise<void> | undefined {
    return this.handing.get(sessionId);
  }

  /** This replica handed the call over: its events go on to the replica that has it, even those forwarded here. */
  handedOver(sessionId: string): boolean {
    return this.handed.has(sessionId);
  }

  /** An event of a call here was answered: stopping, this replica may hand the call over now. */
  answered(sessionId: string): void {
    if (this.stopping) this.tryHandOver(sessionId);
  }

  /** This replica stops: new webhook calls go to the others, and each call here goes to one of them between turns. */
  begin(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.owners.stopTaking();
    this.sweep();
    this.timer = setInterval(() => this.sweep(), RETRY_MS);
    this.timer.unref();
  }

  /**
   * Once this replica's records are written: the stored record of each call handed over names the
   * replica that has it, so this replica's next start does not take it for one it left behind.
   */
  async finish(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.handing.values()]);
    await Promise.all(
      [...this.handed].map(([sessionId, { to, callId }]) =>
        this.passRecord({ callId, sessionId }, to).catch((error: unknown) => this.log.warn({ err: error, callId, to }, 'a handed-over call\'s record still names this replica')),
      ),
    );
  }

  private sweep(): void {
    for (const sessionId of this.calls.sessions()) this.tryHandOver(sessionId);
  }

  private tryHandOver(sessionId: string): void {
    if (this.handing.has(sessionId) || this.handed.has(sessionId) || !this.calls.idle(sessionId)) return;
    const work = this.handOver(sessionId)
      .catch((error: unknown) => this.log.error({ err: error, sessionId }, 'handing a webhook call over failed'))
      .finally(() => this.handing.delete(sessionId));
    this.handing.set(sessionId, work);
  }

  private async handOver(sessionId: string): Promise<void> {
    // Nobody to take it (the last replica, or all stopping): it stays here, as calls did before replicas.
    const to = await this.owners.successor();
    if (!to) return;
    // Its events waited meanwhile; Hotline's own (a silence prompt) may have come.
    if (!this.calls.idle(sessionId)) return;
    const record = this.host.letGo(sessionId);
    if (!record) return;
    this.handed.set(sessionId, { to: to.id, callId: record.callId });
    for (let attempt = 1; ; attempt++) {
      try {
        if (!(await this.owners.handTo(sessionId, to.id, record))) this.log.warn({ sessionId }, 'the webhook call was no longer this replica\'s');
        else this.log.info({ sessionId, to: to.id, turns: record.turns.length }, 'webhook call handed over');
        return;
      } catch (error) {
        if (attempt >= STORE_ATTEMPTS) throw error;
        this.log.warn({ err: error, sessionId, attempt }, 'handing a webhook call over: the store refused; trying again');
      }
    }
  }
}
