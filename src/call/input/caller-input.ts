import type { Logger } from '../../logger.js';
import type { UserBargeInEvent, UserSpeakEvent } from '../../protocol/events.js';
import { KeypadEntry, keypadText, type KeypadRules } from './keypad.js';
import { SilenceWatch, type SilenceRules, type SilenceStep } from './silence.js';

/** How what the caller said or typed is marked in the conversation and the transcript. */
export interface InputMarks {
  barged_in?: true;
  keypad?: true;
}

/** What the caller's input needs of its call. */
export interface CallerInputHost {
  readonly log: Logger;
  /** Hotline is ending the call: the caller's input changes nothing any more. */
  readonly ending: boolean;
  /** Hotline still has something to say or decide: a silence now is not the caller's. */
  readonly talking: boolean;
  /** Something of Hotline's is being said or generated that the caller's voice would stop. */
  readonly interruptible: boolean;
  /** Whether Hotline's own silence clock can be answered (a live connection). */
  readonly streaming: boolean;
  /** Stops generation and cuts what was playing to what the caller heard. */
  interrupt(bargedIn: boolean): void;
  /** The caller interrupted (metrics). */
  bargedIn(): void;
  /** The service's playback stops only for a voice: Hotline stops it for a key. */
  stopPlayback(): void;
  /** The caller's words (or keys) start a turn. */
  takeTurn(text: string, marks: InputMarks): void;
  /** The caller's voice was heard but no words came: what was held back goes out after all. */
  resume(): void;
  /** What the caller heard of the last reply is final. */
  settleReply(): void;
  /** The caller is silent: re-prompt, or say goodbye and hang up. */
  onSilence(step: SilenceStep, source: 'service' | 'hotline'): void;
}

/** How long voice activity holds speech back when no recognised words follow it. */
const HOLD_FOR_CALLER_MS = 1500;

/**
 * Everything the caller does besides hearing: words (user_speak, and the
 * older user_barge_in), voice activity before the words, keys, and silence.
 * It decides what each means for the call; the call carries it out.
 */
export class CallerInput {
  private readonly keypad: KeypadEntry;
  readonly silence: SilenceWatch;
  /** Set by user_speech_started: the caller is talking, so nothing new is said until their words arrive. */
  private speaking: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: CallerInputHost,
    rules: { keypad: KeypadRules; silence: SilenceRules },
  ) {
    this.keypad = new KeypadEntry(rules.keypad, (keys) => this.take(keypadText(keys), { keypad: true }));
    this.silence = new SilenceWatch(rules.silence, () => this.silent('hotline'));
  }

  /** True while the caller is talking and their words have not arrived yet: Hotline holds back. */
  get holdingBack(): boolean {
    return this.speaking !== undefined;
  }

  /** True while keys are being typed: the entry is not complete yet. */
  get typing(): boolean {
    return this.keypad.collecting;
  }

  speech(event: UserSpeakEvent): void {
    const { log } = this.host;
    if (this.host.ending) return log.info('caller spoke while the call was ending; ignored');
    const text = event.text.trim();
    if (text === '') {
      // The service saw the caller interrupt but recognised no words: stop, and wait for them.
      if (event.barged_in) return this.bargeIn({ type: 'user_barge_in', session: event.session, text: '' });
      // Recognition noise must not cancel a reply and leave the caller in silence.
      return log.debug('empty user_speak ignored');
    }
    if (event.barged_in) this.host.bargedIn();
    this.host.interrupt(event.barged_in);
    this.take(text, event.barged_in ? { barged_in: true } : {});
  }

  /** The older interruption event: like a barge-in; words it carries are the caller's. */
  bargeIn(event: UserBargeInEvent): void {
    if (this.host.ending) return this.host.log.info('caller interrupted while the call was ending; ignored');
    this.host.bargedIn();
    this.host.interrupt(true);
    const text = event.text.trim();
    if (text !== '') return this.take(text, { barged_in: true });
    this.stopHoldingBack();
    this.host.settleReply();
    this.host.log.debug('caller interrupted; waiting for their words');
    // Should the words never come, the caller is asked again rather than left in silence.
    this.startClock(0);
  }

  /** A key on the caller's keypad. The first of an entry interrupts like speech would. */
  key(key: string): void {
    if (this.host.ending) return this.host.log.info('caller typed while the call was ending; ignored');
    this.stopHoldingBack();
    this.silence.callerActive();
    if (!this.keypad.collecting && this.host.interruptible) {
      this.host.bargedIn();
      this.host.stopPlayback();
    }
    this.keypad.press(key);
  }

  /**
   * Voice activity comes before the recognised words: hold back sentences not
   * yet sent (and a hangup or transfer) until user_speak arrives. If it never
   * does (a cough, a noise), go on after HOLD_FOR_CALLER_MS.
   */
  speechStarted(): void {
    clearTimeout(this.speaking);
    this.speaking = setTimeout(() => {
      this.speaking = undefined;
      this.host.log.debug('no words followed the voice activity; going on');
      this.host.resume();
    }, HOLD_FOR_CALLER_MS);
  }

  /**
   * The caller stayed silent after Hotline had said its piece: reported by the
   * service, or timed by Hotline. Never while Hotline is still talking,
   * generating or waiting for more keys; after too many in a row, goodbye.
   */
  silent(source: 'service' | 'hotline'): void {
    if (this.host.ending) return;
    const busy = this.host.talking || this.keypad.collecting || this.speaking !== undefined;
    if (busy || (source === 'service' && !this.silence.awaiting)) {
      return this.host.log.debug({ source }, 'silence report ignored: Hotline has more to say, or the caller is busy');
    }
    this.host.onSilence(this.silence.silence(), source);
  }

  /** Hotline's own silence clock, where the service could not be asked (only a live connection can answer it). */
  startClock(playbackMs: number): void {
    if (this.host.streaming) this.silence.startClock(playbackMs);
  }

  /** Hotline is ending the call: no entry is waited for, no silence asked about. */
  stop(): void {
    this.keypad.cancel();
    this.silence.cancel();
  }

  /** The call is over: no timer of the caller's is left. */
  dispose(): void {
    this.stop();
    this.stopHoldingBack();
  }

  private take(spoken: string, marks: InputMarks): void {
    this.stopHoldingBack();
    this.silence.callerActive();
    // Keys typed before the caller spoke belong to what they said.
    const typed = marks.keypad ? '' : this.keypad.take();
    this.host.takeTurn(typed === '' ? spoken : `${keypadText(typed)} ${spoken}`, marks);
  }

  private stopHoldingBack(): void {
    clearTimeout(this.speaking);
    this.speaking = undefined;
  }
}
