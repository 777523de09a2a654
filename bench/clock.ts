/**
 * The bench's one clock. Each thread has its own performance.timeOrigin, so a
 * time taken on a worker is moved onto the main thread's clock with the
 * difference of the two threads' offsets to hrtime, which every thread of the
 * process reads alike.
 */

export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** now() minus hrtime: differs per thread, constant within one. */
export function clockOffset(): number {
  const hr = Number(process.hrtime.bigint()) / 1e6;
  return now() - hr;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
