import { z } from 'zod';
import type { CallEndReason } from '../call/ports/call-summary.js';
import { CALL_ROW_BASICS } from './call-repository.js';
import type { Database } from './database.js';
import { FieldValuesSchema, type FieldValues } from './report-repository.js';

/** Which ended calls to list. Every part is optional; the parts combine with AND. */
export interface CallFilter {
  /** ISO time: calls that ended at or after it. */
  readonly since?: string | undefined;
  /** ISO time: calls that ended before it. */
  readonly until?: string | undefined;
  readonly direction?: 'inbound' | 'outbound' | undefined;
  readonly endReason?: CallEndReason | undefined;
  /** The campaign id an outbound call was placed for. */
  readonly campaign?: string | undefined;
  /** Digits found in the caller's or the called number. */
  readonly number?: string | undefined;
  /** Words found in the report's summary (case-insensitive for ASCII letters). */
  readonly text?: string | undefined;
  /** A structured field of the call's report equals this value ("true"/"false" match booleans). */
  readonly field?: { readonly name: string; readonly value: string } | undefined;
}

/** Where the previous batch of an export ended. */
export interface BatchCursor {
  readonly endedAt: string;
  readonly callId: string;
}

/** One call as the history lists it. */
export interface CallListing {
  /** The call's own id: what its story's link names. */
  readonly callId: string;
  readonly sessionId: string;
  readonly direction: 'inbound' | 'outbound';
  readonly from: string | null;
  readonly to: string | null;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly durationMs: number;
  readonly endReason: CallEndReason;
  readonly turns: number;
  readonly bargeIns: number;
  readonly campaign: string | null;
  readonly summary: string | null;
  readonly fields: FieldValues | null;
}

export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const ListingRow = z
  .object({
    ...CALL_ROW_BASICS,
    turn_count: z.number(),
    barge_ins: z.number(),
    campaign: z.string().nullable(),
    summary: z.string().nullable(),
    fields: z.string().nullable(),
  })
  .transform(
    (row): CallListing => ({
      callId: row.call_id,
      sessionId: row.session_id,
      direction: row.direction,
      from: row.from_number,
      to: row.to_number,
      startedAt: row.started_at,
      endedAt: row.ended_at,
      durationMs: row.duration_ms,
      endReason: row.end_reason,
      turns: row.turn_count,
      bargeIns: row.barge_ins,
      campaign: row.campaign,
      summary: row.summary,
      fields: row.fields === null ? null : FieldValuesSchema.parse(JSON.parse(row.fields)),
    }),
  );

const SELECT = `SELECT c.call_id, c.session_id, c.direction, c.from_number, c.to_number, c.started_at, c.ended_at, c.duration_ms,
  c.end_reason, json_array_length(c.turns) AS turn_count, c.barge_ins, json_extract(c.tags, '$.campaign') AS campaign,
  r.summary, r.fields
  FROM calls c LEFT JOIN reports r ON r.call_id = c.call_id`;

/**
 * The history's queries: ended calls filtered, counted and paged, newest
 * first. Filters are bound parameters, never SQL text; a field name is
 * checked against FIELD_NAME before it becomes a JSON path.
 */
export class CallSearch {
  constructor(private readonly db: Database) {}

  /** One page of the calls that match, and how many match in all. */
  page(filter: CallFilter, limit: number, offset: number): { calls: CallListing[]; total: number } {
    const { where, params } = whereOf(filter);
    const total = z
      .object({ n: z.number() })
      .parse(this.db.sql.prepare(`SELECT COUNT(*) AS n FROM calls c LEFT JOIN reports r ON r.call_id = c.call_id ${where}`).get(params)).n;
    const rows = this.db.sql
      .prepare(`${SELECT} ${where} ORDER BY c.ended_at DESC, c.call_id DESC LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit, offset });
    return { calls: rows.map((row) => ListingRow.parse(row)), total };
  }

  /** The next `size` matching calls after `after` (the last of the previous batch), newest first: an export, a batch at a time. */
  batch(filter: CallFilter, after: BatchCursor | undefined, size: number): CallListing[] {
    const { where, params } = whereOf(filter);
    const rows = this.db.sql
      .prepare(
        `${SELECT} ${where} ${where ? 'AND' : 'WHERE'} (@afterEnd IS NULL OR (c.ended_at, c.call_id) < (@afterEnd, @afterId))
         ORDER BY c.ended_at DESC, c.call_id DESC LIMIT @size`,
      )
      .all({ ...params, afterEnd: after?.endedAt ?? null, afterId: after?.callId ?? null, size });
    return rows.map((row) => ListingRow.parse(row));
  }

  /** The report field names seen in the latest reports, for the history's filter. */
  fieldNames(): string[] {
    const rows = this.db.sql
      .prepare(
        `SELECT DISTINCT j.key AS name FROM (SELECT fields FROM reports WHERE fields IS NOT NULL ORDER BY created_at DESC LIMIT 200) r,
         json_each(r.fields) j ORDER BY j.key`,
      )
      .all();
    return rows.map((row) => z.object({ name: z.string() }).parse(row).name).filter((name) => FIELD_NAME.test(name));
  }

}

/** The filter's parts that are one bound value each, and the clause that tests it. */
const EQUALS: readonly [key: 'since' | 'until' | 'direction' | 'endReason' | 'campaign', clause: string][] = [
  ['since', 'c.ended_at >= @since'],
  ['until', 'c.ended_at < @until'],
  ['direction', 'c.direction = @direction'],
  ['endReason', 'c.end_reason = @endReason'],
  ['campaign', `json_extract(c.tags, '$.campaign') = @campaign`],
];

function whereOf(filter: CallFilter): { where: string; params: Record<string, string | number> } {
  const clauses: string[] = [];
  const params: Record<string, string | number> = {};
  for (const [key, clause] of EQUALS) {
    const value = filter[key];
    if (!value) continue;
    clauses.push(clause);
    params[key] = value;
  }
  const digits = filter.number?.replace(/\D/g, '');
  if (digits) {
    clauses.push(`(instr(c.from_number, @digits) > 0 OR instr(c.to_number, @digits) > 0)`);
    params.digits = digits;
  }
  const text = filter.text?.trim();
  if (text) {
    // The words as they are: % and _ in them are not wildcards.
    clauses.push(`r.summary LIKE @text ESCAPE '\\'`);
    params.text = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  }
  if (filter.field && FIELD_NAME.test(filter.field.name)) {
    const { name, value } = filter.field;
    // JSON booleans come out of json_extract as 1 and 0, numbers as numbers, strings as text: "4711"
    // is the number 4711 or the text "4711", whichever the field holds.
    const typed: string | number = value === 'true' ? 1 : value === 'false' ? 0 : value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    clauses.push(`json_extract(r.fields, '$.${name}') IN (@fieldTyped, @fieldText)`);
    params.fieldTyped = typed;
    params.fieldText = value;
  }
  return { where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', params };
}
