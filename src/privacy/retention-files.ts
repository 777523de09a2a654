/**
 * The transcript files past their limit. Only what TranscriptStore writes is looked at: `.jsonl`
 * files directly in the transcripts folder. The folder holds more that is not a transcript and must
 * not go: the SQLite file by default (`hotline.db`, `-wal`, `-shm`) and the call writers' journal
 * (`store-journal/`), whose records are not yet in the database — so no subfolder is entered.
 */
import { lstat, opendir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/** Files looked at (lstat) and deleted together before the event loop is given a turn. */
const FILE_BATCH = 64;

export interface TranscriptSweep {
  readonly dir: string;
  /** Epoch ms: a file last written before it goes. */
  readonly cutoffMs: number;
  /**
   * The files of calls in progress (resolved paths): kept however long ago they were last written,
   * since a call on hold, or one whose lines wait in memory, may write to it again.
   */
  readonly keep: ReadonlySet<string>;
  readonly signal?: AbortSignal | undefined;
}

export interface TranscriptSweepResult {
  readonly deleted: number;
  /** Files that could not be deleted (not those already gone), by error code: counts only, never a name. */
  readonly failed: Readonly<Record<string, number>>;
}

/**
 * Deletes the transcripts last modified before the cutoff, a batch at a time. The folder is read as
 * it is walked (opendir), not listed whole first, so a million files never sit in memory at once.
 * A file gone meanwhile (another replica on the same disk swept it) is simply not counted.
 */
export async function sweepTranscriptFiles(sweep: TranscriptSweep): Promise<TranscriptSweepResult> {
  let deleted = 0;
  const failed: Record<string, number> = {};
  let dir;
  try {
    dir = await opendir(sweep.dir, { bufferSize: FILE_BATCH });
  } catch (error) {
    // No folder yet: no call was ever written here, so nothing is kept too long.
    if (errorCode(error) === 'ENOENT') return { deleted, failed };
    throw error;
  }
  const batch: string[] = [];
  const flush = async (): Promise<void> => {
    const files = batch.splice(0);
    const outcomes = await Promise.all(files.map((file) => deleteIfOld(file, sweep)));
    for (const outcome of outcomes) {
      if (outcome.kind === 'deleted') deleted += 1;
      else if (outcome.kind === 'failed') failed[outcome.code] = (failed[outcome.code] ?? 0) + 1;
    }
    await yieldToLoop();
  };
  try {
    for await (const entry of dir) {
      // A symbolic link or a folder is nothing TranscriptStore wrote; a link could lead outside the folder.
      if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
      batch.push(path.join(sweep.dir, entry.name));
      if (batch.length >= FILE_BATCH) {
        sweep.signal?.throwIfAborted();
        await flush();
      }
    }
    sweep.signal?.throwIfAborted();
    if (batch.length > 0) await flush();
  } finally {
    // The iterator closes the folder when the loop ends, but not when it was never started or threw before.
    await dir.close().catch(() => undefined);
  }
  return { deleted, failed };
}

type FileOutcome = { readonly kind: 'deleted' } | { readonly kind: 'kept' } | { readonly kind: 'failed'; readonly code: string };

const DELETED: FileOutcome = { kind: 'deleted' };
const KEPT: FileOutcome = { kind: 'kept' };

async function deleteIfOld(file: string, sweep: TranscriptSweep): Promise<FileOutcome> {
  if (sweep.keep.has(path.resolve(file))) return KEPT;
  try {
    // Looked at just before the unlink: a file written since the folder was read is young again.
    const stats = await lstat(file);
    if (!stats.isFile() || stats.mtimeMs >= sweep.cutoffMs) return KEPT;
    await unlink(file);
    return DELETED;
  } catch (error) {
    const code = errorCode(error) ?? 'error';
    return code === 'ENOENT' ? KEPT : { kind: 'failed', code };
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
