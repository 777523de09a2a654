import { sql, type RawBuilder } from 'kysely';
import { z } from 'zod';
import type { CallEndReason, CallSummary } from '../call/ports/call-summary.js';
import { DEMO_MODEL_ID } from '../llm/scripted-contract.js';
import { CALL_ROW } from './call-repository.js';
import { jsonSql, type JsonSql } from './json-sql.js';
import { FieldValuesSchema, type FieldValues } from './report-repository.js';
import type { Store } from './store.js';

/** Which ended calls to list (a call in progress is never listed: the live view shows it). Every part is optional; the parts combine with AND. */
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
  /**
   * Where numbers are shown masked (maskedQuery in privacy/mask-number.ts): calls whose number as
   * shown — the caller's of an inbound call, the called one's of an outbound — masks to this. Only
   * the digits the mask shows and how many there are decide a match, never one it hides.
   */
  readonly maskedNumber?: string | undefined;
  /** Words found in the report's summary, letters in either case (on SQLite only ASCII's; see json-sql.ts). */
  readonly text?: string | undefined;
  /** A structured field of the call's report equals this value ("true"/"false" match booleans). */
  readonly field?: { readonly name: string; readonly value: string } | undefined;
  /** USD: calls whose LLM cost is known and at least this (a call of unknown cost is never matched by a cost). */
  readonly costAtLeast?: number | undefined;
  /** USD: calls whose LLM cost is known and at most this. */
  readonly costAtMost?: number | undefined;
}

/** What the matching calls cost together: every one of them, not only the page shown. */
export interface CostTotal {
  /** The known costs summed, in USD; null when no matching call's cost is known. */
  readonly usd: number | null;
  /**
   * Matching calls on a real model whose cost is not known (see callCostUsd in llm/prices.ts): left
   * out of `usd`, never counted as $0. A price is missing, which whoever pays the bill should hear.
   */
  readonly unknown: number;
  /** Matching calls on the built-in demo model: no cost by design, so counted apart from `unknown` and out of `usd` too. */
  readonly demo: number;
}

/** Where the previous batch of an export ended. */
export interface BatchCursor {
  readonly endedAt: string;
  readonly callId: string;
}

/** One call as the history lists it: its record's basics, and its report's. */
export type CallListing = Pick<CallSummary, 'callId' | 'sessionId' | 'direction' | 'startedAt' | 'endedAt' | 'durationMs' | 'endReason' | 'bargeIns'> & {
  readonly from: string | null;
  readonly to: string | null;
  /** How many turns it had. */
  readonly turns: number;
  readonly campaign: string | null;
  readonly summary: string | null;
  readonly fields: FieldValues | null;
  /** What its LLM turns cost in USD; null when not known. */
  readonly costUsd: number | null;
  /** Its turns asked only the built-in demo model: its cost is null because nothing was paid, not because a price is missing. */
  readonly demo: boolean;
};

export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const ListingRow = z
  .object({
    // Only ended calls are listed: their end is set (whatever a row in progress may hold).
    call_id: CALL_ROW.call_id,
    session_id: CALL_ROW.session_id,
    direction: CALL_ROW.direction,
    from_number: CALL_ROW.from_number,
    to_number: CALL_ROW.to_number,
    started_at: CALL_ROW.started_at,
    ended_at: CALL_ROW.ended_at,
    duration_ms: CALL_ROW.duration_ms,
    end_reason: CALL_ROW.end_reason,
    turn_count: z.number(),
    barge_ins: CALL_ROW.barge_ins,
    campaign: z.string().nullable(),
    summary: z.string().nullable(),
    fields: z.string().nullable(),
    cost_usd: z.number().nullable(),
    // 0 or 1 on both databases: a CASE, not a boolean, which SQLite would not give as one.
    demo: z.number(),
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
      costUsd: row.cost_usd,
      demo: row.demo === 1,
    }),
  );

