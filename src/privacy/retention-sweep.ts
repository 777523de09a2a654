/**
 * One retention sweep: deletes what is older than its kind's limit, and nothing newer.
 *
 * Every delete is a few hundred rows named by key, and the event loop gets a turn between them: a
 * sweep of a million rows never holds the loop for more than a batch's bookkeeping, nor SQLite's
 * write lock for more than one short statement (the rows are found by a read first, which in WAL
 * mode takes no lock). Each delete checks its condition again, so the sweep is idempotent: several
 * processes on one PostgreSQL may sweep together, and one that finds its batch gone stops and leaves
 * the rest to the other.
 *
 * Times are compared as text: every time the sweep reads is written by `Date.toISOString()` (UTC,
 * `Z`, milliseconds), whose text sorts as the times do, on both databases, and lets `calls.ended_at`
 * use its index. The cutoffs are written the same way.
 */
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { HotlineError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Db, Dialect, StoreSchema } from '../store/schema.js';
import { wipeDeleted } from '../store/wipe-deleted.js';
import { sweepTranscriptFiles } from './retention-files.js';
import { checkRetentionSettings, DAY_MS, RETENTION_KINDS, type RetentionKind, type RetentionSettings } from './retention-settings.js';

/** Rows per delete: one statement is over in milliseconds even on a slow disk. */
export const RETENTION_BATCH = 500;

/**
 * A call's row, report and transcript are kept at least this long, whatever their limit says: the
 * report service reports a call that has no report for 24 hours after it ended (RECOVER_WITHIN_MS in
 * src/reports/report-service.ts). A report swept sooner would be made and sent to the webhook a
 * second time; a call swept sooner would lose the report it is about to get; a transcript, its lines.
 * It also keeps the file of a call whose row is not written yet (the database was away) far out of reach.
 */
export const CALL_RECORD_MIN_MS = DAY_MS;

/** The kinds CALL_RECORD_MIN_MS holds back. */
export const FLOORED_KINDS: ReadonlySet<RetentionKind> = new Set(['calls', 'reports', 'transcripts']);

