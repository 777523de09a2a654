import { sql, type RawBuilder } from 'kysely';
import { z } from 'zod';
import { CALL_END_REASONS } from '../call/ports/call-summary.js';
import { jsonSql, type JsonSql } from './json-sql.js';
import type { Store } from './store.js';

/** Nearest-rank percentiles of one measure; null where nothing was measured. */
export interface Percentiles {
  readonly p50: number | null;
  readonly p95: number | null;
}

export interface HourStats {
  /** "2026-11-23 05:00", UTC. */
  readonly label: string;
  readonly calls: number;
}

export interface DayStats {
  /** "2026-11-23", UTC. */
  readonly label: string;
  readonly calls: number;
  /** Over every turn of the calls that ended that day. */
  readonly firstSpeakMs: Percentiles;
  readonly llmFirstTokenMs: Percentiles;
  readonly turns: number;
  readonly bargeIns: number;
  /** Barge-ins per turn; null on a day without turns. */
  readonly bargeInRate: number | null;
}

export interface OutcomeStats {
  /** A CALL_END_REASONS value, or whatever else a row holds (shown as it is rather than hidden). */
  readonly reason: string;
  readonly calls: number;
}

/** What the dashboard's charts show. Plain JSON: the page inlines it for the browser. */
export interface ChartData {
  /** ISO time the numbers were taken. */
  readonly at: string;
  /** The rolling 24 hours up to `at`. */
  readonly last24h: {
    readonly calls: number;
    readonly firstSpeakP95Ms: number | null;
    readonly bargeInRate: number | null;
  };
  /** The last 48 hours, the current one last; every hour present. */
  readonly hours: readonly HourStats[];
  /** How many days `days` and `outcomes` cover. */
  readonly dayCount: DayRange;
  /** The last `dayCount` days, today last; every day present. */
  readonly days: readonly DayStats[];
  /** Calls per end reason over the same days, most first; reasons without calls left out. */
  readonly outcomes: readonly OutcomeStats[];
}

const HOURS = 48;
/** The day ranges the charts offer; the default first. */
export const DAY_RANGES = [30, 7, 90] as const;
export type DayRange = (typeof DAY_RANGES)[number];
/** Ended days kept counted: the longest range. */
const KEPT_DAYS = Math.max(...DAY_RANGES);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

// Every query below selects rows by a range of ended_at, so it reads the calls_by_end index
// and then only the calls of the window: the cost follows the window, not the table. A call in
// progress (ended_at NULL) is in no range.
// Buckets are prefixes of ended_at: the core writes it with toISOString (UTC, "Z"), so
// the first 13 characters are the hour and the first 10 the day, and text order is time order.
// Prefix lengths are numbers of ours, written into the SQL: PostgreSQL takes a grouped expression
// with a parameter in it for another expression than the same one selected.

function countByHour(range: Range) {
  return sql`SELECT substr(ended_at, 1, 13) AS bucket, COUNT(*) AS calls
    FROM calls WHERE ended_at >= ${range.since} AND ended_at < ${range.until} GROUP BY substr(ended_at, 1, 13)`;
}

function totalsByDay(json: JsonSql, range: Range) {
  return sql`SELECT substr(ended_at, 1, 10) AS bucket, COUNT(*) AS calls,
    SUM(barge_ins) AS barge_ins, SUM(${json.arrayLength(sql.ref('turns'))}) AS turns
    FROM calls WHERE ended_at >= ${range.since} AND ended_at < ${range.until} GROUP BY substr(ended_at, 1, 10)`;
}

function totals(json: JsonSql, range: Range) {
  return sql`SELECT COUNT(*) AS calls, COALESCE(SUM(barge_ins), 0) AS barge_ins,
    COALESCE(SUM(${json.arrayLength(sql.ref('turns'))}), 0) AS turns
    FROM calls WHERE ended_at >= ${range.since} AND ended_at < ${range.until}`;
}

function outcomesByDay(range: Range) {
  return sql`SELECT substr(ended_at, 1, 10) AS bucket, end_reason AS reason, COUNT(*) AS calls
    FROM calls WHERE ended_at >= ${range.since} AND ended_at < ${range.until} GROUP BY substr(ended_at, 1, 10), end_reason`;
}

/**
 * p50 and p95 of both turn measures per bucket, by nearest rank: the value at rank ceil(p·n/100)
 * of the bucket's sorted values, written (p·n + 99) / 100 in integer arithmetic because SQLite's
 * ceil() exists only in builds with the math functions. `length` is the bucket's prefix length.
 * MATERIALIZED: both measures come from one read of the window's turns, not one each.
 */
