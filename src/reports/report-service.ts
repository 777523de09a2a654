/**
 * A report of every call. When a call ends its row is stored first; then,
 * off the call's path, the transcript is read back, the model fills in the
 * summary and report.md's fields, and the report is stored and queued for the
 * webhook. Nothing here throws at the call core: every failure is logged and
 * costs at most the fields, never the report.
 *
 * A call is reported once, although the store is read and written with awaits between: in this
 * process `queued` and `reportedNow` keep a call from being queued twice (callEnded, catching up
 * and the start's recovery may all find it), and in the store the report is added only if the call
 * has none (ReportRepository.addIfAbsent), with its delivery in the same transaction — so even two
 * processes sharing one PostgreSQL store one report and send it once.
 */
import type { CallObserver, CallSummary } from '../call/ports/call-summary.js';
import type { Redact } from '../call/ports/redaction.js';
import type { Logger } from '../logger.js';
import { CallRepository, FINAL_REVISION } from '../store/call-repository.js';
import { DeliveryRepository, type DeliveriesOf, type Delivery } from '../store/delivery-repository.js';
import { ReportRepository, type StoredReport } from '../store/report-repository.js';
import type { Store } from '../store/store.js';
import { DeliveryQueue, type DeliveryAttempt, type RetryPolicy, type WebhookTarget } from './delivery.js';
import type { DeliveryTracing } from './delivery-tracing.js';
import { buildReport, type ReportContent } from './report-builder.js';
import { ReportLlm, type ReportLlmOptions } from './report-llm.js';
import { readReportPrompt } from './report-prompt.js';
import { redactContent } from './report-redaction.js';
import { Slots } from './slots.js';
import { readTranscriptLines, type TranscriptLine } from './transcript-lines.js';
import { renderTranscript } from './transcript-text.js';

