import type { OutboundRequestSource, PendingCall } from '../call/ports/outbound-request.js';
import type { CallProgress, CallStartedInfo, CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import type { NumberBusy, OutboundRequestRepository } from '../store/outbound-request-repository.js';
import { NumberInCallError } from './errors.js';
import { maskNumber } from '../phone/mask-number.js';
import type { PendingCalls } from './pending-calls.js';
import { phoneKey } from '../phone/phone-number.js';

/** A call on the line here: the store's work for its number, one step after the other, and whether its row is the call's. */
interface Line {
  work: Promise<void>;
  held: boolean;
  asking: number;
}

/**
 * The numbers in a call, in this process's memory and in the store. A requested call is remembered
 * here and in the store: a session_start that reaches the replica that asked is matched at once,
 * from memory; one that reaches another replica is matched from the store a moment later. Once a
 * call is on the line — answered, or a person calling in — its number stays in the store, held by
 * the replica that has the call, until the call ends. The store's row per number makes a second
 * call to a number being rung or on the line impossible, from any replica.
 */
export class OutboundRequests implements OutboundRequestSource {
  private readonly lines = new Map<string, Line>();
  private readonly freedListeners = new Set<() => void>();

  constructor(
    private readonly local: PendingCalls,
    private readonly shared: OutboundRequestRepository | undefined,
    private readonly ttlMs: number,
    private readonly log: Logger,
    private readonly defaultCountryCode?: string | undefined,
  ) {}

  /**
   * Remembers a request before its dial: here at once (nothing may come between the checks and
   * this), then in the store. Rejects with NumberInCallError when another call has the number, at any
   * replica. A store that cannot be written leaves the request here only, with a warning: the call
   * goes on, greeted as asked if its session_start comes to this replica.
   * `ringForMs`: how long the call may ring before it is given up (a campaign's answer timeout).
   */
  async add(to: string, variables: Record<string, string>, tags: Record<string, string> | undefined, ringForMs?: number): Promise<PendingCall> {
    const pending = this.local.add(to, variables, tags);
    if (!this.shared) return pending;
    let added: Awaited<ReturnType<OutboundRequestRepository['add']>>;
    try {
      added = await this.shared.add(pending, Math.min(this.ttlMs, ringForMs ?? this.ttlMs));
    } catch (error) {
      this.log.warn({ err: error, to: maskNumber(pending.toPhoneNumber) }, 'the outbound request could not be stored; only this replica can greet the call as asked');
      return pending;
    }
    if (added.added) return pending;
    this.local.remove(pending);
    throw new NumberInCallError(pending.toPhoneNumber, untilOf(added.busy));
  }

  /**
   * Whether another call has the number in the store (rung or on the line, at any live replica): as
   * NumberInCallError, undefined when not. A store that cannot be asked says nothing: the claim at
   * the dial (`add`) decides.
   */
  async busy(to: string): Promise<NumberInCallError | undefined> {
    if (!this.shared) return undefined;
    const busy = await this.shared.busy(to).catch((error: unknown) => {
      this.log.warn({ err: error }, 'the store could not say whether a number is in a call; the dial will ask it again');
      return undefined;
    });
    return busy && new NumberInCallError(to, untilOf(busy));
  }

  /** The call will not come (refused, or its answer timeout passed): here and in the store. Never rejects. */
  remove(call: PendingCall): Promise<void> {
    this.local.remove(call);
    return this.forgetShared(call);
  }

  /**
   * Memory first (no wait), else the store (another replica's request). With the session of the
   * call that answers it, the number stays in the store as that call's, until it ends.
   */
  take(toPhoneNumber: string | undefined, sessionId?: string): PendingCall | Promise<PendingCall | undefined> | undefined {
    if (!toPhoneNumber) return undefined;
    const local = this.local.take(toPhoneNumber);
    const { shared } = this;
    if (local) {
      if (!sessionId) void this.forgetShared(local);
      else if (shared) this.step(sessionId, () => shared.answered(local, sessionId));
      return local;
    }
    if (!shared) return undefined;
    const taken = shared.take(toPhoneNumber.replace(/\D/g, ''), sessionId).catch((error: unknown) => {
      this.log.warn({ err: error }, 'the store could not be asked for the outbound request of a call; it is greeted as any call');
      return undefined;
    });
    if (sessionId) this.step(sessionId, async () => (await taken) !== undefined);
    return taken;
  }

  /** When this process's last request for the number stops waiting (see PendingCalls.waitingUntil). */
  waitingUntil(toPhoneNumber: string): number | undefined {
    return this.local.waitingUntil(toPhoneNumber);
  }

  /**
   * A call started here (CallObserver.callStarted): the person on the line is held in the store as
   * this call's, a moment later. The greeting does not wait for it: an answered call's number was held
   * from its ring on (the same row turns into the call's), and a person calling in is dialled from
   * elsewhere in that moment as in any other — waiting would only keep every caller from hearing Hotline
   * a round trip to the database longer.
   */
  callStarted(info: Pick<CallStartedInfo, 'sessionId' | 'direction' | 'from' | 'to'>): void {
    void this.hold(info);
  }

  /**
   * A call's record so far (CallObserver.callProgress): a call taken up from another replica is held
   * here from its first record on — and any call again at a later change if another call had the number then.
   */
  callProgress(call: Pick<CallProgress, 'sessionId' | 'direction' | 'from' | 'to'>): void {
    void this.hold(call);
  }

  /** A call ended here (CallObserver.callEnded): its number is free, once the store has it so. */
  callEnded(summary: Pick<CallSummary, 'sessionId'>): void {
    const { shared } = this;
    if (!shared) return;
    const { sessionId } = summary;
    this.step(sessionId, async () => {
      await shared.release(sessionId);
      return false;
    });
    const line = this.lines.get(sessionId)!;
    void line.work.then(() => {
      if (this.lines.get(sessionId) === line && line.asking === 0) this.lines.delete(sessionId);
      for (const listener of this.freedListeners) listener();
    });
  }

  /** Resolves once the store has what this process last told it of each call's number. */
  async settled(): Promise<void> {
    await Promise.all([...this.lines.values()].map((line) => line.work));
  }

  /** Told each time a number was freed in the store by a call's end here (a campaign contact may wait for it). */
  onFreed(listener: () => void): void {
    this.freedListeners.add(listener);
  }

  /** The number of the person on the line in this call held in the store as its own, unless it is already or being so. */
  private hold(call: Pick<CallStartedInfo, 'sessionId' | 'direction' | 'from' | 'to'>): Promise<void> | undefined {
    const { shared } = this;
    const party = call.direction === 'outbound' ? call.to : call.from;
    if (!shared || !party) return undefined;
    const line = this.lines.get(call.sessionId);
    if (line && (line.held || line.asking > 0)) return line.work;
    const number = phoneKey(party, { defaultCountryCode: this.defaultCountryCode });
    // An anonymous caller has no number anyone could dial.
    if (number === '') return undefined;
    return this.step(call.sessionId, () => shared.hold(number, call.sessionId));
  }

  /** One more step of a call's work on the store, after the ones before it: a release never overtakes the take or hold it undoes. */
  private step(sessionId: string, work: () => Promise<boolean>): Promise<void> {
    let line = this.lines.get(sessionId);
    if (!line) this.lines.set(sessionId, (line = { work: Promise.resolve(), held: false, asking: 0 }));
    const current = line;
    current.asking += 1;
    current.work = current.work
      .then(work)
      .then(
        (held) => {
          current.held = held;
        },
        (error: unknown) => this.log.warn({ err: error, sessionId }, 'the store could not be told who is on the line in a call; other replicas may not know it'),
      )
      .finally(() => {
        current.asking -= 1;
      });
    return current.work;
  }

  private forgetShared(call: PendingCall): Promise<void> {
    return (
      this.shared
        ?.remove(call)
        .catch((error: unknown) => this.log.warn({ err: error }, 'a finished outbound request could not be removed from the store; it expires on its own')) ??
      Promise.resolve()
    );
  }
}

/** Epoch ms (this process's clock) when a ring stops being waited for; undefined while on the line. */
function untilOf(busy: NumberBusy): number | undefined {
  return busy.ringingForMs === undefined ? undefined : Date.now() + busy.ringingForMs;
}
