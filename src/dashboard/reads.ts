import type { CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { progressOf, type CampaignProgress } from '../campaigns/progress.js';
import { CallRepository } from '../store/call-repository.js';
import { openCampaignStore } from '../campaigns/definition.js';
import { CallStats, type ChartData, type DayRange } from '../store/call-stats.js';
import { CallSearch, type BatchCursor, type CallFilter, type CallListing, type CostTotal } from '../store/call-search.js';
import { DeliveryRepository, type Delivery } from '../store/delivery-repository.js';
import { ReportRepository, type StoredReport } from '../store/report-repository.js';
import type { Store } from '../store/store.js';
import type { PromptsCheck } from '../prompts-check.js';
import { FileThread, type PromptsToCheck } from './file-thread.js';
import type { TranscriptLine } from './transcript-lines.js';

export type { PromptsToCheck } from './file-thread.js';

/**
 * Everything the dashboard reads — the store, a call's transcript, and the prompts folder as
 * `prompts:check` sees it — answered as promises, none of it worked out on the event loop.
 */
export interface DashboardReads {
  page(filter: CallFilter, limit: number, offset: number): Promise<{ calls: CallListing[]; total: number; cost: CostTotal }>;
  batch(filter: CallFilter, after: BatchCursor | undefined, size: number): Promise<CallListing[]>;
  fieldNames(): Promise<string[]>;
  /** Every campaign with its progress, newest first. */
  campaigns(): Promise<CampaignProgress[]>;
  /**
   * An ended call with its report and its transcript's lines: the call with this call id, or else
   * the latest ended call with this session id. A call in progress has no story yet (the live view shows it).
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

/**
 * The dashboard's reads: the store's queries through the Store (SQLite's own thread, or PostgreSQL's
 * pool: off the event loop either way), the files' parsing on a thread of its own.
 */
export class StoreReads implements DashboardReads {
  private readonly search: CallSearch;
  // One for the process's life: it keeps the figures of days that have ended.
  private readonly stats: CallStats;
  private readonly calls: CallRepository;
  private readonly reports: ReportRepository;
  private readonly deliveries: DeliveryRepository;
  private readonly campaignStore: ReturnType<typeof openCampaignStore>;
  private readonly files: FileThread;

  constructor(store: Store, prompts: PromptsToCheck, logger: Logger) {
    this.search = new CallSearch(store);
    this.stats = new CallStats(store);
    this.calls = new CallRepository(store.db);
    this.reports = new ReportRepository(store.db);
    this.deliveries = new DeliveryRepository(store.db);
    this.campaignStore = openCampaignStore(store);
    this.files = new FileThread(prompts, logger);
  }

  page(filter: CallFilter, limit: number, offset: number) {
    return this.search.page(filter, limit, offset);
  }
  batch(filter: CallFilter, after: BatchCursor | undefined, size: number) {
    return this.search.batch(filter, after, size);
  }
  fieldNames() {
    return this.search.fieldNames();
  }
  charts(now: Date, dayCount?: DayRange) {
    return this.stats.charts(now, dayCount);
  }
  async failedDeliveries() {
    return await this.deliveries.failedTotal();
  }
  async campaigns(): Promise<CampaignProgress[]> {
    const campaigns = await this.campaignStore.campaigns();
    return Promise.all(
      [...campaigns].reverse().map(async (campaign) => progressOf(campaign, await this.campaignStore.tally(campaign.id))),
    );
  }

  async call(id: string): Promise<CallStory | undefined> {
    const exact = ended(await this.calls.get(id));
    const call = exact ?? (await this.calls.ofSessionId(id)).filter((c) => ended(c)).at(-1);
    if (!call) return undefined;
    const [report, transcript, sent, sameSession] = await Promise.all([
      this.reports.get(call.callId),
      this.files.transcript(call.transcriptFile),
      this.deliveries.forCall(call.callId),
      this.calls.ofSessionId(call.sessionId),
    ]);
    return {
      call,
      report,
      lines: transcript.lines,
      transcriptProblem: transcript.problem,
      deliveries: sent.map(deliveryState),
      matchedBy: exact ? 'callId' : 'sessionId',
      otherCalls: sameSession
        .filter((other) => other.callId !== call.callId && ended(other))
        .map((other) => ({ callId: other.callId, startedAt: other.startedAt })),
    };
  }

  transcript(file: string) {
    return this.files.transcript(file);
  }
  checkPrompts() {
    return this.files.checkPrompts();
  }

  close(): Promise<void> {
    return this.files.close();
  }
}

/**
 * The call if it has ended: a row is written from a call's start (issue 22), and only an ended call
 * has a story. Today's repositories hold only ended calls; this keeps the story right either way.
 */
function ended<C extends { readonly endedAt?: string | null | undefined }>(call: C | undefined): C | undefined {
  return call !== undefined && typeof call.endedAt === 'string' ? call : undefined;
}

/** Leaves the body (the report, already on the page) and the URL (it may hold credentials) behind. */
function deliveryState({ status, attempts, lastError, deliveredAt, nextAttemptAt, createdAt }: Delivery): DeliveryState {
  return { status, attempts, lastError, deliveredAt, nextAttemptAt, createdAt };
}
