/**
 * Which addresses, out of failures, already have their refusal on record for the window they are
 * refused in. Each refusal is a try nothing was compared for: on record once per window, it says as
 * much as four hundred rows would, which would only push the entries that matter off the audit page.
 */
export class RefusalsNoted {
  private readonly until = new Map<string, number>();

  constructor(private readonly most = 10_000) {}

  /** True for an address's first refusal in a window ending `waitSeconds` from `now`; false for the rest of it. */
  first(address: string, waitSeconds: number, now = Date.now()): boolean {
    if ((this.until.get(address) ?? 0) > now) return false;
    if (this.until.size >= this.most) {
      for (const [other, until] of this.until) if (until <= now) this.until.delete(other);
      // Still full: an address's refusal is on record once more than it needs, never less.
      if (this.until.size >= this.most) this.until.clear();
    }
    this.until.set(address, now + waitSeconds * 1000);
    return true;
  }
}
