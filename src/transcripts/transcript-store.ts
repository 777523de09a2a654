import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { access, constants, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { keepWords, type Redact } from '../call/ports/redaction.js';
import type { Placement, TranscriptEntry, TranscriptLog, Transcripts } from '../call/ports/transcript.js';
import { readPriorCall } from './prior-call.js';


const READABLE = /[^A-Za-z0-9_-]/g;
const MAX_READABLE = 100;

/**
 * Session ids come from the network: never let one name a path outside the
 * folder, and never let two ids share a file. An id that is safe as it is
 * keeps its name; any other keeps a readable form and gains a short hash of
 * the whole id, so `acme/X` and `acme:X` land in different files.
 */
export function transcriptFileName(sessionId: string, n = 1): string {
  // A dot is never part of a readable name: `<name>.2.jsonl` cannot be another session's first file.
  const suffix = n === 1 ? '.jsonl' : `.${n}.jsonl`;
  const readable = sessionId.replace(READABLE, '_').slice(0, MAX_READABLE);
  if (readable === sessionId && readable !== '') return `${readable}${suffix}`;
  const hash = createHash('sha256').update(sessionId).digest('hex').slice(0, 12);
  return `${readable || 'session'}-${hash}${suffix}`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * One call's transcript, appended line by line through a write stream: writes
 * are asynchronous and ordered, so a crash loses at most what was not yet written.
 * Every line carries the session id, so a line read out of its file still says whose it is.
 *
 * The file may still be being chosen when the call begins (see TranscriptStore.place): lines
 * written before wait in memory, in order, and nothing of the call waits for the disk.
 */
export class TranscriptWriter implements TranscriptLog {
  private stream: WriteStream | undefined;
  private closed = false;
  private placed: string | undefined;
  private waiting: string[] | undefined = [];
  private readonly ready: Promise<void>;
  /** Lines kept back from the first whose words may still be amended (see holdFrom), and every line after it, in order. */
  private held: HeldLine[] = [];
  private holdingFrom: number | undefined;

  constructor(
    file: string | Promise<string>,
    private readonly sessionId: string,
    private readonly logger: Logger,
    /** The file a call of this session id is written to when nothing else is known. */
    private readonly provisional = typeof file === 'string' ? file : '',
    /** What is written of the words: personal data taken out. */
    private readonly redact: Redact = keepWords,
  ) {
    this.ready = Promise.resolve(file).then(
      (chosen) => this.settle(chosen),
      (error: unknown) => {
        this.logger.error({ err: error }, 'transcript file not chosen; writing to the first file of the session');
        this.settle(this.provisional);
      },
    );
  }

  /** The call's file: known once placed; before that, the file of the session's first call. */
  get file(): string {
    return this.placed ?? this.provisional;
  }

  /**
   * Writes a line. `key` names a caller utterance (CallerLine.seq): while holdFrom names it or one
   * before it, the line waits, and amend may still change its words.
   */
  append(entry: TranscriptEntry, key?: number): void {
    if (this.closed) return;
    const line: HeldLine = { ts: new Date().toISOString(), entry, key };
    if (this.held.length > 0 || (key !== undefined && this.holdingFrom !== undefined && key >= this.holdingFrom)) this.held.push(line);
    else this.write(line);
  }

  /**
   * Lines of the caller utterance `key` and after it wait: a number said across utterances may still
   * change their words (src/privacy/caller-lines.ts). Those before are written now; undefined writes all.
   */
  holdFrom(key: number | undefined): void {
    this.holdingFrom = key;
    let released = 0;
    while (released < this.held.length) {
      const line = this.held[released]!;
      if (key !== undefined && line.key !== undefined && line.key >= key) break;
      released++;
    }
    for (const line of this.held.splice(0, released)) this.write(line);
  }

  /** The words of a line still held back, as they are to be written now; a line written already stays as it was. */
  amend(key: number, text: string): void {
    const line = this.held.find((held) => held.key === key);
    if (line) line.entry = { ...line.entry, text };
  }

  private write({ ts, entry }: HeldLine): void {
    const words = { text: this.redact(entry.text), ...(typeof entry.arguments === 'string' ? { arguments: this.redact(entry.arguments) } : {}) };
    const line = `${JSON.stringify({ ts, session_id: this.sessionId, ...entry, ...words })}\n`;
    if (this.waiting) {
      this.waiting.push(line);
      return;
    }
    this.stream ??= this.open();
    this.stream.write(line);
  }

  /** Resolves once every line is on disk (or the write failed and was logged). */
  async close(): Promise<void> {
    if (!this.closed) this.holdFrom(undefined);
    this.closed = true;
    await this.ready;
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve) => {
      stream.end(resolve);
    });
  }

  /** Forgets the call without writing anything more: it was never one of its own (see CallRegistry). */
  discard(): void {
    this.closed = true;
    this.waiting = [];
    this.held = [];
  }

  private settle(file: string): void {
    this.placed = file;
    const lines = this.waiting ?? [];
    this.waiting = undefined;
    if (lines.length === 0) return;
    this.stream ??= this.open();
    for (const line of lines) this.stream.write(line);
  }

  private open(): WriteStream {
    const stream = createWriteStream(this.file, { flags: 'a' });
    // A full disk must cost the transcript, never the call.
    stream.on('error', (error) => this.logger.error({ err: error, file: this.file }, 'transcript write failed'));
    return stream;
  }
}

