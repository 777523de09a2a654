import type { Insertable } from 'kysely';
import { z } from 'zod';
import { CALL_END_FIELDS, CALL_FIELDS, CallRecordSchema, type CallField, type CallProgress, type CallSummary } from '../call/ports/call-record-schema.js';
import { callCostUsd } from '../llm/prices.js';
import { replicaDead } from './database-clock.js';
import { callColumnOf, type CallColumn, type CallColumnOf, type CallsTable, type Db, type Dialect } from './schema.js';

/**
 * The revision of a call's last row when it is stored whole at once (ReportService.callEnded):
 * nothing written after it replaces it. The call writer's own revisions (microseconds) stay below.
 */
export const FINAL_REVISION = Number.MAX_SAFE_INTEGER;

/** A JSON column: text in the row, checked by `schema` when read. */
function json<S extends z.ZodType>(schema: S) {
  return z.string().transform((text, ctx): z.output<S> => {
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

/**
 * How each field of a call's record (CallRecordSchema) goes into its column and comes back, read
 * from the field's schema: strings and numbers as they are, a boolean as 0 or 1 (SQLite has no
 * booleans), anything else as JSON text; an optional field's column is nullable, null when the
 * field is missing.
 */
interface Codec {
  readonly field: CallField;
  readonly column: CallColumn;
  /** The column's value as read, checked and decoded: the field's value, or null. */
  readonly read: z.ZodType;
  readonly write: (value: unknown) => unknown;
}

/** Where a field's value is stored otherwise than its schema says. */
const WRITE_EXCEPTIONS: Partial<Record<CallField, (value: unknown) => unknown>> = {
  // An INTEGER column: the core measures in fractions of a millisecond.
  durationMs: (value) => Math.round(value as number),
};

function codecOf(field: CallField): Codec {
  const declared = CallRecordSchema.shape[field] as z.ZodType;
  const optional = declared.safeParse(undefined).success;
  let schema = declared;
  while (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault || schema instanceof z.ZodNullable) schema = schema.unwrap() as z.ZodType;
  let read: z.ZodType;
  let write: (value: unknown) => unknown;
  if (schema instanceof z.ZodString || schema instanceof z.ZodNumber || schema instanceof z.ZodEnum || schema instanceof z.ZodLiteral) {
    read = schema;
    write = (value) => value;
  } else if (schema instanceof z.ZodBoolean) {
    read = z.number().transform((value) => value !== 0);
    write = (value) => (value ? 1 : 0);
  } else {
    read = json(schema);
    write = (value) => JSON.stringify(value);
  }
  const written = WRITE_EXCEPTIONS[field] ?? write;
  return {
    field,
    column: callColumnOf(field),
    read: optional ? read.nullable() : read,
    write: (value) => (value === undefined || value === null ? null : written(value)),
  };
}

const CODECS: readonly Codec[] = CALL_FIELDS.map(codecOf);
const END_FIELDS: ReadonlySet<CallField> = new Set(CALL_END_FIELDS);
/** The fields of a call in progress: all but its end. */
const SO_FAR = CODECS.filter((codec) => !END_FIELDS.has(codec.field));

/** A column as read: its field's value, null where the field may be missing. */
type ColumnRead<F extends CallField> = z.ZodType<Exclude<CallSummary[F], undefined> | (undefined extends CallSummary[F] ? null : never)>;

/**
 * Every column of an ended call's row, checked as read (the history's listing reads some of these
 * too). Only for rows with `ended_at IS NOT NULL`: a call in progress has no end yet (see inProgress()).
 */
export const CALL_ROW = Object.fromEntries(CODECS.map((codec) => [codec.column, codec.read])) as {
  readonly [F in CallField as CallColumnOf<F>]-?: ColumnRead<F>;
};

/** The record a row's columns hold, in the record's order; a missing field is there, undefined. */
function recordOf(row: Readonly<Record<string, unknown>>, codecs: readonly Codec[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const { field, column } of codecs) record[field] = row[column] ?? undefined;
  return record;
}

const CallRow = z.object(CALL_ROW).transform((row): CallSummary => recordOf(row, CODECS) as CallSummary);

const ProgressRow = z
  .object({
    ...CALL_ROW,
    ...Object.fromEntries(CODECS.filter((codec) => END_FIELDS.has(codec.field)).map((codec) => [codec.column, z.null()])),
    revision: z.number(),
  })
  .transform((row): CallProgress => ({ ...(recordOf(row, SO_FAR) as Omit<CallProgress, 'revision'>), revision: row.revision }));

/** The columns of a call's record, in the record's order. */
const COLUMNS = CODECS.map((codec) => codec.column) as readonly CallColumn[];

/** The columns a later snapshot of the same call replaces: all but its id. */
const REPLACED = [...COLUMNS.filter((column) => column !== 'call_id'), 'revision', 'cost_usd'] as const;

/** The row of a call's record as the table holds it (for bulk writers: the bench's and tests' seeds). */
export function callRowOf(call: CallProgress): Insertable<CallsTable> {
  const record = call as Readonly<Record<string, unknown>>;
  return {
    ...(Object.fromEntries(CODECS.map((codec) => [codec.column, codec.write(record[codec.field])])) as Omit<Insertable<CallsTable>, 'cost_usd' | 'revision'>),
    // From the turns at each write: the column never disagrees with the turns it sums.
    cost_usd: callCostUsd(call.turns),
    revision: call.revision,
  };
}

/**
 * The `calls` table: one row per call, by its call id — written while the call goes on and when it
 * ends. The readers that give a CallSummary see ended calls only.
 */
export class CallRepository {
  /**
   * `owner`: the replica writing through this repository (its rows name it while in progress), and
   * the dialect, for the database's clock. A reader needs neither.
   */
  constructor(
    private readonly db: Db,
    private readonly writer?: { readonly owner: string; readonly dialect: Dialect },
  ) {}

  /**
   * Stores this snapshot of the call, unless the row holds a newer one: snapshots may be written
   * out of order (a slow write overtaken by the next), and the highest revision wins. The guard is
   * the upsert's own WHERE, so it holds across awaits and processes without a transaction.
   */
  async save(call: CallProgress): Promise<void> {
    await this.saveAll([call]);
  }

  /** Several calls' snapshots in one statement (each call once): as `save`, one round trip. */
  async saveAll(calls: readonly CallProgress[]): Promise<void> {
    if (calls.length === 0) return;
    await this.db
      .insertInto('calls')
      .values(calls.map((call) => ({ ...callRowOf(call), owner: this.writer?.owner ?? null })))
      .onConflict((conflict) =>
        conflict
          .column('call_id')
          .doUpdateSet((eb) => Object.fromEntries([...REPLACED, 'owner' as const].map((column) => [column, eb.ref(`excluded.${column}`)])))
          .where('calls.revision', '<=', (eb) => eb.ref('excluded.revision')),
      )
      .execute();
  }

  /** The ended call with this call id. */
  async get(callId: string): Promise<CallSummary | undefined> {
    const row = await this.ended().where('call_id', '=', callId).executeTakeFirst();
    return row === undefined ? undefined : CallRow.parse(row);
  }

  /** Every ended call the service gave this session id, the earliest first (usually one). */
  async ofSessionId(sessionId: string): Promise<CallSummary[]> {
    const rows = await this.ended().where('session_id', '=', sessionId).orderBy('started_at').orderBy('call_id').execute();
    return rows.map((row) => CallRow.parse(row));
  }

  /**
   * The call a link names: its call id, or a session id — the latest call with it. A call stored
   * before calls had ids of their own has its session id as its call id.
   */
  async find(id: string): Promise<CallSummary | undefined> {
    return (await this.get(id)) ?? (await this.ofSessionId(id)).at(-1);
  }

  /** The latest ended calls first; `before` (an ended_at) pages on. */
  async listRecent(limit: number, before?: string): Promise<CallSummary[]> {
    let query = this.ended();
    if (before !== undefined) query = query.where('ended_at', '<', before);
    const rows = await query.orderBy('ended_at', 'desc').orderBy('call_id').limit(limit).execute();
    return rows.map((row) => CallRow.parse(row));
  }

  /** Calls ended since `since` (ISO) that have no report: a crash or kill came between the call and its report. */
  async withoutReport(since: string, limit: number): Promise<CallSummary[]> {
    const rows = await this.ended()
      .where('ended_at', '>=', since)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('reports').select('reports.call_id').whereRef('reports.call_id', '=', 'calls.call_id'))))
      .orderBy('ended_at')
      .orderBy('call_id')
      .limit(limit)
      .execute();
    return rows.map((row) => CallRow.parse(row));
  }

  /**
   * The latest call with this session id, ended or not, for a replica taking the call up; `ended`
   * unless it is in progress or was only cut off (its replica stopped while the service had it).
   */
  async latestOfSession(sessionId: string): Promise<{ record: CallProgress; ended: boolean } | undefined> {
    const row = await this.db
      .selectFrom('calls')
      .select([...COLUMNS, 'revision'])
      .where('session_id', '=', sessionId)
      .orderBy('started_at', 'desc')
      .orderBy('revision', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    const { ended_at: endedAt, end_reason: endReason, duration_ms: _duration, ...rest } = row;
    const record = ProgressRow.parse({ ...rest, ended_at: null, duration_ms: null, end_reason: null });
    return { record, ended: endedAt !== null && endReason !== 'cut_off' };
  }

  /** Calls whose row has no end yet, the oldest first: in progress, or cut off by a stop of Hotline. */
  async inProgress(limit: number): Promise<CallProgress[]> {
    const rows = await this.inProgressRows().limit(limit).execute();
    return rows.map((row) => ProgressRow.parse(row));
  }

  /**
   * At this replica's start: the calls its earlier start left in progress (and those no replica
   * named, written before replicas had names). Another replica's calls are its own to settle.
   */
  async leftBehind(limit: number): Promise<CallProgress[]> {
    const owner = this.writerOf('leftBehind').owner;
    const rows = await this.inProgressRows()
      .where((eb) => eb.or([eb('owner', '=', owner), eb('owner', 'is', null)]))
      .limit(limit)
      .execute();
    return rows.map((row) => ProgressRow.parse(row));
  }

  /** Calls in progress whose replica has stopped beating (killed, or its machine gone) for `deadAfterMs`. */
  async orphaned(limit: number, deadAfterMs: number): Promise<(CallProgress & { owner: string })[]> {
    const writer = this.writerOf('orphaned');
    const rows = await this.inProgressRows()
      .select('owner')
      .where('owner', 'is not', null)
      .where('owner', '!=', writer.owner)
      .where(replicaDead(writer, 'calls.owner', deadAfterMs))
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...ProgressRow.parse(row), owner: row.owner! }));
  }

  /** Takes a dead replica's call in progress over; false when another replica took it first (or it ended). */
  async claim(callId: string, from: string): Promise<boolean> {
    const result = await this.db
      .updateTable('calls')
      .set({ owner: this.writerOf('claim').owner })
      .where('call_id', '=', callId)
      .where('owner', '=', from)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * This replica handed its call in progress to `to` (stopping): the row names the new holder, so
   * this replica's next start leaves it alone. A row `to` has written already names it.
   */
  async passTo(callId: string, to: string): Promise<void> {
    await this.db
      .updateTable('calls')
      .set({ owner: to })
      .where('call_id', '=', callId)
      .where('owner', '=', this.writerOf('passTo').owner)
      .where('ended_at', 'is', null)
      .execute();
  }

  private inProgressRows() {
    return this.db.selectFrom('calls').select([...COLUMNS, 'revision']).where('ended_at', 'is', null).orderBy('started_at').orderBy('call_id');
  }

  private writerOf(what: string): { readonly owner: string; readonly dialect: Dialect } {
    if (!this.writer) throw new Error(`CallRepository.${what} needs the replica it writes for`);
    return this.writer;
  }

  private ended() {
    return this.db.selectFrom('calls').select(COLUMNS).where('ended_at', 'is not', null);
  }
}