const Totals = z.object({ n: z.number(), cost: z.number().nullable(), priced: z.number(), demo: z.number() });

/**
 * Slack in a cost filter's bounds, in USD: a cost is a sum of doubles, and $0.01 typed as the least
 * must find the call whose turns added up to 0.009999999999999998.
 */
const COST_SLACK = 1e-9;
const Name = z.object({ name: z.string() });

/**
 * The history's queries: ended calls filtered, counted and paged, newest
 * first, on SQLite or PostgreSQL alike. Filters are bound parameters, never
 * SQL text; a field name is checked against FIELD_NAME before it is used.
 */
export class CallSearch {
  private readonly json: JsonSql;

  constructor(private readonly store: Store) {
    this.json = jsonSql(store.dialect);
  }

  /** One page of the calls that match, how many match in all, and what they all cost together. */
  async page(filter: CallFilter, limit: number, offset: number): Promise<{ calls: CallListing[]; total: number; cost: CostTotal }> {
    const where = this.whereOf(filter);
    // The sum rides on the count's one pass over the matching rows: no second query for it.
    const [totals, rows] = await Promise.all([
      sql`SELECT COUNT(*) AS n, SUM(c.cost_usd) AS cost, COUNT(c.cost_usd) AS priced, COUNT(CASE WHEN ${this.demoCall()} THEN 1 END) AS demo
        FROM calls c LEFT JOIN reports r ON r.call_id = c.call_id WHERE ${where}`.execute(this.store.db),
      sql`${this.select()} WHERE ${where} ORDER BY c.ended_at DESC, c.call_id DESC LIMIT ${limit} OFFSET ${offset}`.execute(this.store.db),
    ]);
    const { n, cost, priced, demo } = Totals.parse(totals.rows[0]);
    return { calls: rows.rows.map((row) => ListingRow.parse(row)), total: n, cost: { usd: priced === 0 ? null : cost, unknown: n - priced - demo, demo } };
  }

  /** The next `size` matching calls after `after` (the last of the previous batch), newest first: an export, a batch at a time. */
  async batch(filter: CallFilter, after: BatchCursor | undefined, size: number): Promise<CallListing[]> {
    const clauses = [this.whereOf(filter)];
    // Row values compare on both databases; (ended_at, call_id) is the order's key, so no call is listed twice or missed.
    if (after) clauses.push(sql`(c.ended_at, c.call_id) < (${after.endedAt}, ${after.callId})`);
    const { rows } = await sql`${this.select()} WHERE ${sql.join(clauses, sql` AND `)}
      ORDER BY c.ended_at DESC, c.call_id DESC LIMIT ${size}`.execute(this.store.db);
    return rows.map((row) => ListingRow.parse(row));
  }

  /** The report field names seen in the latest reports, for the history's filter. */
  async fieldNames(): Promise<string[]> {
    // Only objects: a report's fields always are one, and json_object_keys fails on anything else.
    const { rows } = await sql`SELECT DISTINCT j.key AS name
      FROM (SELECT fields FROM reports WHERE fields LIKE '{%' ORDER BY created_at DESC LIMIT 200) r, ${this.json.eachKey(sql.ref('r.fields'), 'j')}`.execute(
      this.store.db,
    );
    // Sorted here: in code-unit order on both databases, whatever PostgreSQL's collation.
    return rows
      .map((row) => Name.parse(row).name)
      .filter((name) => FIELD_NAME.test(name))
      .sort();
  }

  private select(): RawBuilder<unknown> {
    const { json } = this;
    return sql`SELECT c.call_id, c.session_id, c.direction, c.from_number, c.to_number, c.started_at, c.ended_at, c.duration_ms,
      c.end_reason, ${json.arrayLength(sql.ref('c.turns'))} AS turn_count, c.barge_ins, ${json.memberText(sql.ref('c.tags'), 'campaign')} AS campaign,
      r.summary, r.fields, c.cost_usd, CASE WHEN ${this.demoCall()} THEN 1 ELSE 0 END AS demo
      FROM calls c LEFT JOIN reports r ON r.call_id = c.call_id`;
  }

