export interface SpeechPlaybackOptions {
  /** Speaking rate of the emulated voice. */
  wpm: number;
  /** Divides every speaking time, so tests need not wait in real time. */
  speed: number;
  /** A speech starts playing: the service reports assistant_speak now. */
  started(text: string, durationMs: number): void;
  /** A speech played to its end: the service reports assistant_speech_ended. */
  ended(text: string): void;
  /** The queue ran empty: nothing is playing any more. */
  idle(): void;
}

/** How long the emulated voice takes to say `text`. */
export function speakingTimeMs(text: string, wpm: number, speed: number): number {
  // SSML tags are not spoken.
  const words = text.replace(/<[^>]*>/g, ' ').split(/\s+/).filter(Boolean).length;
  return Math.round((words * 60_000) / wpm / speed);
}

/** The service's loudspeaker: plays speak actions one after another, in (scaled) real time. */
export class SpeechPlayback {
  private readonly queue: string[] = [];
  private current: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Counts plays, so a timer can tell whether its speech is still the one playing. */
  private plays = 0;

  constructor(private readonly options: SpeechPlaybackOptions) {}

  /** True while a speech plays or waits to: a caller speaking now barges in. */
  get speaking(): boolean {
    return this.current !== undefined;
  }

  enqueue(text: string): void {
    this.queue.push(text);
    if (this.current === undefined) this.playNext();
  }

  /**
   * Cuts the speech off, as a barge-in or the end of the call does: the cut
   * speech never reports its end. Returns whether anything was playing.
   */
  stop(): boolean {
    const wasSpeaking = this.speaking;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.current = undefined;
    return wasSpeaking;
  }

  private playNext(): void {
    const text = this.queue.shift();
    if (text === undefined) {
      this.current = undefined;
      this.options.idle();
      return;
    }
    this.current = text;
    const play = ++this.plays;
    const durationMs = speakingTimeMs(text, this.options.wpm, this.options.speed);
    this.options.started(text, durationMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.options.ended(text);
      // ended() may have stopped the playback (the call ended); then nothing more plays.
      if (this.plays === play && this.current !== undefined) this.playNext();
    }, durationMs);
  }
}
