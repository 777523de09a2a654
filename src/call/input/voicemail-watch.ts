import type { Logger } from '../../logger.js';
import type { VoicemailDetector } from '../ports/call-summary.js';

export interface VoicemailWatchHost {
  readonly log: Logger;
  /** Hotline stops talking at once: generation ends, what plays is stopped. */
  hush(): void;
  /** The message for the mailbox, then the hangup once it has played. */
  leaveMessage(): void;
  /** Events wait until `work` is done (the model judging). */
  prepare(work: Promise<void>): void;
  /** A line for the transcript: the mailbox's words, and how it was told. */
  note(entry: { role: 'user' | 'event'; text: string; [field: string]: unknown }): void;
}

/** How many of the first segments of speech may still give a mailbox away. */
const EARLY_SEGMENTS = 3;

export interface VoicemailTiming {
  /** The longest the model may take to judge words the phrases are unsure of. */
  readonly judgeMs: number;
  /** A mailbox quiet this long has finished its greeting: the tone has sounded, the message can start. */
  readonly quietMs: number;
}

/**
 * Listens to the first words of an outbound call: a person goes on to a
 * conversation, a mailbox gets no conversation — Hotline stops talking,
 * waits until the mailbox's greeting is over, leaves its message and hangs up.
 */
export class VoicemailWatch {
  private state: 'listening' | 'person' | 'mailbox' = 'listening';
  private quiet: NodeJS.Timeout | undefined;
  /**
   * The first words, segment by segment: a personal greeting ("Hi, this is
   * Anna.") sounds like a person until its next sentence asks for a message.
   */
  private readonly first: string[] = [];

  constructor(
    private readonly detector: VoicemailDetector,
    private readonly host: VoicemailWatchHost,
    private readonly timing: VoicemailTiming,
  ) {}

  /**
   * The called person's words. False: a person said them, answer as usual.
   * True: they are taken care of here — a mailbox's, or words the model is
   * judging, after which `answer` runs if a person said them after all.
   */
  words(text: string, answer: () => void): boolean {
    if (this.state === 'person') return this.stillAMailbox(text);
    if (this.state === 'mailbox') {
      this.host.note({ role: 'user', text, mailbox: true });
      this.waitForTone();
      return true;
    }
    this.first.push(text);
    const verdict = this.detector.classify(text);
    if (verdict === 'human') {
      this.state = 'person';
      return false;
    }
    if (verdict === 'voicemail') {
      this.mailbox(text, 'phrases');
      return true;
    }
    this.host.prepare(
      this.detector.judge(text, AbortSignal.timeout(this.timing.judgeMs)).then((judged) => {
        if (judged === 'voicemail') return this.mailbox(text, 'model');
        this.state = 'person';
        answer();
      }),
    );
    return true;
  }

  /** Early words after a person seemed to answer: a mailbox phrase among them still makes it a mailbox. */
  private stillAMailbox(text: string): boolean {
    if (this.first.length >= EARLY_SEGMENTS) return false;
    this.first.push(text);
    if (this.detector.classify(this.first.join(' ')) !== 'voicemail') return false;
    this.mailbox(text, 'phrases');
    return true;
  }

  dispose(): void {
    clearTimeout(this.quiet);
    this.quiet = undefined;
  }

  private mailbox(text: string, by: 'phrases' | 'model'): void {
    this.state = 'mailbox';
    this.host.log.info({ by }, 'outbound call answered by a mailbox; leaving a message');
    this.host.note({ role: 'user', text, mailbox: true });
    this.host.note({ role: 'event', text: 'voicemail_detected', by });
    this.host.hush();
    this.waitForTone();
  }

  /** Each more of the mailbox's words starts the wait afresh: the message follows its tone, not its words. */
  private waitForTone(): void {
    clearTimeout(this.quiet);
    this.quiet = setTimeout(() => {
      this.quiet = undefined;
      this.host.leaveMessage();
    }, this.timing.quietMs);
  }
}
