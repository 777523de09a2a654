import type { AudioClip, SpeakStyle } from '../../prompts/prompt-store.js';
import { NO_PRONUNCIATIONS, type Pronouncer } from '../../prompts/pronunciations.js';
import type { Action } from '../../protocol/actions.js';
import { NO_SPEAK_TRACE, type SpeakTrace, type SpeakTraceStart } from '../ports/tracing.js';
import { Playback } from './playback.js';
import type { Reply, SpokenChunk } from './reply.js';
import type { SilenceWatch } from '../input/silence.js';
import { speakAction } from './speak-action.js';

const PLAIN = Object.freeze({ pronouncer: NO_PRONUNCIATIONS, ssml: false });
const NOTHING_TO_SAY_DIFFERENTLY = (): typeof PLAIN => PLAIN;

/** A sentence waiting to go out, with how it is to be spoken. */
interface HeldChunk {
  readonly chunk: SpokenChunk;
  style: SpeakStyle;
}

/** Starts the trace of a speak (or clip) as it is sent: `chunks` say whose words it carries. */
export type TraceSpeak = (chunks: readonly SpokenChunk[], start: SpeakTraceStart) => SpeakTrace;

/**
 * What Hotline says and when it leaves: sentences held back (paced, the
 * turn's last words, the caller talking), each speak with its options, and
 * what is playing on the caller's line.
 */
export class Voice {
  readonly playback = new Playback();
  private held: HeldChunk[] = [];

  constructor(
    private readonly sessionId: string,
    private readonly silence: SilenceWatch,
    private readonly send: (action: Action) => void,
    /** True while the caller is talking and their words have not arrived: nothing new goes out. */
    private readonly heldBack: () => boolean,
    /** Undefined when calls are not traced: a speak then starts no trace at all. */
    private readonly traceSpeak?: TraceSpeak,
    /** How the call's language says the business's names, and whether its voice reads SSML. */
    private readonly saying: () => { readonly pronouncer: Pronouncer; readonly ssml: boolean } = NOTHING_TO_SAY_DIFFERENTLY,
  ) {}

  get holding(): boolean {
    return this.held.length > 0;
  }

  hold(chunk: SpokenChunk, style: SpeakStyle): void {
    this.held.push({ chunk, style });
  }

  /** Held sentences are said differently after all (a goodbye: whole). */
  restyle(change: (style: SpeakStyle) => SpeakStyle): void {
    for (const held of this.held) held.style = change(held.style);
  }

  /** Sends every held sentence as one speak action; `awaitCaller` asks the service to report the caller's silence. */
  deliver(awaitCaller = false): void {
    if (this.held.length === 0 || this.heldBack()) return;
    const held = this.held;
    this.held = [];
    this.speak(held, awaitCaller);
  }

  /**
   * Sends the held sentences but the last one each as a speak of its own, as a live connection
   * would have had them had nothing held them back; the last stays for `deliver`, which ends the turn.
   */
  deliverEachButLast(): void {
    while (this.held.length > 1 && !this.heldBack()) this.speak(this.held.splice(0, 1), false);
  }

  private speak(held: readonly HeldChunk[], awaitCaller: boolean): void {
    const chunks = held.map((h) => h.chunk);
    // A line said after the model's sentences (an apology) sets how they all are spoken.
    const style = held.at(-1)!.style;
    for (const chunk of chunks) chunk.delivered = true;
    const timeout = awaitCaller ? this.silence.ask() : undefined;
    if (!awaitCaller) this.silence.spoke();
    const { pronouncer, ssml } = this.saying();
    const action = speakAction(this.sessionId, chunks, style, timeout, pronouncer, ssml);
    this.send(action);
    const text = action.text ?? chunks.map((c) => c.text).join(' ');
    this.playback.delivered(chunks, text, {
      interruptible: style.barge_in?.strategy !== 'none',
      trace: this.traceSpeak ? this.traceSpeak(chunks, { kind: 'speak', text, sentences: chunks.length }) : NO_SPEAK_TRACE,
    });
  }

  /** Plays a clip after what was said; false when words are still held back (they would follow it). */
  clip(clip: AudioClip): boolean {
    this.deliver();
    if (this.held.length > 0) return false;
    this.silence.spoke();
    this.send({ type: 'audio', session_id: this.sessionId, audio: clip.base64, barge_in: { strategy: 'none' } });
    this.playback.delivered([], '', {
      interruptible: false,
      durationMs: clip.durationMs,
      trace: this.traceSpeak ? this.traceSpeak([], { kind: 'audio', text: '', sentences: 0 }) : NO_SPEAK_TRACE,
    });
    return true;
  }

  /**
   * The caller cut in (or the line went): sentences never delivered were never
   * heard, and what was playing is cut to what was heard. Returns the replies cut.
   */
  interrupt(bargedIn: boolean): Set<Reply> {
    this.held = [];
    return this.playback.interrupt(bargedIn);
  }

  /** Nothing more goes out (the call is ending or over). */
  drop(): void {
    this.held = [];
  }
}
