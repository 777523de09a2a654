/**
 * The retention sweep on a timer, beside the calls and never on their path: an unref'd timer (it
 * keeps no process alive), one sweep at a time, the next one an interval after the last has ended.
 */
import { checkRetentionSettings, DAY_MS, hasRetentionLimit, RETENTION_KINDS } from './retention-settings.js';
import { CALL_RECORD_MIN_MS, FLOORED_KINDS, noRetentionCounts, sweepRetention, type RetentionCounts, type RetentionDeps } from './retention-sweep.js';

export const DEFAULT_RETENTION_INTERVAL_MS = 60 * 60_000;
/** After the start, once the start's own work (recovering calls, replaying the journal) is done. */
export const DEFAULT_RETENTION_FIRST_DELAY_MS = 60_000;

export interface RetentionSweeperOptions extends RetentionDeps {
  /** Between the end of one sweep and the start of the next. Default one hour. */
  readonly intervalMs?: number;
  /** Before the first sweep. Default one minute. */
  readonly firstDelayMs?: number;
}

export interface RetentionSweeper {
  /**
   * Sweeps now; the timer keeps its own time. While a sweep runs,
   * the answer is that sweep's. Rejects with the sweep's error; after stop(), with the stop's reason.
   */
  runNow(): Promise<RetentionCounts>;
  /** No sweep after this; a sweep running stops between two batches, and this resolves once it has. */
  stop(): Promise<void>;
}

/**
 * Starts sweeping. With no limit set there is nothing to sweep: it says so once and never touches
 * the store (runNow answers zero counts). A sweep that fails is logged as a warning and tried again
 * at the next interval.
 */
export function startRetentionSweeper(options: RetentionSweeperOptions): RetentionSweeper {
  const { intervalMs = DEFAULT_RETENTION_INTERVAL_MS, firstDelayMs = DEFAULT_RETENTION_FIRST_DELAY_MS, log } = options;
  // A bad limit, or a timer that would fire at once forever, is a mistake of the wiring: it shows at start.
  checkRetentionSettings(options.settings);
  if (!(intervalMs > 0) || !(firstDelayMs >= 0)) throw new RangeError(`retention sweeper: intervalMs must be > 0 and firstDelayMs >= 0 (got ${intervalMs}, ${firstDelayMs})`);

  const controller = new AbortController();
  const outside = options.signal;
  const onOutsideAbort = (): void => controller.abort(outside?.reason);
  if (outside?.aborted) onOutsideAbort();
  else outside?.addEventListener('abort', onOutsideAbort, { once: true });

  if (!hasRetentionLimit(options.settings)) {
    log.info('retention sweep off: no RETENTION_DAYS nor RETENTION_<KIND>_DAYS set, records are kept until deleted by hand');
    return {
      runNow: async () => {
        controller.signal.throwIfAborted();
        return noRetentionCounts();
      },
      stop: async () => {
        outside?.removeEventListener('abort', onOutsideAbort);
        controller.abort();
      },
    };
  }

  log.info({ days: Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, options.settings[kind] ?? 'forever'])), intervalMs }, 'retention sweep on');
  const short = [...FLOORED_KINDS].filter((kind) => (options.settings[kind] ?? Infinity) * DAY_MS < CALL_RECORD_MIN_MS);
  if (short.length > 0) log.info({ kinds: short }, 'retention of calls, reports and transcripts is a day at least: a call without a report is reported for a day after it ended');

  let running: Promise<RetentionCounts> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const sweep = (): Promise<RetentionCounts> => {
    if (controller.signal.aborted) return Promise.reject(controller.signal.reason as unknown);
    running ??= sweepRetention({ ...options, signal: controller.signal }).finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = (delayMs: number): void => {
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      timer = undefined;
      void sweep()
        .catch((error: unknown) => {
          if (!controller.signal.aborted) log.warn({ err: error }, 'retention sweep failed; tried again at the next interval');
        })
        .finally(() => schedule(intervalMs));
    }, delayMs);
    timer.unref();
  };
  schedule(firstDelayMs);

  return {
    runNow: sweep,
    async stop() {
      outside?.removeEventListener('abort', onOutsideAbort);
      if (timer) clearTimeout(timer);
      timer = undefined;
      controller.abort();
      // Its rejection is the abort (or a failure already logged): stopping is what was asked for.
      await running?.catch(() => undefined);
    },
  };
}
