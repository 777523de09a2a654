import type { CallObserver } from './ports/call-summary.js';

/**
 * Everyone told of the calls' lives (the record, the numbers on the line, the campaigns, the
 * cluster), as one observer for the registry. Each is told in the order it was added — the record
 * before the campaigns, so a number is being freed when they look at it again — and one that throws
 * does not silence the next. Added to as the features open: the campaigns need the registry before
 * they can observe it.
 */
export class CallObservers implements CallObserver {
  private readonly observers: CallObserver[] = [];

  constructor(private readonly onError: (error: unknown) => void) {}

  add(...observers: readonly CallObserver[]): void {
    this.observers.push(...observers);
  }

  callEnded(summary: Parameters<CallObserver['callEnded']>[0]): void {
    this.each((o) => o.callEnded(summary));
  }

  callProgress(call: Parameters<NonNullable<CallObserver['callProgress']>>[0]): void {
    this.each((o) => o.callProgress?.(call));
  }

  callStarted(info: Parameters<NonNullable<CallObserver['callStarted']>>[0]): Promise<void> | undefined {
    const written: Promise<void>[] = [];
    this.each((o) => {
      const result = o.callStarted?.(info);
      if (result) written.push(result.catch(this.onError));
    });
    return written.length > 0 ? Promise.all(written).then(() => undefined) : undefined;
  }

  callNotConnected(...args: Parameters<NonNullable<CallObserver['callNotConnected']>>): void {
    this.each((o) => o.callNotConnected?.(...args));
  }

  private each(tell: (observer: CallObserver) => void): void {
    for (const observer of this.observers) {
      try {
        tell(observer);
      } catch (error) {
        this.onError(error);
      }
    }
  }
}
