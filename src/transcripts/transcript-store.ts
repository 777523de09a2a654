import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { access, constants, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { readPriorCall, type PriorCall } from './prior-call.js';

export interface TranscriptEntry {
  role: 'user' | 'assistant' | 'tool' | 'event';
  text: string;
  interrupted?: boolean;
  [field: string]: unknown;
}

const READABLE = /[^A-Za-z0-9_-]/g;
const MAX_READABLE = 100;

/**
 * Session ids come from the network: never let one name a path outside the
 * folder, and never let two ids share a file. An id that is safe as it is
 * keeps its name; any other keeps a readable form and gains a short hash of
 * the whole id, so `acme/X` and `acme:X` land in different files.
 */
export function transcriptFileName(sessionId: string): string {
  const readable = sessionId.replace(READABLE, '_').slice(0, MAX_READABLE);
  if (readable === sessionId && readable !== '') return `${readable}.jsonl`;
  const hash = createHash('sha256').update(sessionId).digest('hex').slice(0, 12);
  return `${readable || 'session'}-${hash}.jsonl`;
}

/**
 * One call's transcript, appended line by line through a write stream: writes
 * are asynchronous and ordered, so a crash loses at most what was not yet written.
 * Every line carries the session id, so a line read out of its file still says whose it is.
 */
export class TranscriptWriter {
  private stream: WriteStream | undefined;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly sessionId: string,
    private readonly logger: Logger,
  ) {}

  append(entry: TranscriptEntry): void {
    if (this.closed) return;
    this.stream ??= this.open();
    this.stream.write(`${JSON.stringify({ ts: new Date().toISOString(), session_id: this.sessionId, ...entry })}\n`);
  }

  /** Resolves once every line is on disk (or the write failed and was logged). */
  close(): Promise<void> {
    this.closed = true;
    const stream = this.stream;
    if (!stream) return Promise.resolve();
    return new Promise((resolve) => {
      stream.end(resolve);
    });
  }

  private open(): WriteStream {
    const stream = createWriteStream(this.file, { flags: 'a' });
    // A full disk must cost the transcript, never the call.
    stream.on('error', (error) => this.logger.error({ err: error, file: this.file }, 'transcript write failed'));
    return stream;
  }
}

export class TranscriptStore {
  private readonly pending = new Set<Promise<void>>();

  constructor(readonly dir: string) {}

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

  /** What the transcript on disk says of a call this process never saw start; undefined if there is none. */
  readPrior(sessionId: string): Promise<PriorCall | undefined> {
    return readPriorCall(this.fileOf(sessionId));
  }

  open(sessionId: string, logger: Logger): TranscriptWriter {
    return new TranscriptWriter(this.fileOf(sessionId), sessionId, logger);
  }

  /** Where a session's transcript is written. */
  fileOf(sessionId: string): string {
    return path.join(this.dir, transcriptFileName(sessionId));
  }

  /** Tracks a closing transcript so shutdown can wait for it. */
  track(closing: Promise<void>): Promise<void> {
    this.pending.add(closing);
    void closing.finally(() => this.pending.delete(closing));
    return closing;
  }

  async flush(): Promise<void> {
    await Promise.all(this.pending);
  }
}
