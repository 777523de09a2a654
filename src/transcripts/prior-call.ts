import { open } from 'node:fs/promises';
import { z } from 'zod';
import type { CallSoFar } from '../call/ports/call-summary.js';

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

/** Only the end of a long transcript matters to the conversation, and a huge file must not cost the call its answer. */
const MAX_READ_BYTES = 256 * 1024;

const Line = z.looseObject({
  role: z.string(),
  text: z.string().catch(''),
  direction: z.string().optional().catch(undefined),
  from: z.string().optional().catch(undefined),
  to: z.string().optional().catch(undefined),
  variables: z.record(z.string(), z.string()).optional().catch(undefined),
  call_id: z.string().optional().catch(undefined),
  origin: z.string().optional().catch(undefined),
  end_reason: z.string().optional().catch(undefined),
  open: z.boolean().optional().catch(undefined),
});

/** A session_end line of a call that is over. Older lines, without end_reason, say so only when the service ended the call. */
function endedForGood(line: z.output<typeof Line>): boolean {
  if (line.open === true) return false;
  return line.origin === 'service' || line.end_reason !== undefined;
}

/** Reads a call's transcript; undefined when there is none. Broken lines (a crash mid-write) are skipped. */
export async function readPriorCall(file: string): Promise<PriorCall | undefined> {
  let text: string;
  try {
    text = await readTail(file, MAX_READ_BYTES);
  } catch {
    return undefined;
  }
  const prior: PriorCall = { session: undefined, variables: undefined, lines: [], ended: false, callId: undefined };
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let parsed;
    try {
      parsed = Line.safeParse(JSON.parse(raw));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    const line = parsed.data;
    prior.ended = line.role === 'event' && line.text === 'session_end' && endedForGood(line);
    if (line.role === 'event' && line.call_id !== undefined) prior.callId = line.call_id;
    if (line.role === 'event' && line.text === 'session_start') {
      prior.session = { direction: line.direction, from: line.from, to: line.to };
      prior.variables = line.variables;
    } else if ((line.role === 'user' || line.role === 'assistant') && line.text.trim() !== '') {
      prior.lines.push({ role: line.role, text: line.text });
    }
  }
  return prior;
}

async function readTail(file: string, maxBytes: number): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.toString('utf8');
    // A cut first line is a broken line: drop it.
    return start > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    await handle.close();
  }
}
