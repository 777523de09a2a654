import type { PendingCall } from '../call/ports/outbound-request.js';

/**
 * Remembers requested outbound calls until their session_start arrives.
 * Nothing ties a session_start to the request but the called number and the
 * direction, so several calls to one number are matched oldest first.
 */
export class PendingCalls {
  private readonly byNumber = new Map<string, PendingCall[]>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  add(toPhoneNumber: string, variables: Record<string, string>, tags?: Record<string, string>): PendingCall {
    this.prune();
    const key = digitsOf(toPhoneNumber);
    const call: PendingCall = {
      toPhoneNumber: key,
      variables: { ...variables },
      ...(tags ? { tags: { ...tags } } : {}),
      requestedAt: this.now(),
    };
    const list = this.byNumber.get(key) ?? [];
    list.push(call);
    this.byNumber.set(key, list);
    return call;
  }

  /** Forgets a request the service refused: no call will come for it. */
  remove(call: PendingCall): void {
    const list = this.byNumber.get(call.toPhoneNumber);
    if (!list) return;
    const rest = list.filter((c) => c !== call);
    if (rest.length > 0) this.byNumber.set(call.toPhoneNumber, rest);
    else this.byNumber.delete(call.toPhoneNumber);
  }

  /** Takes the oldest unexpired request for this number, if any. */
  take(toPhoneNumber: string | undefined): PendingCall | undefined {
    if (!toPhoneNumber) return undefined;
    const key = digitsOf(toPhoneNumber);
    const list = this.byNumber.get(key);
    if (!list) return undefined;
    const fresh = list.filter((c) => this.now() - c.requestedAt <= this.ttlMs);
    const taken = fresh.shift();
    if (fresh.length > 0) this.byNumber.set(key, fresh);
    else this.byNumber.delete(key);
    return taken;
  }

  /**
   * When the last unexpired request for this number stops waiting for its call, if there is one:
   * until then the number is being rung, and must not be rung again.
   */
  waitingUntil(toPhoneNumber: string): number | undefined {
    const list = this.byNumber.get(digitsOf(toPhoneNumber));
    let until: number | undefined;
    for (const call of list ?? []) {
      const expires = call.requestedAt + this.ttlMs;
      if (expires >= this.now() && (until === undefined || expires > until)) until = expires;
    }
    return until;
  }

  /** Requests whose call never arrived are dropped once they expire. */
  private prune(): void {
    for (const [key, list] of this.byNumber) {
      const fresh = list.filter((c) => this.now() - c.requestedAt <= this.ttlMs);
      if (fresh.length > 0) this.byNumber.set(key, fresh);
      else this.byNumber.delete(key);
    }
  }

  get size(): number {
    let n = 0;
    for (const list of this.byNumber.values()) n += list.length;
    return n;
  }
}

/** The service sends digits without '+'; be lenient about formatting on its side. */
function digitsOf(number: string): string {
  return number.replace(/\D/g, '');
}
