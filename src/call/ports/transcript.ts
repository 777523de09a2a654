/**
 * A call's transcript as the call core writes it, and the folder of them as the registry places
 * calls in it. transcripts/transcript-store.ts writes them as JSON lines.
 */
import type { Logger } from '../../logger.js';
import type { PriorCall } from './prior-call.js';

export interface TranscriptEntry {
  role: 'user' | 'assistant' | 'tool' | 'event';
  text: string;
  interrupted?: boolean;
  [field: string]: unknown;
}

/** One call's transcript: lines appended in order, nothing of the call waiting for the disk. */
export interface TranscriptLog {
  /** The file the call is written to, once it is known. */
  readonly file: string;
  append(entry: TranscriptEntry, key?: number): void;
  /** Holds back the line of `key` and every later one, while its words may still be amended. */
  holdFrom(key: number | undefined): void;
  amend(key: number, text: string): void;
  close(): Promise<void>;
  /** Forgets what is not yet written: a call that never began. */
  discard(): void;
}

/** Where a call of a session id is written, and what the latest file of that session id says. */
export interface Placement {
  readonly file: string;
  /** The latest earlier call of this session id, read back: its past, and whether it ended. */
  readonly prior: PriorCall | undefined;
}

/** Every call's transcript, one file a call. */
export interface Transcripts {
  place(sessionId: string, starting: boolean): Promise<Placement>;
  open(sessionId: string, logger: Logger, file?: Promise<string>): TranscriptLog;
  fileOf(sessionId: string, n?: number): string;
  /** Tracks a closing transcript so shutdown can wait for it. */
  track(closing: Promise<void>, sessionId?: string): Promise<void>;
  flush(): Promise<void>;
}
