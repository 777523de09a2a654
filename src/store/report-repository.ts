import { z } from 'zod';
import type { Database } from './database.js';

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

/** The `reports` table: one report per call (by call id), replaced when the call is reported again. */
export class ReportRepository {
  private readonly upsert;
  private readonly one;

  constructor(db: Database) {
    this.upsert = db.sql.prepare(
      `INSERT INTO reports (call_id, session_id, created_at, summary, fields, fields_status, fields_error, body)
       VALUES (@call_id, @session_id, @created_at, @summary, @fields, @fields_status, @fields_error, @body)
       ON CONFLICT (call_id) DO UPDATE SET
        created_at = excluded.created_at, summary = excluded.summary, fields = excluded.fields,
        fields_status = excluded.fields_status, fields_error = excluded.fields_error, body = excluded.body`,
    );
    this.one = db.sql.prepare<[string]>('SELECT * FROM reports WHERE call_id = ?');
  }

  /** The call's row must exist (a report belongs to a call). */
  save(report: StoredReport): void {
    this.upsert.run({
      call_id: report.callId,
      session_id: report.sessionId,
      created_at: report.createdAt,
      summary: report.summary,
      fields: report.fields === null ? null : JSON.stringify(report.fields),
      fields_status: report.fieldsStatus,
      fields_error: report.fieldsError,
      body: report.body,
    });
  }

  /** The report of the call with this call id. */
  get(callId: string): StoredReport | undefined {
    const row = this.one.get(callId);
    return row === undefined ? undefined : ReportRow.parse(row);
  }
}
