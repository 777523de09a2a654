import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.js';
import type { CallObserver, CallStartedInfo } from './ports/call-summary.js';

/**
 * The greeting waits at most this long for the call's start to be on record (a campaign's contact
 * marked reached, the person on the line known to every replica): a moment on a healthy store; a
 * locked one must not leave the person listening to silence.
 */
const STARTED_RECORD_WAIT_MS = 250;

/** Tells the observer a call started; resolves once it has recorded that, or the bound has passed (never rejects). */
export function tellStarted(
  observer: CallObserver | undefined,
  info: CallStartedInfo,
  logger: Logger,
  waitMs: number = STARTED_RECORD_WAIT_MS,
): Promise<void> | undefined {
  let recorded: Promise<void> | void = undefined;
  try {
    recorded = observer?.callStarted?.(info);
  } catch (error) {
    logger.error({ err: error, sessionId: info.sessionId }, 'recording the started call failed');
  }
  if (!recorded) return undefined;
  const bound = new AbortController();
  return Promise.race([
    recorded
      .catch((error: unknown) => logger.error({ err: error, sessionId: info.sessionId }, 'recording the started call failed'))
      .finally(() => bound.abort()),
    sleep(waitMs, undefined, { signal: bound.signal, ref: false }).then(
      () => logger.warn({ sessionId: info.sessionId }, 'the call\'s start is not on record yet; greeting the person regardless'),
      () => undefined,
    ),
  ]);
}
