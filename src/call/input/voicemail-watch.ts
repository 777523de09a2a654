import { AbortScope } from '../../abort-scope.js';
import type { Logger } from '../../logger.js';
import type { VoicemailDetector } from '../ports/call-summary.js';

/** A line of the transcript. */
export interface TranscriptLine {
  role: 'user' | 'event';
  text: string;
  [field: string]: unknown;
}

export interface VoicemailWatchHost {
  readonly log: Logger;
  /** Hotline stops talking at once: generation ends, what plays is stopped, what is held is dropped. */
  hush(): void;
  /** The message for the mailbox, then the hangup once it has played. */
  leaveMessage(): void;
  /** The model judged the words a person's: the answer's speech, held while it judged, may go out. */
  released(): void;
  /** A line for the transcript: the mailbox's words, and how it was told. */
  note(entry: TranscriptLine): void;
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
  private state: 'listening' | 'judging' | 'person' | 'mailbox' = 'listening';
  private quiet: NodeJS.Timeout | undefined;
  /**
   * The first words, segment by segment: a personal greeting ("Hi, this is
   * Anna.") sounds like a person until its next sentence asks for a message.
   */
  private readonly first: string[] = [];
  /** Stops the model's judgement once it is no longer needed (a phrase decided, the call ended). */
  private judgement: AbortController | undefined;
  /** The caller's lines answered while the model judges: written once it has, marked if a mailbox said them. */
  private readonly kept: TranscriptLine[] = [];

  constructor(
    private readonly detector: VoicemailDetector,
    private readonly host: VoicemailWatchHost,
    private readonly timing: VoicemailTiming,
  ) {}

  /**
   * True while the model judges words the phrases were unsure of. They are
   * answered at once, as a person's would be, but nothing of the answer is
   * heard before the judgement: a person never waits for its round trip, and
   * a mailbox never hears a reply.
   */
  get judging(): boolean {
    return this.state === 'judging';
  }

  /**
   * The called person's words. False: answer them as usual (while `judging`,
   * the answer's speech waits for the judgement). True: a mailbox's words,
   * taken care of here.
   */
  words(text: string): boolean {
    if (this.state === 'person') return this.stillAMailbox(text);
    if (this.state === 'mailbox') {
      this.host.note({ role: 'user', text, mailbox: true });
      this.waitForTone();
      return true;
    }
    this.first.push(text);
    const verdict = this.detector.classify(this.first.join(' '));
    if (verdict === 'voicemail') {
      this.mailbox('phrases', text);
      return true;
    }
    // The model is already at it: these words are answered too, and heard only if it says "a person".
    if (this.state === 'judging') return false;
    if (verdict === 'human') {
      this.state = 'person';
      return false;
    }
    this.judge(text);
    return false;
  }

  /** A line of the caller's words answered while the model judges: the transcript gets it with the verdict. */
  keep(line: TranscriptLine): void {
    this.kept.push(line);
  }

  private judge(text: string): void {
    this.state = 'judging';
    const judgement = new AbortController();
    this.judgement = judgement;
    const scope = new AbortScope([judgement.signal], this.timing.judgeMs);
    this.detector
      .judge(text, scope.signal)
      // The judge resolves "human" on every failure of its own; a detector that throws anyway is taken the same way.
      .catch((error: unknown) => {
        this.host.log.warn({ err: error }, 'the voicemail judge failed; taken as a person');
        return 'human' as const;
      })
      .then((judged) => {
        scope.dispose();
        if (this.judgement !== judgement) return;
        this.judgement = undefined;
        if (judged === 'voicemail') return this.mailbox('model');
        this.state = 'person';
        for (const line of this.kept.splice(0)) this.host.note(line);
        this.host.released();
      })
      .catch((error: unknown) => this.host.log.error({ err: error }, 'the voicemail judgement could not be applied'));
  }

  /** Early words after a person seemed to answer: a mailbox phrase among them still makes it a mailbox. */
  private stillAMailbox(text: string): boolean {
    if (this.first.length >= EARLY_SEGMENTS) return false;
    this.first.push(text);
    if (this.detector.classify(this.first.join(' ')) !== 'voicemail') return false;
    this.mailbox('phrases', text);
    return true;
  }

  dispose(): void {
    clearTimeout(this.quiet);
    this.quiet = undefined;
    this.judgement?.abort();
    this.judgement = undefined;
  }

  /** A mailbox: what was answered meanwhile is dropped unheard (hush), its words are marked, the message waits for the tone. */
  private mailbox(by: 'phrases' | 'model', latest?: string): void {
    this.judgement?.abort();
    this.judgement = undefined;
    this.state = 'mailbox';
    this.host.log.info({ by }, 'outbound call answered by a mailbox; leaving a message');
    for (const line of this.kept.splice(0)) this.host.note({ ...line, mailbox: true });
    if (latest !== undefined) this.host.note({ role: 'user', text: latest, mailbox: true });
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
