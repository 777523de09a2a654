import type { CallSoFar } from './call-summary.js';

/** What a transcript on disk says of a call Hotline no longer has in memory (a restart, another instance). */
export interface PriorCall {
  /** From the call's session_start, if it was written. */
  session: { direction?: string | undefined; from?: string | undefined; to?: string | undefined } | undefined;
  /** An outbound request's variables, if the call was one. */
  variables: Record<string, string> | undefined;
  /** The conversation as the caller heard it, oldest first. */
  lines: { role: 'user' | 'assistant'; text: string }[];
  /**
   * The call's last line is its session_end, and it ended for good: the service ended it, or Hotline
   * hung up or handed it over. A call Hotline only let go of (a shutdown, a broken connection:
   * `"open": true`) may still be going on at the service, and is adopted.
   */
  ended: boolean;
  /** Hotline's id of the call (session_start's or session_adopted's `call_id`), if the transcript has one. */
  callId: string | undefined;
  /**
   * The call's record as another replica (or an earlier start) left it in the store: the call goes
   * on as the same record, its earlier turns kept.
   */
  record?: CallSoFar | undefined;
}

/** What the store's record of a call says of it, for a replica taking the call up without its transcript. */
export function priorCallOf(record: CallSoFar, ended: boolean): PriorCall {
  return {
    session: { direction: record.direction, from: record.from, to: record.to },
    variables: record.variables ? { ...record.variables } : undefined,
    lines: (record.conversation ?? []).map((line) => ({ role: line.role, text: line.text })),
    ended,
    callId: record.callId,
    record,
  };
}

/**
 * What this disk's transcript says of a call, with its record from elsewhere (`stored`): the
 * transcript's words where it has them (they hold more than the record's), the record either way.
 * A transcript of another call with the same session id (the service used the id again) stands alone.
 */
export function withRecord(onDisk: PriorCall | undefined, stored: PriorCall | undefined): PriorCall | undefined {
  if (!stored) return onDisk;
  if (!onDisk) return stored;
  if (onDisk.ended || (onDisk.callId !== undefined && onDisk.callId !== stored.callId)) return onDisk;
  return { ...onDisk, record: stored.record };
}
