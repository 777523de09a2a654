import { stat } from 'node:fs/promises';
import type { CallProgress } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import type { CallWriter } from './call-writer.js';

export interface CallsInProgress {
  /** Rows of calls without an end, oldest first. */
  inProgress(limit: number): Promise<CallProgress[]>;
}

const PAGE = 200;
const SETTLE_MS = 30_000;

/**
 * At start, before any call: every call the store holds as in progress was left so by a process
 * that stopped without ending it (killed, out of memory, a crash). Each is recorded as cut off,
 * ending at its last sign of life — its transcript's last write, else its last turn — with what
 * was said until then; its report follows as for any call.
 *
 * One process per store is assumed: replicas sharing PostgreSQL need to know whose calls these
 * were before cutting them off (see the replicas issue).
 */
export async function cutOffCallsInProgress(calls: CallsInProgress, writer: CallWriter, logger: Logger): Promise<number> {
  let count = 0;
  const seen = new Set<string>();
  for (;;) {
    const page = (await calls.inProgress(PAGE)).filter((call) => !seen.has(call.callId));
    if (page.length === 0) break;
    for (const call of page) {
      seen.add(call.callId);
      writer.cutOff(call, await lastSignOfLife(call));
      count += 1;
    }
    // The next page is asked for once these are written, or it would be the same calls again. A
    // database that stops taking writes now leaves the rest to the next start (they stay in progress).
    if (!(await writer.settled(SETTLE_MS))) break;
  }
  if (count > 0) logger.warn({ calls: count }, 'calls left in progress by a process that stopped without ending them are recorded as cut off');
  return count;
}

async function lastSignOfLife(call: CallProgress): Promise<Date> {
  const times = [Date.parse(call.startedAt), ...call.turns.map((turn) => Date.parse(turn.at))].filter(Number.isFinite);
  try {
    times.push((await stat(call.transcriptFile)).mtimeMs);
  } catch {
    // No transcript on disk (another machine's, or deleted): the record's own times tell.
  }
  return new Date(times.length > 0 ? Math.max(...times) : Date.now());
}
