import type { BargeIn } from '../protocol/actions.js';

/** What the service plays: a speak's words, or an audio action's clip; either may say how it can be interrupted. */
export type Playable =
  | { kind: 'speech'; text: string; bargeIn?: BargeIn | undefined }
  | { kind: 'clip'; ms: number; bargeIn?: BargeIn | undefined };

export interface SpeechPlaybackOptions {
  /** Speaking rate of the emulated voice. */
  wpm: number;
  /** Divides every speaking time, so tests need not wait in real time. */
  speed: number;
  /** Something starts playing: the service reports assistant_speak now. */
  started(item: Playable, durationMs: number): void;
  /** It played to its end: the service reports assistant_speech_ended. */
  ended(item: Playable): void;
  /** The queue ran empty: nothing is playing any more. */
  idle(): void;
}

/** How long the emulated voice takes to say `text`. */
export function speakingTimeMs(text: string, wpm: number, speed: number): number {
  // SSML tags are not spoken.
  const words = text.replace(/<[^>]*>/g, ' ').split(/\s+/).filter(Boolean).length;
  return Math.round((words * 60_000) / wpm / speed);
}

/** The service's loudspeaker: plays speeches and clips one after another, in (scaled) real time. */
export class SpeechPlayback {
  private readonly queue: Playable[] = [];
  private current: Playable | undefined;
  private currentStartedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Counts plays, so a timer can tell whether its item is still the one playing. */
  private plays = 0;

  constructor(private readonly options: SpeechPlaybackOptions) {}

  /** True while something plays or waits to: a caller speaking now barges in. */
  get speaking(): boolean {
    return this.current !== undefined;
  }

  enqueue(item: Playable): void {
    this.queue.push(item);
    if (this.current === undefined) this.playNext();
  }

  /**
   * Why the caller's words would not cut off what plays now, as its barge_in
   * asks; undefined when they would (or nothing plays). Only the voice is held
   * to it: Hotline's barge_in action and the service's user_barge_in stop anything.
   */
  refusesBargeIn(words: string): string | undefined {
    const bargeIn = this.current?.bargeIn;
    if (!bargeIn) return undefined;
    const { strategy, minimum_characters: minimum, allow_after_ms: after } = bargeIn;
    if (strategy === 'none') return 'barge_in none: playback goes on';
    if (strategy === 'manual') return "barge_in manual: playback goes on until Hotline's barge_in action";
    // allow_after_ms counts in the voice's time, which --speed shortens.
    const playedMs = (performance.now() - this.currentStartedAt) * this.options.speed;
    if (after !== undefined && playedMs < after) return `barge_in only after ${after} ms: playback goes on`;
    if (strategy === 'minimum_characters' && words.trim().length < (minimum ?? 1)) {
      return `barge_in minimum_characters ${minimum ?? 1}: too short, playback goes on`;
    }
    return undefined;
  }

  /**
   * The speech playing now and how many of its words have been said (the
   * voice's time, which --speed shortens); undefined when no speech plays.
   */
  playedWords(): { text: string; words: number } | undefined {
    const item = this.current;
    if (item?.kind !== 'speech') return undefined;
    const playedMs = (performance.now() - this.currentStartedAt) * this.options.speed;
    const words = Math.floor((playedMs * this.options.wpm) / 60_000);
    return { text: item.text, words };
  }

  /**
   * Cuts the playback off, as a barge-in or the end of the call does: the cut
   * item never reports its end. Returns whether anything was playing.
   */
  stop(): boolean {
    const wasSpeaking = this.speaking;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.current = undefined;
    return wasSpeaking;
  }

  private durationMs(item: Playable): number {
    const { wpm, speed } = this.options;
    return item.kind === 'speech' ? speakingTimeMs(item.text, wpm, speed) : Math.round(item.ms / speed);
  }

  private playNext(): void {
    const item = this.queue.shift();
    if (item === undefined) {
      this.current = undefined;
      this.options.idle();
      return;
    }
    this.current = item;
    this.currentStartedAt = performance.now();
    const play = ++this.plays;
    const durationMs = this.durationMs(item);
    this.options.started(item, durationMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.options.ended(item);
      // ended() may have stopped the playback (the call ended); then nothing more plays.
      if (this.plays === play && this.current !== undefined) this.playNext();
    }, durationMs);
  }
}