export interface ReportServiceOptions {
  /** Where calls, reports and deliveries are kept. */
  readonly store: Store;
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
  /** The replica this runs in, named by its deliveries' claims (see DeliveryRepository). */
  readonly replica?: string | undefined;
  /** Where each webhook attempt is traced; nothing without. */
  readonly tracing?: DeliveryTracing | undefined;
  /** What is taken out of everything the model writes (REDACT_*), before it is stored, shown or sent; nothing without. */
  readonly redact?: Redact | undefined;
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
  /**
   * Calls reported in this run, the latest kept: a lookup of calls without a report that began
   * before a report was stored may still list its call when it answers.
   */
  private readonly reportedNow = new Set<string>();
  /** A lookup of calls without a report is running; `lookAgain`: another was asked for meanwhile. */
  private lookingUp = false;
  private lookAgain = false;
  /** Aborted once close() has waited long enough: the model requests still running end as 'shutdown'. */
  private readonly stopping = new AbortController();
  private closing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: ReportServiceOptions) {
    this.log = options.logger.child({ component: 'reports' });
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.calls = new CallRepository(options.store.db);
    this.reports = new ReportRepository(options.store.db);
    this.deliveries = new DeliveryRepository(
      options.store.db,
      options.replica === undefined ? undefined : { replica: options.replica, dialect: options.store.dialect },
    );
    this.llm = options.llm && new ReportLlm(options.llm);
    this.queue = options.webhook
      ? new DeliveryQueue({
          deliveries: this.deliveries,
          target: options.webhook,
          retry: options.retry,
          logger: options.logger,
          onAttempt: options.onDeliveryAttempt,
          tracing: options.tracing,
        })
      : undefined;
    this.queue?.start();
    // whenIdle() waits for it, and for the reports it queues.
    this.track(this.recover());
  }

  /**
   * Sends the reports whose delivery was given up again — all, or one call's.
   * Undefined when no REPORT_WEBHOOK_URL is set: there is nowhere to send them.
   */
  async redeliver(which?: string | DeliveriesOf): Promise<number | undefined> {
    return this.queue?.redeliver(typeof which === 'string' ? { sessionId: which } : which);
  }

  /**
   * Stores the call's final row, then makes its report. The promise resolves once the row is
   * stored (or its failure logged): the call core need not wait for it (whenIdle() does). Never rejects.
   */
  callEnded(summary: CallSummary): Promise<void> {
    const stored = this.calls.save({ ...summary, revision: FINAL_REVISION }).then(
      () => true,
      (error: unknown) => {
        this.log.error({ err: error, sessionId: summary.sessionId, callId: summary.callId }, 'call not stored');
        return false;
      },
    );
    this.track(
      stored.then((ok) => {
        if (ok) this.callStored(summary);
      }),
    );
    return stored.then(() => undefined);
  }

  /**
   * Told of a call whose final row is stored already (by callEnded, or by whoever writes the rows
   * as calls go on): queues its report, or leaves it waiting in the database when reports are
   * behind or closed. Never throws.
   */
  callStored(summary: CallSummary): void {
    if (this.queued.has(summary.callId) || this.reportedNow.has(summary.callId)) return;
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

  /**
   * A call's final record is on its way to the store (written by the call writer, which then calls
   * callStored): whenIdle() waits for it too, and so for the report it brings.
   */
  awaitStored(storing: Promise<unknown>): void {
    this.track(storing.then(() => undefined));
  }

  /** Resolves when every call row and report in progress (those begun meanwhile too) is stored. */
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
  async listCalls({ limit = 50, before }: { limit?: number; before?: string } = {}): Promise<CallRecord[]> {
    const calls = await this.calls.listRecent(limit, before);
    return Promise.all(calls.map(async (call) => ({ call, report: await this.reports.get(call.callId) })));
  }

  /** A stored call by its call id, or the latest with a session id, with its report and deliveries. */
  async getCall(id: string): Promise<CallDetail | undefined> {
    const call = await this.calls.find(id);
    return call && this.detail(call);
  }

  /** Every stored call the service gave `sessionId`, the earliest first. */
  async callsOfSession(sessionId: string): Promise<CallDetail[]> {
    const calls = await this.calls.ofSessionId(sessionId);
    return Promise.all(calls.map((call) => this.detail(call)));
  }

  private async detail(call: CallSummary): Promise<CallDetail> {
    const [report, deliveries] = await Promise.all([this.reports.get(call.callId), this.deliveries.forCall(call.callId)]);
    return { call, report, deliveries };
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
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.track(
      this.report(call)
        .then(
          () => remember(this.reportedNow, key, 2 * this.maxQueued),
          (error: unknown) => {
            remember(this.failedNow, key, this.maxQueued);
            throw error;
          },
        )
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
    // One lookup at a time: two answering together would queue the same calls (enqueue() would
    // drop the second, but both would count them against the room left).
    if (this.lookingUp) {
      this.lookAgain = true;
      return;
    }
    this.lookingUp = true;
    this.track(
      this.lookUpBehind().finally(() => {
        this.lookingUp = false;
        if (this.lookAgain) {
          this.lookAgain = false;
          this.catchUp();
        }
      }),
    );
  }

  private async lookUpBehind(): Promise<void> {
    const asked = this.maxQueued + this.queued.size;
    let waiting: CallSummary[];
    try {
      waiting = await this.calls.withoutReport(new Date(Date.now() - RECOVER_WITHIN_MS).toISOString(), asked);
    } catch (error) {
      this.log.error({ err: error }, 'calls without a report not looked up');
      return;
    }
    const fresh = this.notYetReported(waiting);
    const room = this.room();
    // Caught up only when the lookup saw every call left and all of them fit now. A queued call whose
    // report is already stored is not among the rows, so fewer rows than asked alone does not say it.
    if (waiting.length < asked && fresh.length <= room) this.behind = false;
    for (const call of fresh.slice(0, room)) this.enqueue(call);
  }

  /** How many more reports the queue takes now. */
  private room(): number {
    return Math.max(0, this.maxQueued - this.queued.size);
  }

  /** Of the calls a lookup found without a report, those this run is not reporting, has not reported and did not fail. */
  private notYetReported(calls: readonly CallSummary[]): CallSummary[] {
    return calls.filter(({ callId }) => !this.queued.has(callId) && !this.reportedNow.has(callId) && !this.failedNow.has(callId));
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
    const report: StoredReport = {
      callId: call.callId,
      sessionId: call.sessionId,
      createdAt: new Date().toISOString(),
      summary: content.status === 'ok' ? content.summary : null,
      fields: content.status === 'ok' ? content.fields : null,
      fieldsStatus: content.status,
      fieldsError: content.status === 'failed' ? content.error : null,
      body,
    };
    // The report and its delivery together, or neither: a report stored is a report queued.
    const added = await this.options.store.db.transaction().execute(async (trx) => {
      if (!(await new ReportRepository(trx).addIfAbsent(report))) return false;
      await this.queue?.add(call, body, new DeliveryRepository(trx));
      return true;
    });
    if (!added) {
      log.info('call report not stored: the call had one already (made by another run)');
      return;
    }
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
    const filled = await this.llm.fill(prompt, renderTranscript(call, lines), this.stopping.signal);
    const outcome = this.options.redact ? redactContent(filled, this.options.redact) : filled;
    if (outcome.status === 'failed') log.warn({ error: outcome.error }, 'report fields failed');
    return outcome;
  }

  /** Calls a crash or kill left without a report: their rows and transcripts are on disk. */
  private async recover(): Promise<void> {
    let found: CallSummary[];
    try {
      found = await this.calls.withoutReport(new Date(Date.now() - RECOVER_WITHIN_MS).toISOString(), RECOVER_AT_MOST);
    } catch (error) {
      this.log.error({ err: error }, 'calls without a report not looked up');
      return;
    }
    // Calls that ended in this run while it was looked up are being reported already.
    const missing = this.notYetReported(found);
    if (missing.length === 0 || this.closing) return;
    this.log.info({ calls: missing.length }, 'reporting calls a previous run left without a report');
    // Calls that ended meanwhile may have filled the queue: what does not fit, and more than the
    // lookup could see, follows from the database as the queue empties.
    const room = this.room();
    if (found.length >= RECOVER_AT_MOST || missing.length > room) this.behind = true;
    for (const call of missing.slice(0, room)) this.enqueue(call);
  }
}

/** Adds `key` to `set`, forgetting the oldest beyond `most`. */
function remember(set: Set<string>, key: string, most: number): void {
  set.add(key);
  if (set.size > most) set.delete(set.values().next().value!);
}
