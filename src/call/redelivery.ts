import type { VoiceEvent } from '../protocol/events.js';

/**
 * Tells a redelivered event from a repetition. A duplicate is the same event
 * again with nothing else having happened in the call since — no other event,
 * no action. A caller who answers "yes" to two questions, or says "stop
 * please" twice, said it twice: an action (the reply to the first) lies between.
 * Only events that start work are candidates: two assistant_speech_ended in a
 * row are both real.
 */
export class RedeliveryFilter {
  private last: string | undefined;

  /** True if `event` repeats the event before it; every event is remembered either way. */
  isRedelivery(event: VoiceEvent): boolean {
    const key = event.type === 'session_start' || event.type === 'user_speak' ? stableStringify(event) : undefined;
    const again = key !== undefined && key === this.last;
    this.last = key;
    return again;
  }

  /** Something happened in the call (an action went out): whatever comes next is new. */
  reset(): void {
    this.last = undefined;
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
