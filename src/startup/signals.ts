import { constants } from 'node:os';
import type { Logger } from '../logger.js';

export type StopSignal = 'SIGTERM' | 'SIGINT';

/**
 * The first SIGTERM/SIGINT starts the graceful shutdown; a second one exits at once, because
 * a person pressing Ctrl-C twice does not want to wait for calls to finish.
 */
export function onStopSignals(
  logger: Logger,
  shutdown: (signal: StopSignal) => Promise<void>,
  exit: (code: number) => never = (code) => process.exit(code),
  /** A worker of WORKERS listens for SIGTERM only: the terminal's Ctrl-C reaches it through its primary, once. */
  signals: readonly StopSignal[] = ['SIGTERM', 'SIGINT'],
): void {
  let stopping = false;
  const handle = (signal: StopSignal): void => {
    if (stopping) {
      logger.warn({ signal }, `${signal} again: exiting at once, calls in progress are cut off`);
      logger.flush();
      // As a shell reports a process killed by that signal: 130 for SIGINT, 143 for SIGTERM.
      exit(128 + constants.signals[signal]);
    }
    stopping = true;
    shutdown(signal).then(
      () => {
        logger.flush();
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'graceful shutdown failed');
        logger.flush();
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, () => handle(signal));
  // A worker must not die of the terminal's SIGINT, which reaches the whole process group.
  if (!signals.includes('SIGINT')) process.on('SIGINT', () => undefined);
}
