import { stat } from 'node:fs/promises';
import type { CallProgress } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import type { CallWriter } from './call-writer.js';

export interface CallsLeftBehind {
  /** This replica's calls in progress at its start, oldest first (see CallRepository.leftBehind). */
  leftBehind(limit: number): Promise<CallProgress[]>;
  /** Calls in progress of replicas dead for `deadAfterMs`. */
  orphaned(limit: number, deadAfterMs: number): Promise<(CallProgress & { owner: string })[]>;
  /** Takes one of those over: false when another replica was first. */
  claim(callId: string, from: string): Promise<boolean>;
}

const PAGE = 200;
const SETTLE_MS = 30_000;

/**
 * At start, before any call: every call the store holds as in progress for this replica was left
 * so by its earlier start, stopped without ending it (killed, out of memory, a crash). Each is
 * recorded as cut off, ending at its last sign of life — its transcript's last write, else its last
 * turn — with what was said until then; its report follows as for any call. Other replicas' calls
 * are theirs, or, once they are dead, settled by `cutOffOrphanedCalls`.
 */
export async function cutOffCallsInProgress(calls: CallsLeftBehind, writer: CallWriter, logger: Logger): Promise<number> {
  const count = await cutOffPages((limit) => calls.leftBehind(limit), async () => true, writer);
  if (count > 0) logger.warn({ calls: count }, 'calls left in progress by a process that stopped without ending them are recorded as cut off');
  return count;
}

/**
 * While running: the calls of a replica whose heartbeat stopped are cut off by whichever live
 * replica claims each first (one conditional UPDATE), so each is recorded and reported once.
 */
export async function cutOffOrphanedCalls(calls: CallsLeftBehind, deadAfterMs: number, writer: CallWriter, logger: Logger): Promise<number> {
  const count = await cutOffPages(
    (limit) => calls.orphaned(limit, deadAfterMs),
    (call) => calls.claim(call.callId, call.owner),
    writer,
  );
  if (count > 0) logger.warn({ calls: count }, 'calls of a replica that stopped beating are recorded as cut off');
  return count;
}

async function cutOffPages<Call extends CallProgress>(
  page: (limit: number) => Promise<Call[]>,
  claim: (call: Call) => Promise<boolean>,
  writer: CallWriter,
): Promise<number> {
  let count = 0;
  const seen = new Set<string>();
  for (;;) {
    const calls = (await page(PAGE)).filter((call) => !seen.has(call.callId));
    if (calls.length === 0) break;
    for (const call of calls) {
      seen.add(call.callId);
      if (!(await claim(call))) continue;
      void writer.cutOff(call, await lastSignOfLife(call));
      count += 1;
    }
    // The next page is asked for once these are written, or it would be the same calls again. A
    // database that stops taking writes now leaves the rest to the next look (they stay in progress).
    if (!(await writer.settled(SETTLE_MS))) break;
  }
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