export interface RetentionDeps {
  readonly db: Db;
  /** Every statement is the same on both; what was deleted is wiped from the files each its own way (wipe-deleted.ts). */
  readonly dialect: Dialect;
  /** TRANSCRIPTS_DIR: the transcripts are the `.jsonl` files directly in it. */
  readonly transcriptsDir: string;
  readonly settings: RetentionSettings;
  /** Epoch ms; tests move it on. */
  readonly now: () => number;
  readonly log: Logger;
  /** Stops the sweep between two batches: it rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
}

/** What one sweep deleted, per kind. A call's report deleted with it counts as a report. */
export interface RetentionCounts {
  transcripts: number;
  reports: number;
  calls: number;
  deliveries: number;
  campaigns: number;
  campaignContacts: number;
  audit: number;
}

export function noRetentionCounts(): RetentionCounts {
  return { transcripts: 0, reports: 0, calls: 0, deliveries: 0, campaigns: 0, campaignContacts: 0, audit: 0 };
}

/** Some kinds could not be swept; the others were. Each failure is named by its kind, with the error as its cause. */
export class RetentionSweepError extends HotlineError {
  readonly code = 'retention_sweep_failed';
  constructor(
    readonly failures: readonly { readonly kind: RetentionKind; readonly error: unknown }[],
    /** What was deleted all the same. */
    readonly counts: RetentionCounts,
  ) {
    super(
      `retention sweep failed for ${failures.map(({ kind, error }) => `${kind} (${error instanceof Error ? error.message : String(error)})`).join(', ')}; tried again at the next sweep`,
      { cause: failures.length === 1 ? failures[0]!.error : new AggregateError(failures.map((failure) => failure.error)) },
    );
  }
}

/** Epoch ms per kind with a limit: what was last written (or ended, or created) before it goes. */
export function retentionCutoffs(settings: RetentionSettings, nowMs: number): { [Kind in RetentionKind]?: number } {
  const cutoffs: { [Kind in RetentionKind]?: number } = {};
  for (const kind of RETENTION_KINDS) {
    const days = settings[kind];
    if (days === undefined) continue;
    const keepMs = FLOORED_KINDS.has(kind) ? Math.max(days * DAY_MS, CALL_RECORD_MIN_MS) : days * DAY_MS;
    cutoffs[kind] = Math.floor(nowMs - keepMs);
  }
  return cutoffs;
}

/**
 * Deletes every record past its kind's limit. A kind that fails does not stop the others: the sweep
 * goes on, logs what it did, and then rejects with a RetentionSweepError. Aborted (deps.signal), it
 * logs what it did until then and rejects with the signal's reason.
 *
 * Logs one info line: the counts and the cutoffs, never what the records held, nor whose they were.
 */
export async function sweepRetention(deps: RetentionDeps): Promise<RetentionCounts> {
  checkRetentionSettings(deps.settings);
  const { db, signal } = deps;
  const started = Date.now();
  const cutoffs = retentionCutoffs(deps.settings, deps.now());
  const counts = noRetentionCounts();
  const failures: { kind: RetentionKind; error: unknown }[] = [];

  const step = async (kind: RetentionKind, sweep: (cutoffIso: string, cutoffMs: number) => Promise<void>): Promise<void> => {
    const cutoffMs = cutoffs[kind];
    if (cutoffMs === undefined) return;
    signal?.throwIfAborted();
    try {
      await sweep(new Date(cutoffMs).toISOString(), cutoffMs);
    } catch (error) {
      if (signal?.aborted) throw error;
      failures.push({ kind, error });
    }
  };
  const summary = () => ({
    counts,
    cutoffs: Object.fromEntries(Object.entries(cutoffs).map(([kind, ms]) => [kind, new Date(ms).toISOString()])),
    ms: Date.now() - started,
  });

  try {
    // Reports before calls: a report whose call is swept too is counted once, here.
    await step('reports', (cutoff) => sweepReports(db, cutoff, counts, signal));
    await step('calls', (cutoff) => sweepCalls(db, cutoff, counts, signal));
    await step('deliveries', (cutoff) => sweepDeliveries(db, cutoff, counts, signal));
    await step('campaigns', (cutoff) => sweepCampaigns(db, cutoff, counts, signal));
    await step('transcripts', (_cutoff, cutoffMs) => sweepTranscripts(deps, cutoffMs, counts));
    await step('audit', (cutoff) => sweepAudit(db, cutoff, counts, signal));
  } catch (error) {
    deps.log.info({ ...summary(), stopped: true }, 'retention sweep stopped before it was done');
    throw error;
  }
  const wiped = await wipeDeleted(db, deps.dialect, sweptTables(counts));
  if (!wiped.complete) deps.log.warn({ problems: wiped.problems }, 'swept rows may still be in the database files: tried again after the next sweep that deletes from them');
  deps.log.info({ ...summary(), filesWiped: wiped.complete, ...(failures.length > 0 ? { failed: failures.map((failure) => failure.kind) } : {}) }, 'retention sweep done');
  if (failures.length > 0) throw new RetentionSweepError(failures, counts);
  return counts;
}

/** The tables a sweep deleted from: their deleted rows are wiped from the database's files (wipe-deleted.ts). */
function sweptTables(counts: RetentionCounts): (keyof StoreSchema)[] {
  const tables: (keyof StoreSchema)[] = [];
  if (counts.reports > 0) tables.push('reports');
  // Each call's number was held in outbound_requests, and a webhook call's owner in webhook_sessions, while it lasted.
  if (counts.calls > 0) tables.push('calls', 'webhook_sessions', 'outbound_requests');
  if (counts.deliveries > 0) tables.push('deliveries');
  if (counts.campaignContacts > 0 || counts.campaigns > 0) tables.push('campaign_contacts', 'campaign_tally', 'campaigns');
  if (counts.audit > 0) tables.push('audit_log');
  return tables;
}

/**
 * Finds up to RETENTION_BATCH keys, deletes them, and again, with a turn of the event loop between.
 * It stops at a short batch, or at one of which nothing was deleted: another process is sweeping the
 * same rows, and what it leaves is the next sweep's.
 */
async function inBatches<Key>(
  signal: AbortSignal | undefined,
  find: () => Promise<readonly Key[]>,
  remove: (keys: readonly Key[]) => Promise<number>,
): Promise<void> {
  for (;;) {
    signal?.throwIfAborted();
    const keys = await find();
    if (keys.length === 0) return;
    const removed = await remove(keys);
    if (keys.length < RETENTION_BATCH || removed === 0) return;
    await yieldToLoop();
  }
}

function deleted(result: { numDeletedRows: bigint }): number {
  return Number(result.numDeletedRows);
}

/** Reports made before the cutoff. */
async function sweepReports(db: Db, cutoff: string, counts: RetentionCounts, signal: AbortSignal | undefined): Promise<void> {
  await inBatches(
    signal,
    async () => (await db.selectFrom('reports').select('call_id').where('created_at', '<', cutoff).limit(RETENTION_BATCH).execute()).map((row) => row.call_id),
    async (ids) => {
      const n = deleted(await db.deleteFrom('reports').where('call_id', 'in', ids).where('created_at', '<', cutoff).executeTakeFirstOrThrow());
      counts.reports += n;
      return n;
    },
  );
}

/**
 * Calls that ended before the cutoff. A call in progress (no end) is never touched, however long
 * ago it began. A report belongs to its call (the schema deletes it with it): deleted here first,
 * so that it is counted.
 */
async function sweepCalls(db: Db, cutoff: string, counts: RetentionCounts, signal: AbortSignal | undefined): Promise<void> {
  await inBatches(
    signal,
    async () =>
      (await db.selectFrom('calls').select('call_id').where('ended_at', 'is not', null).where('ended_at', '<', cutoff).limit(RETENTION_BATCH).execute()).map(
        (row) => row.call_id,
      ),
    async (ids) => {
      // Checked again in each statement: a call cut off by a stop of Hotline may be taken up again and be in progress once more.
      const endedBefore = db.selectFrom('calls').select('call_id').where('call_id', 'in', ids).where('ended_at', '<', cutoff);
      counts.reports += deleted(await db.deleteFrom('reports').where('call_id', 'in', endedBefore).executeTakeFirstOrThrow());
      const n = deleted(await db.deleteFrom('calls').where('call_id', 'in', ids).where('ended_at', '<', cutoff).executeTakeFirstOrThrow());
      counts.calls += n;
      return n;
    },
  );
}

/** Report deliveries queued before the cutoff, sent or not: one still waiting that long was given up on anyway. */
async function sweepDeliveries(db: Db, cutoff: string, counts: RetentionCounts, signal: AbortSignal | undefined): Promise<void> {
  await inBatches(
    signal,
    async () => (await db.selectFrom('deliveries').select('id').where('created_at', '<', cutoff).limit(RETENTION_BATCH).execute()).map((row) => row.id),
    async (ids) => {
      const n = deleted(await db.deleteFrom('deliveries').where('id', 'in', ids).where('created_at', '<', cutoff).executeTakeFirstOrThrow());
      counts.deliveries += n;
      return n;
    },
  );
}

/** The audit log's entries older than the cutoff: the log has a retention of its own (RETENTION_AUDIT_DAYS). */
async function sweepAudit(db: Db, cutoff: string, counts: RetentionCounts, signal: AbortSignal | undefined): Promise<void> {
  await inBatches(
    signal,
    async () => (await db.selectFrom('audit_log').select('id').where('at', '<', cutoff).limit(RETENTION_BATCH).execute()).map((row) => row.id),
    async (ids) => {
      const n = deleted(await db.deleteFrom('audit_log').where('id', 'in', ids).where('at', '<', cutoff).executeTakeFirstOrThrow());
      counts.audit += n;
      return n;
    },
  );
}

/**
 * Campaigns that are done and were last changed before the cutoff: their contacts (the people, their
 * numbers and outcomes), their tally and their row. A running campaign is calling its contacts, and
 * a paused one is waiting to go on with them (it becomes done only by running to its end): both keep
 * every contact, however old.
 *
 * The contacts go in batches; the campaign row only once none is left, so deleting it never cascades
 * to a hundred thousand contacts in one statement.
 */
async function sweepCampaigns(db: Db, cutoff: string, counts: RetentionCounts, signal: AbortSignal | undefined): Promise<void> {
  const stillDue = (id: string) => db.selectFrom('campaigns').select('id').where('id', '=', id).where('state', '=', 'done').where('updated_at', '<', cutoff);
  const contactsOf = (id: string) => db.selectFrom('campaign_contacts').select('idx').where('campaign_id', '=', id);
  await inBatches(
    signal,
    async () =>
      (await db.selectFrom('campaigns').select('id').where('state', '=', 'done').where('updated_at', '<', cutoff).limit(RETENTION_BATCH).execute()).map(
        (row) => row.id,
      ),
    async (ids) => {
      let removed = 0;
      for (const id of ids) {
        await inBatches(
          signal,
          async () =>
            (
              await db
                .selectFrom('campaign_contacts')
                .select('idx')
                .where('campaign_id', '=', id)
                .where((eb) => eb.exists(stillDue(id)))
                .limit(RETENTION_BATCH)
                .execute()
            ).map((row) => row.idx),
          async (indexes) => {
            const n = deleted(
              await db
                .deleteFrom('campaign_contacts')
                .where('campaign_id', '=', id)
                .where('idx', 'in', indexes)
                .where((eb) => eb.exists(stillDue(id)))
                .executeTakeFirstOrThrow(),
            );
            counts.campaignContacts += n;
            return n;
          },
        );
        // Its tally with it (the schema would cascade it too; said here, it does not hang on a pragma).
        await db.deleteFrom('campaign_tally').where('campaign_id', '=', id).where((eb) => eb.exists(stillDue(id))).where((eb) => eb.not(eb.exists(contactsOf(id)))).execute();
        const n = deleted(
          await db
            .deleteFrom('campaigns')
            .where('id', '=', id)
            .where('state', '=', 'done')
            .where('updated_at', '<', cutoff)
            .where((eb) => eb.not(eb.exists(contactsOf(id))))
            .executeTakeFirstOrThrow(),
        );
        counts.campaigns += n;
        removed += n;
        await yieldToLoop();
      }
      return removed;
    },
  );
}

/** Transcript files last written before the cutoff, except those of calls in progress. */
async function sweepTranscripts(deps: RetentionDeps, cutoffMs: number, counts: RetentionCounts): Promise<void> {
  const inProgress = await deps.db.selectFrom('calls').select('transcript_file').where('ended_at', 'is', null).execute();
  const keep = new Set(inProgress.map((row) => path.resolve(row.transcript_file)));
  const result = await sweepTranscriptFiles({ dir: deps.transcriptsDir, cutoffMs, keep, signal: deps.signal });
  counts.transcripts += result.deleted;
  const failed = Object.entries(result.failed);
  if (failed.length > 0) {
    // Codes and counts only: a file's name carries the call's session id.
    throw new Error(`${failed.reduce((sum, [, n]) => sum + n, 0)} transcript files could not be deleted (${failed.map(([code, n]) => `${code}: ${n}`).join(', ')})`);
  }
}
