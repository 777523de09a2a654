/**
 * Time as the campaign scheduler sees it: injectable, so tests can open
 * calling hours without waiting for the morning.
 */
export interface Clock {
  now(): number;
  /** Runs `run` at `at` (epoch ms) or soon after; the returned function cancels it. Never keeps the process alive. */
  at(at: number, run: () => void): () => void;
}

/** setTimeout takes at most 2^31-1 ms; a later moment is reached in hops. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  at(at, run) {
    let timer: NodeJS.Timeout;
    const arm = (): void => {
      const delay = at - Date.now();
      timer = setTimeout(delay > MAX_DELAY_MS ? arm : run, Math.max(0, Math.min(delay, MAX_DELAY_MS)));
      timer.unref();
    };
    arm();
    return () => clearTimeout(timer);
  },
};

/**
 * Real time that flows from a chosen start and can jump ahead: calls and
 * answer timeouts run at their own real pace, while `advance` crosses hours
 * at once and fires whatever came due. For tests and demonstrations.
 */
export class ShiftedClock implements Clock {
  private offset: number;
  private readonly timers = new Set<{ at: number; run: () => void; timer: NodeJS.Timeout }>();

  constructor(start: number) {
    this.offset = start - Date.now();
  }

  now(): number {
    return Date.now() + this.offset;
  }

  at(at: number, run: () => void): () => void {
    const entry = { at, run, timer: undefined as unknown as NodeJS.Timeout };
    const fire = (): void => {
      this.timers.delete(entry);
      run();
    };
    entry.run = fire;
    entry.timer = setTimeout(fire, Math.max(0, Math.min(at - this.now(), MAX_DELAY_MS)));
    entry.timer.unref();
    this.timers.add(entry);
    return () => {
      clearTimeout(entry.timer);
      this.timers.delete(entry);
    };
  }

  /** Jumps `ms` ahead: timers now due fire, the others are re-armed for the new time. */
  advance(ms: number): void {
    this.offset += ms;
    for (const entry of [...this.timers]) {
      clearTimeout(entry.timer);
      entry.timer = setTimeout(entry.run, Math.max(0, Math.min(entry.at - this.now(), MAX_DELAY_MS)));
      entry.timer.unref();
    }
  }
}
