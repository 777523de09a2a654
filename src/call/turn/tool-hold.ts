/** When hold lines are said while tools run. */
export interface HoldTiming {
  /** A tool still running this long after the model's call: the first line. */
  readonly holdMs: number;
  /** Another line once the last one has played and this much more has passed. */
  readonly repeatMs: number;
}

export interface ToolHoldHost {
  /** Says one line as part of the turn; false when the turn can no longer speak. */
  say(line: string): boolean;
  /** How long what was sent so far will still play. */
  playbackRemainingMs(): number;
}

/**
 * What the caller hears while a tool runs: nothing if it answers within
 * `holdMs`, else a hold line — not before the speech already on its way has
 * played, so a line never queues up behind words that make it stale — and
 * another each time the last has played and `repeatMs` has passed. Lines
 * take turns; the same one is never said twice in a row.
 */
export class ToolHold {
  private timer: NodeJS.Timeout | undefined;
  private last: string | undefined;
  private next = 0;
  private stopped = false;

  constructor(
    private readonly lines: readonly string[],
    private readonly host: ToolHoldHost,
    private readonly timing: HoldTiming,
  ) {}

  start(): void {
    this.schedule(Math.max(this.timing.holdMs, this.host.playbackRemainingMs()));
  }

  /** A line now (a webhook request about to time out); false if none can be said. */
  now(): boolean {
    clearTimeout(this.timer);
    return this.sayNext();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.sayNext(), ms);
  }

  private sayNext(): boolean {
    if (this.stopped) return false;
    const line = this.pick();
    if (line === undefined || !this.host.say(line)) {
      this.stop();
      return false;
    }
    this.last = line;
    this.schedule(this.host.playbackRemainingMs() + this.timing.repeatMs);
    return true;
  }

  private pick(): string | undefined {
    const { lines } = this;
    for (let i = 0; i < lines.length; i++) {
      const index = (this.next + i) % lines.length;
      const line = lines[index]!;
      if (line === this.last) continue;
      this.next = (index + 1) % lines.length;
      return line;
    }
    return undefined;
  }
}

/**
 * The lines for one round of tool calls: those of the tools called (in the
 * order called), else the general hold line; then the general "still on it"
 * line, so there are always two to alternate between.
 */
export function holdLinesFor(toolLines: readonly (readonly string[])[], general: { first: string; again: string }): string[] {
  const own = toolLines.flat().map((line) => line.trim()).filter((line) => line !== '');
  const lines = own.length > 0 ? [...own, general.again] : [general.first, general.again];
  return [...new Set(lines.filter((line) => line !== ''))];
}
