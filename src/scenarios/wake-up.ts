/**
 * Waits for a condition that can only change when `wake()` is called (an
 * action arrived, a stub ran): checked then, never polled.
 */
export class WakeUp {
  private readonly wakers = new Set<() => void>();

  /** Something changed: every wait checks its condition again. */
  wake(): void {
    for (const waker of [...this.wakers]) waker();
  }

  /**
   * Resolves with the first defined result of `check`, or with its result
   * after `timeoutMs`, or at once once `over()` (nothing more can change).
   */
  until<T>(check: () => T | undefined, timeoutMs: number, over: () => boolean = () => false): Promise<T | undefined> {
    const first = check();
    if (first !== undefined || over()) return Promise.resolve(first);
    return new Promise((resolve) => {
      const finish = (result: T | undefined): void => {
        clearTimeout(timer);
        this.wakers.delete(waker);
        resolve(result);
      };
      const waker = (): void => {
        const result = check();
        if (result !== undefined || over()) finish(result);
      };
      const timer = setTimeout(() => finish(check()), timeoutMs);
      this.wakers.add(waker);
    });
  }
}