function percentiles(json: JsonSql, range: Range, length: 0 | 10) {
  const prefix = sql`substr(c.ended_at, 1, ${sql.lit(length)})`;
  return sql`WITH turn AS MATERIALIZED (
      SELECT ${prefix} AS bucket, t.value AS value
      FROM calls c, ${json.eachElement(sql.ref('c.turns'), 't')}
      WHERE c.ended_at >= ${range.since} AND c.ended_at < ${range.until}
    ), measured AS (
      SELECT bucket, 'firstSpeakMs' AS measure, ${json.memberNumber(sql.ref('value'), 'firstSpeakMs')} AS ms FROM turn
      UNION ALL
      SELECT bucket, 'llmFirstTokenMs', ${json.memberNumber(sql.ref('value'), 'llmFirstTokenMs')} FROM turn
    ), ranked AS (
      SELECT bucket, measure, ms,
        ROW_NUMBER() OVER (PARTITION BY bucket, measure ORDER BY ms) AS place,
        COUNT(*) OVER (PARTITION BY bucket, measure) AS n
      FROM measured WHERE ms IS NOT NULL
    )
    SELECT bucket, measure,
      MAX(CASE WHEN place = (50 * n + 99) / 100 THEN ms END) AS p50,
      MAX(CASE WHEN place = (95 * n + 99) / 100 THEN ms END) AS p95
    FROM ranked GROUP BY bucket, measure`;
}

/** Every query of a window, as `charts` runs them: for the test that reads their plans. */
export function windowQueries(dialect: Store['dialect'], range: Range): RawBuilder<unknown>[] {
  const json = jsonSql(dialect);
  return [countByHour(range), totalsByDay(json, range), totals(json, range), outcomesByDay(range), percentiles(json, range, 10), percentiles(json, range, 0)];
}

const BucketCount = z.object({ bucket: z.string(), calls: z.number() });
const DayTotals = z.object({ bucket: z.string(), calls: z.number(), barge_ins: z.number(), turns: z.number() });
const Totals = z.object({ calls: z.number(), barge_ins: z.number(), turns: z.number() });
const DayOutcome = z.object({ bucket: z.string(), reason: z.string(), calls: z.number() });
const PercentileRow = z.object({
  bucket: z.string(),
  measure: z.enum(['firstSpeakMs', 'llmFirstTokenMs']),
  p50: z.number(),
  p95: z.number(),
});
type PercentileRow = z.infer<typeof PercentileRow>;

export interface Range {
  since: string;
  until: string;
}

const NO_VALUES: Percentiles = { p50: null, p95: null };

/** One day as counted: its numbers, and its calls per end reason (the 30 days' outcomes are their sum). */
interface CountedDay {
  readonly stats: DayStats;
  readonly outcomes: ReadonlyMap<string, number>;
}

/**
 * The numbers behind the dashboard's charts, counted by the database over
 * bounded windows of ended calls.
 *
 * A day that has ended is counted once and kept: a call is stored as ended
 * when it ends, so no later call lands in a past day (but for a session the
 * voice service redelivers and that ends again, counted on its first day too
 * until a restart: one call, rarely). Counting 30 days of turns through the
 * JSON functions takes most of a second at a thousand calls a day: off the
 * event loop now, but still a second of the database's (SQLite's one thread
 * is the calls' too); kept, a page view counts only today and the last 24 hours.
 */
export class CallStats {
  private readonly json: JsonSql;
  private readonly endedDays = new Map<string, CountedDay>();

  constructor(private readonly store: Store) {
    this.json = jsonSql(store.dialect);
  }

