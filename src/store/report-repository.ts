import { z } from 'zod';
import type { Insertable } from 'kysely';
import type { Db, ReportsTable } from './schema.js';

/** The values of a report's structured fields, by field name. */
export type FieldValues = Record<string, string | number | boolean>;
export const FieldValuesSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** ok: the model filled the fields; failed: it could not (fieldsError says why); skipped: there was nothing to ask. */
export const FIELDS_STATUSES = ['ok', 'failed', 'skipped'] as const;
export type FieldsStatus = (typeof FIELDS_STATUSES)[number];

export interface StoredReport {
  /** The call's own id (see CallSummary). */
  readonly callId: string;
  readonly sessionId: string;
  /** ISO time. */
  readonly createdAt: string;
  readonly summary: string | null;
  readonly fields: FieldValues | null;
  readonly fieldsStatus: FieldsStatus;
  readonly fieldsError: string | null;
  /** The report's JSON exactly as delivered to the webhook. */
  readonly body: string;
}

const ReportRow = z
  .object({
    call_id: z.string(),
    session_id: z.string(),
    created_at: z.string(),
    summary: z.string().nullable(),
    fields: z.string().nullable(),
    fields_status: z.enum(FIELDS_STATUSES),
    fields_error: z.string().nullable(),
    body: z.string(),
  })
  .transform(
    (row): StoredReport => ({
      callId: row.call_id,
      sessionId: row.session_id,
      createdAt: row.created_at,
      summary: row.summary,
      fields: row.fields === null ? null : FieldValuesSchema.parse(JSON.parse(row.fields)),
      fieldsStatus: row.fields_status,
      fieldsError: row.fields_error,
      body: row.body,
    }),
  );

/** The row of a report as the table holds it (for bulk writers: the bench's and tests' seeds). */
export function reportRowOf(report: StoredReport): Insertable<ReportsTable> {
  return {
    call_id: report.callId,
    session_id: report.sessionId,
    created_at: report.createdAt,
    summary: report.summary,
    fields: report.fields === null ? null : JSON.stringify(report.fields),
    fields_status: report.fieldsStatus,
    fields_error: report.fieldsError,
    body: report.body,
  };
}

/** The `reports` table: one report per call (by call id). */
export class ReportRepository {
  constructor(private readonly db: Db) {}

  /** Stores the report, replacing the call's earlier one. The call's row must exist (a report belongs to a call). */
  async save(report: StoredReport): Promise<void> {
    await this.db
      .insertInto('reports')
      .values(reportRowOf(report))
      .onConflict((conflict) =>
        conflict.column('call_id').doUpdateSet((eb) => ({
          created_at: eb.ref('excluded.created_at'),
          summary: eb.ref('excluded.summary'),
          fields: eb.ref('excluded.fields'),
          fields_status: eb.ref('excluded.fields_status'),
          fields_error: eb.ref('excluded.fields_error'),
          body: eb.ref('excluded.body'),
        })),
      )
      .execute();
  }

  /**
   * Stores the report unless the call has one already; whether it did. A call is reported once
   * even when two runs (or two processes on one PostgreSQL) make its report at the same time:
   * the primary key decides, in the one INSERT.
   */
  async addIfAbsent(report: StoredReport): Promise<boolean> {
    const added = await this.db
      .insertInto('reports')
      .values(reportRowOf(report))
      .onConflict((conflict) => conflict.column('call_id').doNothing())
      .executeTakeFirst();
    return Number(added.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** The report of the call with this call id. */
  async get(callId: string): Promise<StoredReport | undefined> {
    const row = await this.db.selectFrom('reports').selectAll().where('call_id', '=', callId).executeTakeFirst();
    return row === undefined ? undefined : ReportRow.parse(row);
  }
}
