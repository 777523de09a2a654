import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';

export interface TranscriptEntry {
  role: 'user' | 'assistant' | 'tool' | 'event';
  text: string;
  interrupted?: boolean;
  [field: string]: unknown;
}

/** Session ids come from the network: never let one name a path outside the folder. */
export function transcriptFileName(sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 150);
  return `${safe || 'session'}.jsonl`;
}

/**
 * One call's transcript, appended line by line through a write stream: writes
 * are asynchronous and ordered, so a crash loses at most what was not yet written.
 */
export class TranscriptWriter {
  private stream: WriteStream | undefined;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly logger: Logger,
  ) {}

  append(entry: TranscriptEntry): void {
    if (this.closed) return;
    this.stream ??= this.open();
    this.stream.write(`${JSON.stringify({ ts: new Date().toISOString(), ...entry })}\n`);
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

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  open(sessionId: string, logger: Logger): TranscriptWriter {
    return new TranscriptWriter(path.join(this.dir, transcriptFileName(sessionId)), logger);
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
