import { z } from 'zod';
import { TOOL_OUTCOMES } from '../call/ports/business-tools.js';
// The core's own lists: a row read back is checked against them, and a reason the core adds is known here at once.
import { CALL_END_REASONS as END_REASONS, type CallSummary } from '../call/ports/call-summary.js';
import type { Database } from './database.js';

const Strings = z.record(z.string(), z.string());

/** A JSON column: text in the row, checked by `schema` when read. */
function json<S extends z.ZodType>(schema: S) {
  return z.string().transform((text, ctx): z.output<S> => {
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

const TurnJson = z.object({
  at: z.string(),
  llmRequestMs: z.number().optional(),
  llmFirstTokenMs: z.number().optional(),
  firstSpeakMs: z.number().optional(),
  playbackStartedMs: z.number().optional(),
  playbackEndedMs: z.number().optional(),
  interrupted: z.boolean(),
  failed: z.boolean(),
});

const ToolRunJson = z.object({
  name: z.string(),
  arguments: z.string(),
  outcome: z.enum(TOOL_OUTCOMES),
  durationMs: z.number(),
  reused: z.boolean(),
});

/** The columns every read of a call row shares (the history's listing reads these too). */
export const CALL_ROW_BASICS = {
  call_id: z.string(),
  session_id: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from_number: z.string().nullable(),
  to_number: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string(),
  duration_ms: z.number(),
  end_reason: z.enum(END_REASONS),
};

const CallRow = z
  .object({
    ...CALL_ROW_BASICS,
    service_reason: z.string().nullable(),
    turns: json(z.array(TurnJson)),
    barge_ins: z.number(),
    tool_runs: json(z.array(ToolRunJson)),
    variables: json(Strings).nullable(),
    tags: json(Strings).nullable(),
    transcript_file: z.string(),
  })
  .transform(
    (row): CallSummary => ({
      callId: row.call_id,
      sessionId: row.session_id,
      direction: row.direction,
      from: row.from_number ?? undefined,
      to: row.to_number ?? undefined,
      startedAt: row.started_at,
      endedAt: row.ended_at,
      durationMs: row.duration_ms,
      endReason: row.end_reason,
      serviceReason: row.service_reason ?? undefined,
      turns: row.turns,
      bargeIns: row.barge_ins,
      toolRuns: row.tool_runs,
      variables: row.variables ?? undefined,
      tags: row.tags ?? undefined,
      transcriptFile: row.transcript_file,
    }),
  );

const COLUMNS = `call_id, session_id, direction, from_number, to_number, started_at, ended_at, duration_ms, end_reason,
  service_reason, turns, barge_ins, tool_runs, variables, tags, transcript_file`;

/** The `calls` table: one row per ended call, as the call core summed it up, by its call id. */
export class CallRepository {
  private readonly upsert;
  private readonly one;
  private readonly ofSession;
  private readonly recent;
  private readonly recentBefore;
  private readonly unreported;

  constructor(db: Database) {
    // A call is stored once, as it ended; storing it again (the same call id) replaces the row.
    this.upsert = db.sql.prepare(
      `INSERT INTO calls (${COLUMNS}) VALUES (@call_id, @session_id, @direction, @from_number, @to_number, @started_at, @ended_at,
        @duration_ms, @end_reason, @service_reason, @turns, @barge_ins, @tool_runs, @variables, @tags, @transcript_file)
       ON CONFLICT (call_id) DO UPDATE SET
        session_id = excluded.session_id,
        direction = excluded.direction, from_number = excluded.from_number, to_number = excluded.to_number,
        started_at = excluded.started_at, ended_at = excluded.ended_at, duration_ms = excluded.duration_ms,
        end_reason = excluded.end_reason, service_reason = excluded.service_reason, turns = excluded.turns,
        barge_ins = excluded.barge_ins, tool_runs = excluded.tool_runs, variables = excluded.variables,
        tags = excluded.tags, transcript_file = excluded.transcript_file`,
    );
    this.one = db.sql.prepare<[string]>(`SELECT ${COLUMNS} FROM calls WHERE call_id = ?`);
    this.ofSession = db.sql.prepare<[string]>(`SELECT ${COLUMNS} FROM calls WHERE session_id = ? ORDER BY started_at, call_id`);
    this.recent = db.sql.prepare<[number]>(`SELECT ${COLUMNS} FROM calls ORDER BY ended_at DESC, call_id LIMIT ?`);
    this.recentBefore = db.sql.prepare<[string, number]>(
      `SELECT ${COLUMNS} FROM calls WHERE ended_at < ? ORDER BY ended_at DESC, call_id LIMIT ?`,
    );
    this.unreported = db.sql.prepare<[string, number]>(
      `SELECT ${COLUMNS} FROM calls c WHERE ended_at >= ? AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.call_id = c.call_id)
       ORDER BY ended_at LIMIT ?`,
    );
  }

  save(call: CallSummary): void {
    this.upsert.run({
      call_id: call.callId,
      session_id: call.sessionId,
      direction: call.direction,
      from_number: call.from ?? null,
      to_number: call.to ?? null,
      started_at: call.startedAt,
      ended_at: call.endedAt,
      duration_ms: Math.round(call.durationMs),
      end_reason: call.endReason,
      service_reason: call.serviceReason ?? null,
      turns: JSON.stringify(call.turns),
      barge_ins: call.bargeIns,
      tool_runs: JSON.stringify(call.toolRuns),
      variables: call.variables ? JSON.stringify(call.variables) : null,
      tags: call.tags ? JSON.stringify(call.tags) : null,
      transcript_file: call.transcriptFile,
    });
  }

  /** The call with this call id. */
  get(callId: string): CallSummary | undefined {
    const row = this.one.get(callId);
    return row === undefined ? undefined : CallRow.parse(row);
  }

  /** Every stored call the service gave this session id, the earliest first (usually one). */
  ofSessionId(sessionId: string): CallSummary[] {
    return this.ofSession.all(sessionId).map((row) => CallRow.parse(row));
  }

  /**
   * The call a link names: its call id, or a session id — the latest call with it. A call stored
   * before calls had ids of their own has its session id as its call id.
   */
  find(id: string): CallSummary | undefined {
    return this.get(id) ?? this.ofSessionId(id).at(-1);
  }

  /** The latest calls first; `before` (an ended_at) pages on. */
  listRecent(limit: number, before?: string): CallSummary[] {
    const rows = before === undefined ? this.recent.all(limit) : this.recentBefore.all(before, limit);
    return rows.map((row) => CallRow.parse(row));
  }

  /** Calls ended since `since` (ISO) that have no report: a crash or kill came between the call and its report. */
  withoutReport(since: string, limit: number): CallSummary[] {
    return this.unreported.all(since, limit).map((row) => CallRow.parse(row));
  }
}
