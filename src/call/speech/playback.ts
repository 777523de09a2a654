import { NO_SPEAK_TRACE, type SpeakTrace } from '../ports/tracing.js';
import type { Reply, SpokenChunk } from './reply.js';

/** One speak action as delivered: one sentence, or several held back and sent together. */
interface Utterance {
  readonly chunks: readonly SpokenChunk[];
  readonly text: string;
  readonly words: number;
  /** False for speech the caller cannot cut (barge_in strategy none): it plays on when they speak. */
  readonly interruptible: boolean;
  /** How long it lasts, when known before it plays (an audio clip). */
  readonly knownMs: number | undefined;
  /** Its span, from the moment it was sent until it has played (the no-op when untraced). */
  readonly trace: SpeakTrace;
  startedAt?: number;
  durationMs?: number;
}

// 150 words a minute, the pace commonly assumed for TTS when nothing better is known.
const MS_PER_WORD = 400;
const MIN_UTTERANCE_MS = 600;

export function estimateSpeechMs(text: string): number {
  return Math.max(MIN_UTTERANCE_MS, countWords(text) * MS_PER_WORD);
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * Tracks what the caller has heard, from assistant_speak / assistant_speech_ended.
 * Both events are optional in practice: until one arrives in a call, everything
 * delivered counts as heard, and time estimates stand in for the end of playback.
 */
export class Playback {
  private queue: Utterance[] = [];
  /** True once the service has reported playback in this call. */
  private signalsSeen = false;
  /** Estimated end of everything delivered, for services that report nothing. */
  private estimatedEnd = 0;

  constructor(private readonly now: () => number = performance.now.bind(performance)) {}

  get pending(): boolean {
    return this.queue.length > 0;
  }

  /** True while something the caller's voice would stop is still to be heard. */
  get interruptible(): boolean {
    return this.queue.some((q) => q.interruptible);
  }

  delivered(
    chunks: readonly SpokenChunk[],
    text: string,
    options: { interruptible?: boolean; durationMs?: number; trace?: SpeakTrace } = {},
  ): void {
    const utterance: Utterance = {
      chunks,
      text,
      words: countWords(text),
      interruptible: options.interruptible ?? true,
      knownMs: options.durationMs,
      trace: options.trace ?? NO_SPEAK_TRACE,
    };
    this.queue.push(utterance);
    this.estimatedEnd = Math.max(this.now(), this.estimatedEnd) + estimateOf(utterance);
  }

  /** assistant_speak: the oldest utterance not yet started (or the one whose text matches) is now playing. */
  started(text: string | undefined, durationMs: number | undefined): void {
    this.signalsSeen = true;
    let index = this.queue.findIndex((q) => q.startedAt === undefined);
    if (index < 0) return;
    if (text !== undefined) {
      const match = this.queue.findIndex((q, i) => i >= index && q.startedAt === undefined && q.text === text.trim());
      if (match >= 0) index = match;
    }
    // Anything queued before the utterance that now plays has finished playing.
    for (const done of this.queue.splice(0, index)) done.trace.ended('played');
    const entry = this.queue[0];
    if (!entry) return;
    entry.startedAt = this.now();
    entry.durationMs = durationMs;
    entry.trace.started(durationMs);
  }

  /** assistant_speech_ended: the oldest utterance has finished. Returns true when nothing is left to play. */
  ended(): boolean {
    this.signalsSeen = true;
    this.queue.shift()?.trace.ended('played');
    return this.queue.length === 0;
  }

  /** The call is over: what was still to play ends its trace, stopped — or unreported, where the service never reported playback. */
  endTraces(): void {
    for (const q of this.queue) q.trace.ended(this.signalsSeen ? 'stopped' : 'unreported');
  }

  /** How long until everything delivered has played, by the best estimate available. */
  remainingMs(): number {
    const now = this.now();
    if (!this.signalsSeen) return Math.max(0, this.estimatedEnd - now);
    let total = 0;
    for (const q of this.queue) {
      total +=
        q.startedAt !== undefined && q.durationMs !== undefined
          ? Math.max(0, q.startedAt + q.durationMs - now)
          : estimateOf(q);
    }
    return total;
  }

  /**
   * The caller spoke: playback stops. With `bargedIn`, utterances are cut at
   * what was heard; returns the replies that lost text.
   */
  interrupt(bargedIn: boolean): Set<Reply> {
    const cutReplies = new Set<Reply>();
    // Speech the caller cannot interrupt plays on, whole.
    const stopped = this.queue.filter((q) => q.interruptible);
    if (bargedIn && this.signalsSeen) {
      const now = this.now();
      for (const q of stopped) cut(q, heardWords(q, now), cutReplies);
    } else if (bargedIn) {
      // Without playback events the best knowledge is what was delivered: keep it, mark the cut.
      for (const q of stopped) for (const c of q.chunks) cutReplies.add(c.reply);
    }
    for (const q of stopped) q.trace.ended(bargedIn ? 'cut' : 'stopped');
    this.queue = this.queue.filter((q) => !q.interruptible);
    this.estimatedEnd = this.queue.length === 0 ? 0 : this.now() + this.queue.reduce((ms, q) => ms + estimateOf(q), 0);
    return cutReplies;
  }
}

function estimateOf(q: Utterance): number {
  return q.knownMs ?? estimateSpeechMs(q.text);
}

function heardWords(q: Utterance, now: number): number {
  if (q.startedAt === undefined) return 0;
  // Without a duration, assume the caller heard half of the playing utterance.
  const fraction = q.durationMs ? Math.min(1, (now - q.startedAt) / q.durationMs) : 0.5;
  return Math.floor(q.words * fraction);
}

/** Spreads the heard word count over the utterance's sentences, in order. */
function cut(q: Utterance, heard: number, cutReplies: Set<Reply>): void {
  let left = heard;
  for (const chunk of q.chunks) {
    const words = chunk.text.split(/\s+/).filter(Boolean);
    if (left >= words.length) {
      left -= words.length;
      continue;
    }
    chunk.heard = words.slice(0, left).join(' ');
    left = 0;
    cutReplies.add(chunk.reply);
  }
}
