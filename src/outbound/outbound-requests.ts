import type { OutboundRequestSource, PendingCall } from '../call/ports/outbound-request.js';
import type { Logger } from '../logger.js';
import type { OutboundRequestRepository } from '../store/outbound-request-repository.js';
import { NumberInCallError } from './errors.js';
import { maskNumber } from '../privacy/mask-number.js';
import type { PendingCalls } from './pending-calls.js';

/**
 * The requests for outbound calls, in this process's memory and in the store: a session_start that
 * reaches the replica that asked is matched at once, from memory; one that reaches another replica
 * is matched from the store a moment later. The store's row per number makes a second request for
 * a number being rung impossible, from any replica.
 */
export class OutboundRequests implements OutboundRequestSource {
  constructor(
    private readonly local: PendingCalls,
    private readonly shared: OutboundRequestRepository | undefined,
    private readonly ttlMs: number,
    /** A requesting replica silent this long is dead: its requests give way. */
    private readonly deadAfterMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Remembers a request before its dial: here at once (nothing may come between the checks and
   * this), then in the store. Rejects with NumberInCallError when another replica rings the number.
   * A store that cannot be written leaves the request here only, with a warning: the call goes on,
   * greeted as asked if its session_start comes to this replica.
   */
  async add(to: string, variables: Record<string, string>, tags: Record<string, string> | undefined): Promise<PendingCall> {
    const pending = this.local.add(to, variables, tags);
    if (!this.shared) return pending;
    let added: boolean;
    try {
      added = await this.shared.add(pending, this.ttlMs, this.deadAfterMs);
    } catch (error) {
      this.log.warn({ err: error, to: maskNumber(pending.toPhoneNumber) }, 'the outbound request could not be stored; only this replica can greet the call as asked');
      return pending;
    }
    if (added) return pending;
    this.local.remove(pending);
    throw new NumberInCallError(pending.toPhoneNumber, undefined);
  }

  /** The call will not come (refused, or its answer timeout passed): here and in the store. */
  remove(call: PendingCall): void {
    this.local.remove(call);
    this.forgetShared(call);
  }

  /** Memory first (no wait), else the store (another replica's request). */
  take(toPhoneNumber: string | undefined): PendingCall | Promise<PendingCall | undefined> | undefined {
    if (!toPhoneNumber) return undefined;
    const local = this.local.take(toPhoneNumber);
    if (local) {
      this.forgetShared(local);
      return local;
    }
    if (!this.shared) return undefined;
    return this.shared.take(toPhoneNumber.replace(/\D/g, '')).catch((error: unknown) => {
      this.log.warn({ err: error }, 'the store could not be asked for the outbound request of a call; it is greeted as any call');
      return undefined;
    });
  }

  /** When this process's last request for the number stops waiting (see PendingCalls.waitingUntil). */
  waitingUntil(toPhoneNumber: string): number | undefined {
    return this.local.waitingUntil(toPhoneNumber);
  }

  private forgetShared(call: PendingCall): void {
    this.shared?.remove(call).catch((error: unknown) => this.log.warn({ err: error }, 'a finished outbound request could not be removed from the store; it expires on its own'));
  }
}
