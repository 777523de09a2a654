/**
 * What Hotline says in one call, reply by reply: a prompt file's line (a greeting, an apology, a
 * goodbye) or a turn's sentences as they stream, each let go when the call's pacing allows, and
 * each reply written to the transcript once nothing of it can change any more. The call decides
 * whether a turn may still speak and what ends; this is how the words then go out.
 */
import type { SpeakStyle, PromptName } from '../../prompts/prompt-store.js';
import type { SpeechPacing } from '../call-deps.js';
import type { CallPrompts } from '../call-prompts.js';
import type { CallRecord } from '../call-record.js';
import type { History } from '../history.js';
import type { CallMetrics } from '../ports/call-metrics.js';
import type { SpeakExtra, Turn } from '../turn/turn.js';
import { Reply } from './reply.js';
import type { ReplyLog } from './reply-log.js';
import { hasSsml, stripSsml } from './ssml.js';
import type { Voice } from './voice.js';

export interface CallSpeechHost {
  readonly voice: Voice;
  readonly prompts: CallPrompts;
  readonly history: History;
  readonly replies: ReplyLog;
  readonly record: CallRecord;
  readonly metrics: CallMetrics;
  readonly pacing: SpeechPacing;
  readonly playbackGraceMs: number;
  /** True when what is delivered now ends what Hotline has to say: the caller's turn follows. */
  awaitsCaller(): boolean;
  /** Nothing new is said: the caller has started to talk, or the model judges whether a mailbox answered. */
  held(): boolean;
  /** A turn is generating: its reply may still grow. */
  generating(): boolean;
}

export class CallSpeech {
  constructor(private readonly host: CallSpeechHost) {}

  /** Speaks a prompt file's line as a reply of its own; `final` when the call ends or goes elsewhere after it. */
  line(name: PromptName, options: { final?: boolean } = {}): void {
    this.text(this.host.prompts.render(name), this.host.prompts.style(name), options);
  }

  text(line: string, style: SpeakStyle, options: { final?: boolean }): void {
    const { voice, history, replies } = this.host;
    const reply = new Reply();
    reply.beginContent();
    const ssml = hasSsml(line);
    const chunk = reply.addChunk(ssml ? stripSsml(line) : line);
    if (ssml && this.host.prompts.settings.ssml) chunk.ssml = line;
    voice.hold(chunk, style);
    history.addReply(reply);
    replies.track(reply);
    voice.deliver(!options.final && this.host.awaitsCaller());
    this.awaitPlayed();
  }

  /** A sentence of `turn`'s, which the call has let speak: held, then delivered as the pacing allows. */
  fromTurn(turn: Turn, text: string, extra: SpeakExtra): void {
    const { voice, prompts } = this.host;
    const chunk = turn.reply.addChunk(text);
    if (extra.ssml !== undefined) chunk.ssml = extra.ssml;
    if (extra.filler) chunk.filler = true;
    voice.hold(chunk, extra.filler ? prompts.style(extra.filler === 'tool' ? 'toolHold' : 'thinking') : prompts.settings.style);
    const firstMs = turn.reply.chunkCount === 1 ? performance.now() - turn.startedAt : undefined;
    this.deliverFromTurn(turn, extra);
    // Counted once the sentence is on its way: the caller waits for the first one most of all.
    if (firstMs !== undefined) {
      this.host.metrics.firstSpeakSent(firstMs);
      this.host.record.mark('firstSpeakMs');
      turn.trace.firstSpeak(firstMs);
    }
  }

  /** The reply in the transcript as soon as nothing of it can change any more. */
  settleIfPlayed(): void {
    const { voice } = this.host;
    if (this.host.generating() || voice.holding || voice.playback.pending) return;
    this.host.replies.settle();
  }

  /**
   * The turn is over but its speech may still be playing: settle its reply on
   * assistant_speech_ended, or — the service may never report it — once the
   * playback estimate has run out.
   */
  awaitPlayed(): void {
    const { voice, replies } = this.host;
    // Held speech has not begun to play: its reply is settled once it has gone out (the call resumes it) or was dropped.
    if (this.host.held() && voice.holding) return;
    if (replies.tracking) replies.settleAfter(voice.playback.remainingMs() + this.host.playbackGraceMs);
  }

  private deliverFromTurn(turn: Turn, extra: SpeakExtra): void {
    const { voice, pacing } = this.host;
    if (extra.filler) return voice.deliver();
    // The turn's last words go out as it ends, asking for the caller's answer — or, before a hangup, whole.
    if (turn.closing) return;
    if (pacing === 'stream' || (pacing === 'sentences' && !voice.playback.pending)) voice.deliver();
  }
}
