import type { CallObserver } from '../call/ports/call-summary.js';

/** Several observers as one (reports and campaigns): each is told, in order; one that throws does not silence the next. */
export function combineObservers(observers: readonly CallObserver[], onError: (error: unknown) => void): CallObserver {
  const each = (tell: (observer: CallObserver) => void): void => {
    for (const observer of observers) {
      try {
        tell(observer);
      } catch (error) {
        onError(error);
      }
    }
  };
  return {
    callEnded: (summary) => each((o) => o.callEnded(summary)),
    callProgress: (call) => each((o) => o.callProgress?.(call)),
    callStarted: (info) => {
      const written: Promise<void>[] = [];
      each((o) => {
        const result = o.callStarted?.(info);
        if (result) written.push(result.catch(onError));
      });
      return written.length > 0 ? Promise.all(written).then(() => undefined) : undefined;
    },
    callNotConnected: (request, reason) => each((o) => o.callNotConnected?.(request, reason)),
  };
}
