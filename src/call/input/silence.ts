/** What the caller's silence leads to (system.md front matter `silence`). */
export interface SilenceRules {
  /** user_input_timeout_seconds on a speak that awaits the caller; 0 turns silence handling off. */
  timeoutSeconds: number;
  /** Re-prompts in a row before Hotline says goodbye and hangs up. */
  reprompts: number;
}

/** A silence Hotline acts on: say the re-prompt, or — after too many in a row — goodbye. */
export type SilenceStep = 'reprompt' | 'goodbye';

/**
 * Silence after Hotline has said its piece. The service reports it
 * (user_input_timeout) when the last speak asked for it; where that speak
 * had already gone out without asking (a streamed sentence is sent before
 * Hotline knows it is the last), Hotline's own clock stands in, started
 * when the speech is estimated to have played.
 */
export class SilenceWatch {
  /** The last speak asked the service to report silence, and nothing was said since. */
  private asked = false;
  private clock: NodeJS.Timeout | undefined;
  private silentInARow = 0;

  constructor(
    private readonly rules: SilenceRules,
    /** Hotline's own clock ran out. */
    private readonly onClock: () => void,
  ) {}

  get enabled(): boolean {
    return this.rules.timeoutSeconds > 0;
  }

  /** True while a silence report would be about the caller, not about Hotline still talking. */
  get awaiting(): boolean {
    return this.asked || this.clock !== undefined;
  }

  /** A speak that awaits the caller: the seconds to ask the service for, if silence is handled at all. */
  ask(): number | undefined {
    this.stopClock();
    if (!this.enabled) return undefined;
    this.asked = true;
    return this.rules.timeoutSeconds;
  }

  /** Hotline says more: a silence reported for what it said before is no longer the caller's. */
  spoke(): void {
    this.asked = false;
    this.stopClock();
  }

  /** Speech that could not ask the service plays for about `playbackMs` more; silence is timed from its end. */
  startClock(playbackMs: number): void {
    this.stopClock();
    if (!this.enabled || this.asked) return;
    this.clock = setTimeout(() => {
      this.clock = undefined;
      this.onClock();
    }, playbackMs + this.rules.timeoutSeconds * 1000);
  }

  /** The speech has now played (assistant_speech_ended): the clock starts from here. */
  played(): void {
    if (this.clock) this.startClock(0);
  }

  /** The caller said or typed something: the count of silences starts again. */
  callerActive(): void {
    this.silentInARow = 0;
    this.spoke();
  }

  /** A silence Hotline acts on. */
  silence(): SilenceStep {
    this.spoke();
    this.silentInARow += 1;
    return this.silentInARow > this.rules.reprompts ? 'goodbye' : 'reprompt';
  }

  cancel(): void {
    this.spoke();
  }

  private stopClock(): void {
    clearTimeout(this.clock);
    this.clock = undefined;
  }
}
