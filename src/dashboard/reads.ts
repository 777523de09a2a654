import type { Worker } from 'node:worker_threads';
import type { CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import type { CampaignProgress } from '../campaigns/progress.js';
import { CallRepository } from '../store/call-repository.js';
import { legacyCampaignProgress } from '../campaigns/legacy-dashboard-progress.js';
import { CallStats, type ChartData, type DayRange } from '../store/call-stats.js';
import { CallSearch, type BatchCursor, type CallFilter, type CallListing } from '../store/call-search.js';
import type { Database } from '../store/database.js';
import { DeliveryRepository, type Delivery } from '../store/delivery-repository.js';
import { ReportRepository, type StoredReport } from '../store/report-repository.js';
import { spawnModule } from '../worker-module.js';
import { checkPrompts, type PromptsCheck } from '../prompts-check.js';
import { readTranscript, type TranscriptLine } from './transcript-lines.js';

/**
 * Everything the dashboard reads — the database, and the prompts folder as `prompts:check` sees it —
 * answered as promises wherever the work runs.
 */
export interface DashboardReads {
  page(filter: CallFilter, limit: number, offset: number): Promise<{ calls: CallListing[]; total: number }>;
  batch(filter: CallFilter, after: BatchCursor | undefined, size: number): Promise<CallListing[]>;
  fieldNames(): Promise<string[]>;
  /** Every campaign with its progress, newest first. */
  campaigns(): Promise<CampaignProgress[]>;
  /**
   * A stored call with its report and its transcript's lines (read off the calls' thread too): the
   * call with this call id, or else the latest call with this session id.
   */
  call(id: string): Promise<CallStory | undefined>;
  /** A transcript as written so far: a call in progress. */
  transcript(file: string): Promise<{ lines: TranscriptLine[]; problem?: string | undefined }>;
  charts(now: Date, dayCount?: DayRange): Promise<ChartData>;
  /** How many report deliveries were given up and not sent again. */
  failedDeliveries(): Promise<number>;
  checkPrompts(): Promise<PromptsCheck>;
  close(): Promise<void>;
}

export interface CallStory {
  readonly call: CallSummary;
  readonly report: StoredReport | undefined;
  readonly lines: TranscriptLine[];
  /** What could not be read of the transcript, if anything. */
  readonly transcriptProblem: string | undefined;
  /** The report's deliveries to the webhook, oldest first. */
  readonly deliveries: DeliveryState[];
  /** Whether the id asked for was the call's own id, or its session id. */
  readonly matchedBy: 'callId' | 'sessionId';
  /** The other stored calls the service gave the same session id, the earliest first. */
  readonly otherCalls: { callId: string; startedAt: string }[];
}

/** A delivery as the story shows it: never its body, nor its URL (which may hold credentials). */
export type DeliveryState = Pick<Delivery, 'status' | 'attempts' | 'lastError' | 'deliveredAt' | 'nextAttemptAt' | 'createdAt'>;

/** The prompts folder to check, and the environment its tool files' `${NAME}` are read from. */
export interface PromptsToCheck {
  readonly dir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

type Queries = {
  [K in Exclude<keyof DashboardReads, 'close'>]: (...args: Parameters<DashboardReads[K]>) => ReturnType<DashboardReads[K]> | Awaited<ReturnType<DashboardReads[K]>>;
};

/** The work itself, on one connection: the queries synchronous, the folder check reading files. */
export function queriesOn(db: Database, prompts: PromptsToCheck): Queries {
  const search = new CallSearch(db);
  const calls = new CallRepository(db);
  const reports = new ReportRepository(db);
  const deliveries = new DeliveryRepository(db);
  // One for the connection's life: it keeps the figures of days that have ended.
  const stats = new CallStats(db);
  return {
    charts: (now, dayCount) => stats.charts(now, dayCount),
    // Parsing every prompt, tool and report file holds a thread for tens of milliseconds: this one's.
    checkPrompts: () => checkPrompts(prompts.dir, prompts.env),
    page: (filter, limit, offset) => search.page(filter, limit, offset),
    batch: (filter, after, size) => search.batch(filter, after, size),
    fieldNames: () => search.fieldNames(),
    campaigns: () => legacyCampaignProgress(db),
    call: async (id) => {
      const exact = calls.get(id);
      const call = exact ?? calls.ofSessionId(id).at(-1);
      if (!call) return undefined;
      const report = reports.get(call.callId);
      const transcript = await readTranscript(call.transcriptFile);
      const sent = deliveries.forCall(call.callId).map(deliveryState);
      const otherCalls = calls
        .ofSessionId(call.sessionId)
        .filter((other) => other.callId !== call.callId)
        .map((other) => ({ callId: other.callId, startedAt: other.startedAt }));
      return {
        call,
        report,
        lines: transcript.lines,
        transcriptProblem: transcript.problem,
        deliveries: sent,
        matchedBy: exact ? ('callId' as const) : ('sessionId' as const),
        otherCalls,
      };
    },
    transcript: (file) => readTranscript(file),
    failedDeliveries: () => deliveries.failedTotal(),
  };
}

/** Leaves the body (the report, already on the page) and the URL (it may hold credentials) behind. */
function deliveryState({ status, attempts, lastError, deliveredAt, nextAttemptAt, createdAt }: Delivery): DeliveryState {
  return { status, attempts, lastError, deliveredAt, nextAttemptAt, createdAt };
}

/** The queries on the caller's own connection: for a database only this process can see (':memory:'). */
export function inProcessReads(db: Database, prompts: PromptsToCheck): DashboardReads {
  const q = queriesOn(db, prompts);
  return {
    page: async (...args) => q.page(...args),
    batch: async (...args) => q.batch(...args),
    fieldNames: async () => q.fieldNames(),
    campaigns: async () => q.campaigns(),
    call: async (...args) => q.call(...args),
    transcript: async (...args) => q.transcript(...args),
    charts: async (...args) => q.charts(...args),
    failedDeliveries: async () => q.failedDeliveries(),
    checkPrompts: async () => q.checkPrompts(),
    close: async () => undefined,
  };
}

export type ReadRequest = { id: number; name: keyof Queries; args: unknown[] };
export type ReadResponse = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

/**
 * The queries on a thread of their own, with a read-only connection of their
 * own: a history page over ten thousand calls costs milliseconds of SQLite,
 * and none of them is spent on the event loop the calls run on.
 */
export class ThreadReads implements DashboardReads {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly file: string,
    private readonly prompts: PromptsToCheck,
    private readonly logger: Logger,
  ) {}

  page(filter: CallFilter, limit: number, offset: number) {
    return this.ask<{ calls: CallListing[]; total: number }>('page', [filter, limit, offset]);
  }
  batch(filter: CallFilter, after: BatchCursor | undefined, size: number) {
    return this.ask<CallListing[]>('batch', [filter, after, size]);
  }
  fieldNames() {
    return this.ask<string[]>('fieldNames', []);
  }
  campaigns() {
    return this.ask<CampaignProgress[]>('campaigns', []);
  }
  call(id: string) {
    return this.ask<CallStory | undefined>('call', [id]);
  }
  transcript(file: string) {
    return this.ask<{ lines: TranscriptLine[]; problem?: string | undefined }>('transcript', [file]);
  }
  charts(now: Date, dayCount?: DayRange) {
    return this.ask<ChartData>('charts', [now, dayCount]);
  }
  failedDeliveries() {
    return this.ask<number>('failedDeliveries', []);
  }
  checkPrompts() {
    return this.ask<PromptsCheck>('checkPrompts', []);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private ask<T>(name: keyof Queries, args: unknown[]): Promise<T> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (value) => resolve(value as T), reject });
      worker.postMessage({ id, name, args } satisfies ReadRequest);
    });
  }

  /** The thread, started at the first question and again after it died. */
  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnModule(import.meta.url, 'reads-worker', { file: this.file, prompts: this.prompts });
    worker.unref();
    worker.on('message', (response: ReadResponse) => {
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
      this.logger.error({ err: error }, 'the dashboard reader thread failed');
      fail(error);
    });
    worker.on('exit', () => fail(new Error('the dashboard reader thread stopped')));
    this.worker = worker;
    return worker;
  }
}
