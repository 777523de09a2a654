import type { TranscriptLog } from '../ports/transcript.js';
import type { Reply } from './reply.js';

/**
 * Writes each reply to the transcript as soon as it can no longer change: all
 * of it played, or the turn over and nothing of it pending, or cut by the
 * caller. A process killed right after ("Your booking reference is K 4 7 1.")
 * still has the line on disk.
 */
export class ReplyLog {
  private pending: Reply | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly transcript: TranscriptLog) {}

  /** A new reply is under way; the one before it is final. */
  track(reply: Reply): void {
    this.settle();
    this.pending = reply;
  }

  get tracking(): Reply | undefined {
    return this.pending;
  }

  /** Writes the pending reply as far as the caller heard it, and its tool calls. */
  settle(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const reply = this.pending;
    if (!reply) return;
    this.pending = undefined;
    // A cut reply keeps what was generated beside what was heard: the record shows what the caller never got.
    const generated = reply.interrupted ? reply.generatedText() : '';
    if (reply.deliveredCount > 0 || generated !== '') {
      const heard = reply.heardText();
      this.transcript.append({
        role: 'assistant',
        text: heard,
        ...(reply.interrupted ? { interrupted: true } : {}),
        ...(generated !== '' && generated !== heard ? { generated } : {}),
      });
    }
    for (const call of reply.toolCalls) {
      if (call.written) continue;
      this.transcript.append({ role: 'tool', text: call.result, name: call.name, arguments: call.arguments });
    }
  }

  /**
   * For services that may not report the end of playback: settles after
   * `delayMs` (the estimated playback still to come) unless settled before.
   */
  settleAfter(delayMs: number): void {
    clearTimeout(this.timer);
    const reply = this.pending;
    if (!reply) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.pending === reply) this.settle();
    }, delayMs);
  }
}
