/**
 * A start that waits says what for. Each part of startHotline runs as a step; a step still under
 * way after a second logs `still starting: <what it waits for> …` (and again every few seconds),
 * and, once done, how long it took (a step that fails leaves that to the start's error). A fast start logs nothing and pays one timer per step.
 */
import type { Logger } from '../logger.js';

export interface StartProgress {
  /** Runs `work`, saying `what` is waited for if it takes longer than a second. */
  step<T>(what: string, work: () => Promise<T>): Promise<T>;
}

export interface StartProgressOptions {
  /** The first line after this long; default a second. */
  readonly afterMs?: number;
  /** Then one line every this long; default 5 s. */
  readonly everyMs?: number;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export function startProgress(logger: Logger, options: StartProgressOptions = {}): StartProgress {
  const afterMs = options.afterMs ?? 1_000;
  const everyMs = options.everyMs ?? 5_000;
  return {
    async step(what, work) {
      const startedAt = performance.now();
      let said = false;
      const say = (): void => {
        said = true;
        const waitedMs = Math.round(performance.now() - startedAt);
        logger.info({ waitingFor: what, waitedMs }, `still starting: ${what} … (${seconds(waitedMs)})`);
        timer = setTimeout(say, everyMs).unref();
      };
      let timer = setTimeout(say, afterMs).unref();
      try {
        const result = await work();
        if (said) {
          const tookMs = Math.round(performance.now() - startedAt);
          logger.info({ waitedFor: what, tookMs }, `${what}: done in ${seconds(tookMs)}`);
        }
        return result;
      } finally {
        // A step that failed says nothing more: the start's error says what to fix.
        clearTimeout(timer);
      }
    },
  };
}
