/** The outside phase's table and aims (issue 40): the headline figures, printed first. */
import type { BargeInResult } from './barge-in.js';
import type { FloorLevel } from './first-speak.js';
import type { OutsideLevel, OutsideResult } from './outside.js';
import { formatMs } from './stats.js';
import { signedMs, table } from './table.js';
import { judge, type Target } from './target.js';

/** Issue 40's aims. */
const ABOVE_FLOOR_P50_MS = 0.2;
const OVER_FLOOR_P99 = 1.5;
const BARGE_IN_P99_MS = 2;
const IDLE_CALL_KB = 10;
const GC_PAUSE_MS = 3;
/** The level whose longest GC pause is judged. */
const GC_CALLS = 250;

/** Hotline's outside first-speak p50 minus the floor's, in ms. */
export function outsideAboveFloorP50(level: OutsideLevel | undefined): number | undefined {
  return level?.floor ? level.hotline.endToEndMs.p50 - level.floor.endToEndMs.p50 : undefined;
}

/** Hotline's outside first-speak p99 over the floor's. */
export function outsideOverFloorP99(level: OutsideLevel | undefined): number | undefined {
  return level?.floor ? level.hotline.endToEndMs.p99 / level.floor.endToEndMs.p99 : undefined;
}

export function outsideTargets(result: OutsideResult): Target[] {
  const at = (calls: number): OutsideLevel | undefined => result.levels.find((l) => l.calls === calls);
  const bargeIn = (run: BargeInResult | undefined): Target | undefined =>
    run && judge(`outside: barge-in sent → the model saw its stream close p99, ${run.calls} calls`, run.serverSawCloseMs.p99, BARGE_IN_P99_MS, 'ms');
  const stale = result.bargeIn || result.bargeInLowLoad ? (result.bargeIn?.staleSent ?? 0) + (result.bargeInLowLoad?.staleSent ?? 0) : undefined;
  return [
    judge("outside: first-speak p50 above the floor's, 1 call", outsideAboveFloorP50(at(1)), ABOVE_FLOOR_P50_MS, 'ms'),
    judge("outside: first-speak p99 over the floor's, 100 calls", outsideOverFloorP99(at(100)), OVER_FLOOR_P99, '×'),
    bargeIn(result.bargeInLowLoad),
    bargeIn(result.bargeIn),
    judge('outside: stale speaks sent after the barge-in reached Hotline', stale, 0, ''),
    judge('outside: memory per greeted idle call, the production process (RSS)', result.memory?.rssKbPerCall, IDLE_CALL_KB, 'KB'),
    judge(`outside: longest GC pause of Hotline, ${GC_CALLS} calls talking`, at(GC_CALLS)?.hotline.eventLoop.gcPauseMaxMs, GC_PAUSE_MS, 'ms'),
  ].filter((t): t is Target => t !== undefined);
}

export function renderOutside(result: OutsideResult): string[] {
  const out: string[] = ['', '0. Outside: Hotline as production runs it, seen from the callers\', the model\'s and the floor\'s processes (ms)'];
  out.push(`   ${result.note}`);
  if (result.levels.length > 0) {
    const cells = (level: OutsideLevel, who: string, l: FloorLevel): (string | number)[] => [
      level.calls,
      who,
      l.turns,
      l.speaks,
      formatMs(l.endToEndMs.p50),
      formatMs(l.endToEndMs.p90),
      formatMs(l.endToEndMs.p99),
      formatMs(l.endToEndMs.max),
      formatMs(l.overheadMs.p50),
      formatMs(l.overheadMs.p99),
      l.timedOut,
      formatMs(l.eventLoop.p99Ms),
      `${(l.eventLoop.utilization * 100).toFixed(0)} %`,
      l.eventLoop.gcPauseMaxMs === undefined ? '–' : formatMs(l.eventLoop.gcPauseMaxMs),
    ];
    out.push(
      ...table(
        ['calls', 'reader', 'turns', 'speaks', 'outside p50', 'p90', 'p99', 'max', 'inside p50', 'p99', 'timed out', 'loop p99', 'busy', 'GC max'],
        result.levels.flatMap((level) => [cells(level, 'Hotline', level.hotline), ...(level.floor ? [cells(level, 'floor', level.floor)] : [])]),
      ),
    );
    const floored = result.levels.filter((l) => l.floor);
    if (floored.length > 0) {
      out.push(
        `   Hotline above the floor, outside: ${floored
          .map((l) => `${l.calls} calls p50 ${signedMs(outsideAboveFloorP50(l))} ms, p99 ${(outsideOverFloorP99(l) ?? Number.NaN).toFixed(2)}×`)
          .join('; ')}.`,
      );
    }
    out.push(
      '   outside = the model\'s process wrote the completing token → the speak reached the callers\' process; inside = → it',
      '   left Hotline\'s WebSocket send (a probe in Hotline). loop p99, busy and GC max are Hotline\'s (or the floor\'s) event loop.',
    );
  }
  const runs = [result.bargeInLowLoad, result.bargeIn].filter((run): run is BargeInResult => run !== undefined);
  if (runs.length > 0) {
    out.push(
      ...table(
        ['barge-in', 'n', 'sent → model saw close p50', 'p99', 'max', 'sent → Hotline closed p99', 'bytes in → closed p99', 'stale sent', 'crossed'],
        runs.map((run) => [
          `${run.calls} calls`,
          run.serverSawCloseMs.count,
          formatMs(run.serverSawCloseMs.p50),
          formatMs(run.serverSawCloseMs.p99),
          formatMs(run.serverSawCloseMs.max),
          formatMs(run.abortMs.p99),
          formatMs(run.abortFromReceivedMs.p99),
          run.staleSent,
          run.crossedInFlight,
        ]),
      ),
    );
  }
  const m = result.memory;
  if (m) {
    out.push(
      `   memory per greeted idle call, ${m.idleCalls} calls held by a process of their own: RSS ${m.rssKbPerCall.toFixed(1)} KB, ` +
        `heap ${m.heapKbPerCall.toFixed(1)} KB, external ${m.externalKbPerCall.toFixed(1)} KB (the production process's own figures).`,
    );
  }
  return out;
}
