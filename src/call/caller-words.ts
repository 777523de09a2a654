/**
 * The caller's words on their way to being kept: read with the utterances before them (a number
 * may be said across two, see ports/redaction.ts), remembered for the model and the record, and
 * written to the log and the transcript.
 */
import type { Logger } from '../logger.js';
import type { TranscriptLog } from './ports/transcript.js';
import type { History } from './history.js';
import type { InputMarks } from './input/caller-input.js';
import type { TranscriptLine } from './input/voicemail-watch.js';
import type { CallerLine, CallerLines } from './ports/redaction.js';

export class CallerWords {
  constructor(
    private readonly lines: CallerLines,
    private readonly history: History,
    private readonly transcript: TranscriptLog,
    private readonly log: Logger,
    /** REDACT_FROM_MODEL: the model hears the redacted words too. */
    private readonly fromModel: boolean,
  ) {}

  /** Reads an utterance: once, in the order they were said. */
  said(text: string): CallerLine {
    return this.lines.said(text);
  }

  /** Into the conversation: what the model hears (what was said, unless it too must not) and what the record keeps. */
  remember(text: string, line: CallerLine): void {
    this.history.addUser(this.fromModel ? line.text : text, line);
    for (const earlier of line.amended) this.history.amendUser(earlier.seq, earlier.text, this.fromModel);
  }

  /**
   * Into the log, at once and so only as `provisional`, and the transcript, which holds the line
   * back while a number may still go on from it. `keep` takes the line instead (a mailbox's verdict is awaited).
   */
  write(line: CallerLine, marks: InputMarks, keep?: (entry: TranscriptLine) => void): void {
    this.log.debug({ text: line.provisional, ...marks }, 'caller said');
    for (const earlier of line.amended) this.transcript.amend(earlier.seq, earlier.text);
    this.transcript.holdFrom(line.heldFrom);
    const entry = { role: 'user' as const, text: line.text, ...marks };
    if (keep) keep(entry);
    else this.transcript.append(entry, line.seq);
  }
}
