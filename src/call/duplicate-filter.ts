/**
 * Remembers recent event payloads so a redelivered event is handled once.
 * Only events that start work are filtered: two assistant_speech_ended
 * events are identical by nature and both matter.
 */
export class DuplicateFilter {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs = 2000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True if the same payload was seen within the window; records it either way. */
  isDuplicate(payload: unknown): boolean {
    const key = stableStringify(payload);
    const now = this.now();
    for (const [k, at] of this.seen) {
      if (now - at <= this.windowMs) break; // insertion order is time order
      this.seen.delete(k);
    }
    const last = this.seen.get(key);
    this.seen.delete(key);
    this.seen.set(key, now);
    return last !== undefined && now - last <= this.windowMs;
  }
}

/** JSON with sorted keys, so the same event with reordered fields is still the same event. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
