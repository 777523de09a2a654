/**
 * The dashboard's parsing of files, on a thread of its own so that it never holds the event loop
 * the calls run on: a call's transcript, and the prompts folder as `prompts:check` sees it. The
 * thread loads only this module's few imports (reads-worker.ts), not the store's.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import { checkPrompts, type PromptsCheck } from '../prompts-check.js';
import { spawnModule } from '../worker-module.js';
import { readTranscript, type TranscriptLine } from './transcript-lines.js';

/** The prompts folder to check, and the environment its tool files' `${NAME}` are read from. */
export interface PromptsToCheck {
  readonly dir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** What the files' thread does (see reads-worker.ts): parsing, which would hold the event loop. */
export interface FileQueries {
  /** Parsing every prompt, tool and report file holds a thread for tens of milliseconds. */
  checkPrompts(): Promise<PromptsCheck>;
  /** A transcript of up to 4 MB parsed line by line (zod per line): over 50 ms for a long call. */
  transcript(file: string): Promise<{ lines: TranscriptLine[]; problem?: string | undefined }>;
}

/** The work of the files' thread itself. */
export function fileQueries(prompts: PromptsToCheck): FileQueries {
  return {
    checkPrompts: async () => checkPrompts(prompts.dir, prompts.env),
    transcript: (file) => readTranscript(file),
  };
}

export type FileRequest = { id: number; name: keyof FileQueries; args: unknown[] };
export type FileResponse = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

/** The files' work on a thread of its own, started at the first question and again after it died. */
export class FileThread implements FileQueries {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly prompts: PromptsToCheck,
    private readonly logger: Logger,
  ) {}

  transcript(file: string) {
    return this.ask<{ lines: TranscriptLine[]; problem?: string | undefined }>('transcript', [file]);
  }
  checkPrompts() {
    return this.ask<PromptsCheck>('checkPrompts', []);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private ask<T>(name: keyof FileQueries, args: unknown[]): Promise<T> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (value) => resolve(value as T), reject });
      worker.postMessage({ id, name, args } satisfies FileRequest);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnModule(import.meta.url, 'reads-worker', { prompts: this.prompts });
    worker.unref();
    worker.on('message', (response: FileResponse) => {
      const waiter = this.pending.get(response.id);
      if (!waiter) return;
      this.pending.delete(response.id);
      if (response.ok) waiter.resolve(response.value);
      else waiter.reject(new Error(response.message));
    });
    const fail = (error: Error): void => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    worker.on('error', (error) => {
      this.logger.error({ err: error }, 'the dashboard files thread failed');
      fail(error);
    });
    worker.on('exit', () => fail(new Error('the dashboard files thread stopped')));
    this.worker = worker;
    return worker;
  }
}