  /**
   * A call on the built-in demo model: no known cost, some turn asked the demo model and none asked
   * another (onDemoModel in llm/prices.ts, in SQL). Read from the turns rather than kept in a column:
   * only calls of unknown cost are looked into, and a store on a priced model has few of them.
   */
  private demoCall(): RawBuilder<boolean> {
    const { json } = this;
    const model = (alias: string) => json.memberText(sql.ref(`${alias}.value`), 'model');
    return sql<boolean>`(c.cost_usd IS NULL
      AND EXISTS (SELECT 1 FROM ${json.eachElement(sql.ref('c.turns'), 'dt')} WHERE ${model('dt')} = ${DEMO_MODEL_ID})
      AND NOT EXISTS (SELECT 1 FROM ${json.eachElement(sql.ref('c.turns'), 'ot')} WHERE ${model('ot')} <> ${DEMO_MODEL_ID}))`;
  }

  /** The filter's parts, joined with AND; never empty: a call in progress is not history. */
  private whereOf(filter: CallFilter): RawBuilder<unknown> {
    const { json } = this;
    const clauses: RawBuilder<unknown>[] = [sql`c.ended_at IS NOT NULL`];
    if (filter.since) clauses.push(sql`c.ended_at >= ${filter.since}`);
    if (filter.until) clauses.push(sql`c.ended_at < ${filter.until}`);
    if (filter.direction) clauses.push(sql`c.direction = ${filter.direction}`);
    if (filter.endReason) clauses.push(sql`c.end_reason = ${filter.endReason}`);
    if (filter.campaign) clauses.push(sql`${json.memberText(sql.ref('c.tags'), 'campaign')} = ${filter.campaign}`);
    const digits = filter.number?.replace(/\D/g, '');
    // Digits only: nothing in the pattern is a LIKE wildcard.
    if (digits) clauses.push(sql`(c.from_number LIKE ${`%${digits}%`} OR c.to_number LIKE ${`%${digits}%`})`);
    if (filter.maskedNumber !== undefined) clauses.push(maskedMatch(filter.maskedNumber));
    const text = filter.text?.trim();
    if (text) clauses.push(json.containsWords(sql.ref('r.summary'), text));
    if (filter.field && FIELD_NAME.test(filter.field.name)) clauses.push(json.memberEquals(sql.ref('r.fields'), filter.field.name, filter.field.value));
    // NULL (a cost not known) compares as neither: only calls with a known cost are found by one.
    const { costAtLeast: least, costAtMost: most } = filter;
    if (least !== undefined && Number.isFinite(least)) clauses.push(sql`c.cost_usd >= ${least - COST_SLACK}`);
    if (most !== undefined && Number.isFinite(most)) clauses.push(sql`c.cost_usd <= ${most + COST_SLACK}`);
    return sql.join(clauses, sql` AND `);
  }
}

/**
 * The shown number's digits LIKE the mask with each hidden digit a `_`: its length, first four and
 * last two digits decide, as maskNumber shows them. The separators a number is written with are
 * dropped first; anything else left in it (a letter) counts as one more character, never as a digit.
 */
function maskedMatch(masked: string): RawBuilder<unknown> {
  // Digits and bullets only (maskedQuery), so the pattern holds no wildcard but the ones put here.
  const pattern = masked.replace(/[^\d•]/g, '').replaceAll('•', '_');
  let digits: RawBuilder<unknown> = sql`(CASE WHEN c.direction = 'inbound' THEN c.from_number ELSE c.to_number END)`;
  for (const separator of ['+', ' ', '-', '(', ')', '.', '/']) digits = sql`REPLACE(${digits}, ${separator}, '')`;
  return sql`${digits} LIKE ${pattern}`;
}