/** A line not yet written: its time is when it was said, whenever it is written. */
interface HeldLine {
  readonly ts: string;
  entry: TranscriptEntry;
  readonly key: number | undefined;
}


export class TranscriptStore implements Transcripts {
  private readonly pending = new Set<Promise<void>>();
  /** Transcripts being closed, by session id: a call that ended a moment ago is on disk before its id is placed again. */
  private readonly closing = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    /** Applied to every line's words before it is written (see TranscriptWriter). */
    private readonly redact: Redact = keepWords,
  ) {}

  /** Creates the folder; a folder Hotline cannot write to stops the start with a line that says so. */
  async init(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true });
      await access(this.dir, constants.W_OK | constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new ConfigError(
        `TRANSCRIPTS_DIR ${this.dir} cannot be written (${code}): set TRANSCRIPTS_DIR to a folder Hotline's user may write to`,
        { cause: error },
      );
    }
  }

  /**
   * Where a call of `sessionId` is written. Each call has a file of its own: the first call of a
   * session id `<id>.jsonl`, a later one — the service used the id again, after the earlier call
   * ended — `<id>.2.jsonl`, `<id>.3.jsonl` and so on. A call still in progress (its latest file has
   * no session_end: a restart came in between) goes on in its file; a new call (`starting`) whose
   * id's latest call has ended gets the next one, so it never writes into an ended call's file.
   */
  async place(sessionId: string, starting: boolean): Promise<Placement> {
    await this.closing.get(sessionId);
    let count = 0;
    while (await exists(this.fileOf(sessionId, count + 1))) count += 1;
    if (count === 0) return { file: this.fileOf(sessionId), prior: undefined };
    const latest = this.fileOf(sessionId, count);
    const prior = await readPriorCall(latest);
    if (starting && prior?.ended) return { file: this.fileOf(sessionId, count + 1), prior };
    return { file: latest, prior };
  }

  /** A call's transcript, written to the file `file` resolves to (TranscriptStore.place), or to its session's first file. */
  open(sessionId: string, logger: Logger, file?: Promise<string>): TranscriptWriter {
    return new TranscriptWriter(file ?? this.fileOf(sessionId), sessionId, logger, this.fileOf(sessionId), this.redact);
  }

  /** Where the `n`-th call (from 1) of a session id is written. */
  fileOf(sessionId: string, n = 1): string {
    return path.join(this.dir, transcriptFileName(sessionId, n));
  }

  /** Tracks a closing transcript so shutdown can wait for it, and a new call of its session id is placed after it. */
  track(closing: Promise<void>, sessionId?: string): Promise<void> {
    this.pending.add(closing);
    if (sessionId !== undefined) this.closing.set(sessionId, closing);
    void closing.finally(() => {
      this.pending.delete(closing);
      if (sessionId !== undefined && this.closing.get(sessionId) === closing) this.closing.delete(sessionId);
    });
    return closing;
  }

  async flush(): Promise<void> {
    await Promise.all(this.pending);
  }
}