  async charts(now: Date, dayCount: DayRange = DAY_RANGES[0]): Promise<ChartData> {
    const nowMs = now.getTime();
    const hourStart = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
    const dayStart = Math.floor(nowMs / DAY_MS) * DAY_MS;
    const hourWindow = range(hourStart - (HOURS - 1) * HOUR_MS, hourStart + HOUR_MS);
    const dayWindow = range(dayStart - (dayCount - 1) * DAY_MS, dayStart + DAY_MS);
    // Up to and including `now`: the window's end is exclusive.
    const lastDay = range(nowMs - DAY_MS, nowMs + 1);
    const oldestKept = new Date(dayStart - (KEPT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);

    const [perHourRows, counted, recentRows, recentPercentiles] = await Promise.all([
      this.rows(countByHour(hourWindow), BucketCount),
      this.days(buckets(dayWindow, DAY_MS, 10), dayWindow.until, oldestKept),
      this.rows(totals(this.json, lastDay), Totals),
      // Prefix length 0: every call of the window falls in the one bucket ''.
      this.percentileRows(lastDay, 0),
    ]);

    const perHour = new Map(perHourRows.map((r) => [r.bucket, r.calls]));
    const hours = buckets(hourWindow, HOUR_MS, 13).map((bucket) => ({ label: `${bucket.replace('T', ' ')}:00`, calls: perHour.get(bucket) ?? 0 }));

    const days = counted.map((day) => day.stats);
    const outcomeCounts = new Map<string, number>();
    for (const day of counted) for (const [reason, calls] of day.outcomes) outcomeCounts.set(reason, (outcomeCounts.get(reason) ?? 0) + calls);
    const order = (reason: string): number => {
      const index = (CALL_END_REASONS as readonly string[]).indexOf(reason);
      return index === -1 ? CALL_END_REASONS.length : index;
    };
    const outcomes = [...outcomeCounts]
      .map(([reason, calls]) => ({ reason, calls }))
      .sort((a, b) => b.calls - a.calls || order(a.reason) - order(b.reason) || a.reason.localeCompare(b.reason));

    // One row always: COUNT and the COALESCEd sums over no rows are 0.
    const recent = recentRows[0]!;
    return {
      at: now.toISOString(),
      last24h: {
        calls: recent.calls,
        firstSpeakP95Ms: pick(recentPercentiles, '', 'firstSpeakMs').p95,
        bargeInRate: rate(recent.barge_ins, recent.turns),
      },
      hours,
      dayCount,
      days,
      outcomes,
    };
  }

  /**
   * The days `labels` names (oldest first, the last one today), counting only those not kept from
   * before; days older than `oldestKept` are forgotten, so switching between ranges costs nothing twice.
   * Two page views at once may both count an ended day: both keep the same figures, so the later
   * write changes nothing (no lock needed).
   */
  private async days(labels: readonly string[], until: string, oldestKept: string): Promise<CountedDay[]> {
    const today = labels.at(-1)!;
    for (const label of this.endedDays.keys()) if (label < oldestKept || label >= today) this.endedDays.delete(label);
    const firstToCount = labels.find((label) => !this.endedDays.has(label))!;
    const span: Range = { since: `${firstToCount}T00:00:00.000Z`, until };

    const [totalRows, outcomeRows, percentiles] = await Promise.all([
      this.rows(totalsByDay(this.json, span), DayTotals),
      this.rows(outcomesByDay(span), DayOutcome),
      this.percentileRows(span, 10),
    ]);
    const totalsOf = new Map(totalRows.map((r) => [r.bucket, r]));
    const outcomes = new Map<string, Map<string, number>>();
    for (const row of outcomeRows) {
      const day = outcomes.get(row.bucket) ?? new Map<string, number>();
      day.set(row.reason, row.calls);
      outcomes.set(row.bucket, day);
    }

    return labels.map((label) => {
      const kept = this.endedDays.get(label);
      if (kept !== undefined) return kept;
      const day = totalsOf.get(label);
      const turns = day?.turns ?? 0;
      const bargeIns = day?.barge_ins ?? 0;
      const counted: CountedDay = {
        stats: {
          label,
          calls: day?.calls ?? 0,
          firstSpeakMs: pick(percentiles, label, 'firstSpeakMs'),
          llmFirstTokenMs: pick(percentiles, label, 'llmFirstTokenMs'),
          turns,
          bargeIns,
          bargeInRate: rate(bargeIns, turns),
        },
        outcomes: outcomes.get(label) ?? new Map<string, number>(),
      };
      if (label < today) this.endedDays.set(label, counted);
      return counted;
    });
  }

  /** Keyed by bucket and measure. */
  private async percentileRows(span: Range, length: 0 | 10): Promise<Map<string, PercentileRow>> {
    const rows = await this.rows(percentiles(this.json, span, length), PercentileRow);
    return new Map(rows.map((row) => [`${row.bucket}|${row.measure}`, row]));
  }

  private async rows<S extends z.ZodType>(query: RawBuilder<unknown>, schema: S): Promise<z.output<S>[]> {
    const { rows } = await query.execute(this.store.db);
    return rows.map((row) => schema.parse(row));
  }
}

function rate(bargeIns: number, turns: number): number | null {
  return turns === 0 ? null : bargeIns / turns;
}

function pick(rows: Map<string, PercentileRow>, bucket: string, measure: PercentileRow['measure']): Percentiles {
  const row = rows.get(`${bucket}|${measure}`);
  return row === undefined ? NO_VALUES : { p50: row.p50, p95: row.p95 };
}

function range(sinceMs: number, untilMs: number): Range {
  return { since: new Date(sinceMs).toISOString(), until: new Date(untilMs).toISOString() };
}

/** Every bucket of the window, oldest first, as the prefix of ended_at that names it. */
function buckets(span: Range, stepMs: number, length: number): string[] {
  const out: string[] = [];
  for (let t = Date.parse(span.since); t < Date.parse(span.until); t += stepMs) out.push(new Date(t).toISOString().slice(0, length));
  return out;
}
