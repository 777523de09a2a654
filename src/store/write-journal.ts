/**
 * The call writer's journal: every record it is given is appended here before it is written to
 * the database, so a record waiting for a database that is locked, full or down survives the
 * process being killed. Once everything written so far has reached the database, a new file is
 * started and the old ones are deleted; on start, whatever files are left are read back.
 *
 * Records the database refused for good (a bug, never a passing outage) go to the folder's
 * `rejected/`, a file each (rejected-records.ts), which Hotline never deletes (but for an erasure):
 * an operator can inspect them.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { CallProgress } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { CallProgressSchema } from './call-progress-schema.js';
import { keepRejected } from './rejected-records.js';

const JOURNAL = /^journal-(\d+)-(\d+)\.jsonl$/;

const Line = z.object({ call: CallProgressSchema, final: z.boolean() });
export type JournalEntry = { readonly call: CallProgress; readonly final: boolean };

export class WriteJournal {
  private stream: WriteStream | undefined;
  private file: string | undefined;
  private bytes = 0;
  private sequence = 0;
  private readonly stamp = Date.now();
  /** Refused records being written: close() waits for them. */
  private readonly rejecting = new Set<Promise<void>>();
  /** The deletes of the files rotations left, under way. */
  private rotating: Promise<void> | undefined;

  constructor(
    /** The journal's folder (created if missing). */
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /** The files a stopped or killed process left: read back, oldest first, by `replay`. */
  async leftOver(): Promise<string[]> {
    await mkdir(this.dir, { recursive: true });
    const names = (await readdir(this.dir)).filter((name) => JOURNAL.test(name));
    const order = (name: string): [number, number] => {
      const [, stamp, sequence] = JOURNAL.exec(name)!;
      return [Number(stamp), Number(sequence)];
    };
    names.sort((a, b) => {
      const [sa, qa] = order(a);
      const [sb, qb] = order(b);
      return sa - sb || qa - qb;
    });
    return names.map((name) => path.join(this.dir, name)).filter((file) => file !== this.file);
  }

  /** Every readable entry of `file`; a line cut short by a kill, or unreadable, is skipped with a warning. */
  async *read(file: string): AsyncGenerator<JournalEntry> {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let skipped = 0;
    for await (const text of lines) {
      if (text.trim() === '') continue;
      let parsed: ReturnType<typeof Line.safeParse>;
      try {
        parsed = Line.safeParse(JSON.parse(text));
      } catch {
        skipped += 1;
        continue;
      }
      if (parsed.success) yield parsed.data as JournalEntry;
      else skipped += 1;
    }
    if (skipped > 0) this.logger.warn({ file, skipped }, 'journal lines that could not be read were skipped');
  }

  append(entry: JournalEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    this.bytes += line.length;
    this.current().write(line);
  }

  /**
   * Everything appended so far is in the database: the journal starts a new file and the old
   * ones go. Nothing to do while the current file is empty.
   */
  rotate(): void {
    if (this.bytes === 0 || !this.stream) return;
    const old = this.stream;
    const oldFile = this.file!;
    this.stream = undefined;
    this.file = undefined;
    this.bytes = 0;
    // A stop waits for the delete: a journal left behind would be replayed by the next start.
    const deleted = new Promise<void>((resolve) => {
      old.end(() => {
        unlink(oldFile)
          .catch((error: unknown) => this.logger.warn({ err: error, file: oldFile }, 'an old journal file could not be deleted'))
          .finally(resolve);
      });
    });
    const before = this.rotating;
    this.rotating = before ? Promise.all([before, deleted]).then(() => undefined) : deleted;
  }

  /** Deletes a file left by an earlier process, once its entries are in the database or in the current file. */
  async forget(file: string): Promise<void> {
    await unlink(file).catch((error: unknown) => this.logger.warn({ err: error, file }, 'an old journal file could not be deleted'));
  }

  reject(entry: JournalEntry, reason: string): void {
    const kept = keepRejected(this.dir, { ...entry, reason, at: new Date().toISOString() })
      .catch((error: unknown) => this.logger.error({ err: error }, 'a rejected record could not be kept'))
      .finally(() => this.rejecting.delete(kept));
    this.rejecting.add(kept);
  }

  async close(): Promise<void> {
    const stream = this.stream;
    await Promise.all([stream ? new Promise<void>((resolve) => stream.end(resolve)) : undefined, this.rotating, ...this.rejecting]);
    this.stream = undefined;
  }

  private current(): WriteStream {
    if (this.stream) return this.stream;
    this.file = path.join(this.dir, `journal-${this.stamp}-${this.sequence++}.jsonl`);
    const stream = createWriteStream(this.file, { flags: 'a' });
    // A full disk costs the journal's protection, never the call, nor the write to the database.
    stream.on('error', (error) => this.logger.error({ err: error, file: this.file }, 'the store journal could not be written'));
    this.stream = stream;
    return stream;
  }
}
