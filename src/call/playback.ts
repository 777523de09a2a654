import type { Reply, SpokenChunk } from './reply.js';

interface Queued {
  readonly chunk: SpokenChunk;
  readonly words: number;
  startedAt?: number;
  durationMs?: number;
}

// 150 words a minute, the pace commonly assumed for TTS when nothing better is known.
const MS_PER_WORD = 400;
const MIN_CHUNK_MS = 600;

export function estimateSpeechMs(text: string): number {
  return Math.max(MIN_CHUNK_MS, countWords(text) * MS_PER_WORD);
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * Tracks what the caller has heard, from assistant_speak / assistant_speech_ended.
 * Both events are optional in practice: until one arrives in a call, everything
 * sent counts as heard, and time estimates stand in for the end of playback.
 */
export class Playback {
  private queue: Queued[] = [];
  /** True once the service has reported playback in this call. */
  private signalsSeen = false;
  /** Estimated end of everything sent, for services that report nothing. */
  private estimatedEnd = 0;

  constructor(private readonly now: () => number = performance.now.bind(performance)) {}

  get pending(): boolean {
    return this.queue.length > 0;
  }

  sent(chunk: SpokenChunk): void {
    this.queue.push({ chunk, words: countWords(chunk.text) });
    this.estimatedEnd = Math.max(this.now(), this.estimatedEnd) + estimateSpeechMs(chunk.text);
  }

  /** assistant_speak: the oldest chunk not yet started (or the one whose text matches) is now playing. */
  started(text: string | undefined, durationMs: number | undefined): void {
    this.signalsSeen = true;
    let index = this.queue.findIndex((q) => q.startedAt === undefined);
    if (index < 0) return;
    if (text !== undefined) {
      const match = this.queue.findIndex((q, i) => i >= index && q.startedAt === undefined && q.chunk.text === text.trim());
      if (match >= 0) index = match;
    }
    // Anything queued before the chunk that now plays has finished playing.
    this.queue.splice(0, index);
    const entry = this.queue[0];
    if (!entry) return;
    entry.startedAt = this.now();
    entry.durationMs = durationMs;
  }

  /** assistant_speech_ended: the oldest chunk has finished. Returns true when nothing is left to play. */
  ended(): boolean {
    this.signalsSeen = true;
    this.queue.shift();
    return this.queue.length === 0;
  }

  /** How long until everything sent has played, by the best estimate available. */
  remainingMs(): number {
    const now = this.now();
    if (!this.signalsSeen) return Math.max(0, this.estimatedEnd - now);
    let total = 0;
    for (const q of this.queue) {
      total +=
        q.startedAt !== undefined && q.durationMs !== undefined
          ? Math.max(0, q.startedAt + q.durationMs - now)
          : Math.max(MIN_CHUNK_MS, q.words * MS_PER_WORD);
    }
    return total;
  }

  /**
   * The caller spoke: playback stops. With `bargedIn`, chunks are cut at what
   * was heard; returns the replies that lost text.
   */
  interrupt(bargedIn: boolean): Set<Reply> {
    const cutReplies = new Set<Reply>();
    if (bargedIn && this.signalsSeen) {
      const now = this.now();
      for (const q of this.queue) {
        const heard = heardPart(q, now);
        if (heard === q.chunk.text) continue;
        q.chunk.heard = heard;
        cutReplies.add(q.chunk.reply);
      }
    } else if (bargedIn) {
      // Without playback events the best knowledge is what was sent: keep it, mark the cut.
      for (const q of this.queue) cutReplies.add(q.chunk.reply);
    }
    this.queue = [];
    this.estimatedEnd = 0;
    return cutReplies;
  }
}

function heardPart(q: Queued, now: number): string {
  if (q.startedAt === undefined) return '';
  const words = q.chunk.text.split(/\s+/).filter(Boolean);
  // Without a duration, assume the caller heard half of the playing chunk.
  const fraction = q.durationMs ? Math.min(1, (now - q.startedAt) / q.durationMs) : 0.5;
  return words.slice(0, Math.floor(words.length * fraction)).join(' ');
}
