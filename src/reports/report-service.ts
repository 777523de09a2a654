/**
 * A report of every call. When a call ends its row is stored at once; then,
 * off the call's path, the transcript is read back, the model fills in the
 * summary and report.md's fields, and the report is stored and queued for the
 * webhook. Nothing here throws at the call core: every failure is logged and
 * costs at most the fields, never the report.
 */
import type { CallObserver, CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { CallRepository } from '../store/call-repository.js';
import type { Database } from '../store/database.js';
import { DeliveryRepository, type DeliveriesOf, type Delivery } from '../store/delivery-repository.js';
import { ReportRepository, type StoredReport } from '../store/report-repository.js';
import { DeliveryQueue, type DeliveryAttempt, type RetryPolicy, type WebhookTarget } from './delivery.js';
import { buildReport, type ReportContent } from './report-builder.js';
import { ReportLlm, type ReportLlmOptions } from './report-llm.js';
import { readReportPrompt } from './report-prompt.js';
import { Slots } from './slots.js';
import { readTranscriptLines, type TranscriptLine } from './transcript-lines.js';
import { renderTranscript } from './transcript-text.js';

export interface ReportServiceOptions {
  readonly db: Database;
  /** Where report.md is read from, for each report. */
  readonly promptsDir: string;
  /** Without it (REPORT_FIELDS=false), reports have no summary or fields and no LLM is asked. */
  readonly llm?: ReportLlmOptions | undefined;
  /** Without it, reports are only stored. */
  readonly webhook?: WebhookTarget | undefined;
  readonly retry?: Partial<RetryPolicy> | undefined;
  readonly logger: Logger;
  /** How long close() waits for reports in progress before storing them without fields; default 5 s. */
  readonly closeGraceMs?: number | undefined;
  /** Reports waiting in memory at most (default 200); the rest wait in the database. */
  readonly maxQueued?: number | undefined;
  /** Told of each webhook attempt (metrics, tests). */
  readonly onDeliveryAttempt?: ((attempt: DeliveryAttempt) => void) | undefined;
}

/** A stored call and its report, if it has one yet. */
export interface CallRecord {
  readonly call: CallSummary;
  readonly report: StoredReport | undefined;
}

export interface CallDetail extends CallRecord {
  readonly deliveries: readonly Delivery[];
}

/** What the fields_error of a report cut short by close() says. */
export const SHUTDOWN_ERROR = 'shutdown';
const DEFAULT_CLOSE_GRACE_MS = 5_000;
/** Model requests at once; the rest wait their turn. */
const CONCURRENT_REPORTS = 4;
/** Calls without a report are reported if they ended this recently (at start, and catching up)… */
const RECOVER_WITHIN_MS = 24 * 60 * 60_000;
/** …and at most this many of them at start. */
const RECOVER_AT_MOST = 100;
/**
 * Reports waiting in memory for the model at most. Calls ending faster than their reports are
 * made (a slow model, a busy line) wait beyond it as what they are anyway: stored calls without a
 * report, taken from the database as the queue empties — memory stays flat however long that lasts.
 */
const DEFAULT_MAX_QUEUED = 200;

export class ReportService implements CallObserver {
  private readonly calls: CallRepository;
  private readonly reports: ReportRepository;
  private readonly deliveries: DeliveryRepository;
  private readonly queue: DeliveryQueue | undefined;
  private readonly llm: ReportLlm | undefined;
  private readonly slots = new Slots(CONCURRENT_REPORTS);
  private readonly log: Logger;
  private readonly jobs = new Set<Promise<void>>();
  private readonly maxQueued: number;
  /** The calls whose report is queued or being made (at most maxQueued). */
  private readonly queued = new Set<string>();
  /** Calls ended while the queue was full: their reports are taken from the database as it empties. */
  private behind = false;
  /** Calls whose report failed in this run (a database error): catching up does not retry them in a loop. */
  private readonly failedNow = new Set<string>();
  /** Aborted once close() has waited long enough: the model requests still running end as 'shutdown'. */
  private readonly stopping = new AbortController();
  private closing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: ReportServiceOptions) {
    this.log = options.logger.child({ component: 'reports' });
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.calls = new CallRepository(options.db);
    this.reports = new ReportRepository(options.db);
    this.deliveries = new DeliveryRepository(options.db);
    this.llm = options.llm && new ReportLlm(options.llm);
    this.queue = options.webhook
      ? new DeliveryQueue({
          deliveries: this.deliveries,
          target: options.webhook,
          retry: options.retry,
          logger: options.logger,
          onAttempt: options.onDeliveryAttempt,
        })
      : undefined;
    this.queue?.start();
    this.recover();
  }

  /**
   * Sends the reports whose delivery was given up again — all, or one call's.
   * Undefined when no REPORT_WEBHOOK_URL is set: there is nowhere to send them.
   */
  redeliver(which?: string | DeliveriesOf): number | undefined {
    return this.queue?.redeliver(typeof which === 'string' ? { sessionId: which } : which);
  }

  /** Stores the call's row before it returns; the report follows. Never throws. */
  callEnded(summary: CallSummary): void {
    try {
      this.calls.save(summary);
    } catch (error) {
      this.log.error({ err: error, sessionId: summary.sessionId, callId: summary.callId }, 'call not stored');
      return;
    }
    if (this.closed) {
      this.log.warn({ sessionId: summary.sessionId }, 'call stored without a report: reports are closed; the next start makes it');
      return;
    }
    if (this.queued.size >= this.maxQueued) {
      if (!this.behind) this.log.warn({ queued: this.queued.size }, 'reports are behind the calls: the next ones wait in the database');
      this.behind = true;
      return;
    }
    this.enqueue(summary);
  }

  /** Resolves when every report in progress (those begun meanwhile too) is stored. */
  async whenIdle(): Promise<void> {
    while (this.jobs.size > 0) await Promise.allSettled([...this.jobs]);
  }

  /**
   * Waits up to closeGraceMs for the reports in progress, then stores the rest
   * without fields ('shutdown') and stops the webhook worker. Pending
   * deliveries stay in the database for the next start. Close the database after it.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  /** The latest calls first, with their reports; `before` (an ended_at) pages on. */
  listCalls({ limit = 50, before }: { limit?: number; before?: string } = {}): CallRecord[] {
    return this.calls.listRecent(limit, before).map((call) => ({ call, report: this.reports.get(call.callId) }));
  }

  /** A stored call by its call id, or the latest with a session id, with its report and deliveries. */
  getCall(id: string): CallDetail | undefined {
    const call = this.calls.find(id);
    if (!call) return undefined;
    return { call, report: this.reports.get(call.callId), deliveries: this.deliveries.forCall(call.callId) };
  }

  /** Every stored call the service gave `sessionId`, the earliest first. */
  callsOfSession(sessionId: string): CallDetail[] {
    return this.calls
      .ofSessionId(sessionId)
      .map((call) => ({ call, report: this.reports.get(call.callId), deliveries: this.deliveries.forCall(call.callId) }));
  }

  private async shutDown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS);
    });
    await Promise.race([this.whenIdle(), grace]);
    clearTimeout(timer);
    this.stopping.abort(new Error(SHUTDOWN_ERROR));
    await this.whenIdle();
    this.closed = true;
    await this.queue?.close();
  }

  private enqueue(call: CallSummary): void {
    const key = call.callId;
    this.queued.add(key);
    this.track(
      this.report(call)
        .catch((error: unknown) => {
          this.failedNow.add(key);
          if (this.failedNow.size > this.maxQueued) this.failedNow.delete(this.failedNow.values().next().value!);
          throw error;
        })
        .finally(() => {
          this.queued.delete(key);
          this.catchUp();
        }),
    );
  }

  private track(job: Promise<void>): void {
    const tracked = job.catch((error: unknown) => this.log.error({ err: error }, 'call report failed'));
    this.jobs.add(tracked);
    void tracked.finally(() => this.jobs.delete(tracked));
  }

  /** Once the queue is half empty, the calls that ended while it was full are queued from the database. */
  private catchUp(): void {
    // Shutting down: what is left waits for the next start, as after a crash.
    if (!this.behind || this.closing || this.queued.size > this.maxQueued / 2) return;
    let waiting: CallSummary[];
    try {
      waiting = this.calls.withoutReport(new Date(Date.now() - RECOVER_WITHIN_MS).toISOString(), this.maxQueued + this.queued.size);
    } catch (error) {
      this.log.error({ err: error }, 'calls without a report not looked up');
      return;
    }
    const fresh = waiting.filter((call) => !this.queued.has(call.callId) && !this.failedNow.has(call.callId));
    // Everything left fits: the queue has caught up with the calls.
    if (waiting.length < this.maxQueued + this.queued.size) this.behind = false;
    for (const call of fresh.slice(0, this.maxQueued - this.queued.size)) this.enqueue(call);
  }

  private async report(call: CallSummary): Promise<void> {
    const log = this.log.child({ sessionId: call.sessionId, callId: call.callId });
    // The transcript is read once a slot is free: a queue of reports holds summaries, not transcripts.
    const { lines, content } = await this.slots.run(async () => {
      const read = await readTranscriptLines(call.transcriptFile).then(
        (found) => found.lines,
        (error: unknown): TranscriptLine[] => {
          log.warn({ err: error, file: call.transcriptFile }, 'transcript not readable; the report has no lines');
          return [];
        },
      );
      return { lines: read, content: await this.content(call, read, log) };
    });
    const body = JSON.stringify(buildReport(call, lines, content));
    this.options.db.transaction(() => {
      this.reports.save({
        callId: call.callId,
        sessionId: call.sessionId,
        createdAt: new Date().toISOString(),
        summary: content.status === 'ok' ? content.summary : null,
        fields: content.status === 'ok' ? content.fields : null,
        fieldsStatus: content.status,
        fieldsError: content.status === 'failed' ? content.error : null,
        body,
      });
      this.queue?.add(call, body);
    });
    this.queue?.wake();
    log.info({ fieldsStatus: content.status, delivery: this.queue !== undefined }, 'call report stored');
  }

  /** The summary and fields, or why there are none. */
  private async content(call: CallSummary, lines: readonly TranscriptLine[], log: Logger): Promise<ReportContent> {
    if (!this.llm) return { status: 'skipped' };
    const read = await readReportPrompt(this.options.promptsDir);
    if (read.status === 'missing') return { status: 'skipped' };
    if (read.status === 'invalid') {
      log.warn({ problems: read.problems }, 'report.md is not usable: the report has no fields (npm run prompts:check shows why)');
      return { status: 'failed', error: `report.md: ${read.problems.join('; ')}` };
    }
    const { prompt } = read;
    if (prompt.fields.length === 0 && prompt.instruction === '') return { status: 'skipped' };
    const outcome = await this.llm.fill(prompt, renderTranscript(call, lines), this.stopping.signal);
    if (outcome.status === 'failed') log.warn({ error: outcome.error }, 'report fields failed');
    return outcome;
  }

  /** Calls a crash or kill left without a report: their rows and transcripts are on disk. */
  private recover(): void {
    let missing: CallSummary[];
    try {
      missing = this.calls.withoutReport(new Date(Date.now() - RECOVER_WITHIN_MS).toISOString(), RECOVER_AT_MOST);
    } catch (error) {
      this.log.error({ err: error }, 'calls without a report not looked up');
      return;
    }
    if (missing.length === 0) return;
    this.log.info({ calls: missing.length }, 'reporting calls a previous run left without a report');
    // More than that: the rest follows as the queue empties.
    this.behind = missing.length >= RECOVER_AT_MOST;
    for (const call of missing) this.enqueue(call);
  }
}
