/**
 * The report of one call: what the call core summed up, the transcript read
 * back, and what the model made of it. Its JSON is the webhook's body and the
 * `reports.body` column, byte for byte.
 */
import { z } from 'zod';
import {
  CALL_FIELDS,
  CallRecordSchema,
  snakeCase,
  ToolRunSchema,
  type CallField,
  type CallSummary,
  type SnakeCase,
} from '../call/ports/call-record-schema.js';
import { FIELDS_STATUSES, FieldValuesSchema, type FieldValues } from '../store/report-repository.js';
import { addUsage, type TokenUsage } from '../llm/usage.js';
import { callCostUsd } from '../llm/prices.js';
import type { TranscriptLine } from './transcript-lines.js';

const Stat = z.object({ p50: z.number().nullable(), max: z.number().nullable() });

/** LLM tokens as the server counted them; `cached` and `reasoning` null where it did not say. */
const Tokens = z.object({ prompt: z.number(), cached: z.number().nullable(), completion: z.number(), reasoning: z.number().nullable() });

const TurnsReport = z.object({
  count: z.number(),
  interrupted: z.number(),
  failed: z.number(),
  llm_first_token_ms: Stat,
  first_speak_ms: Stat,
  tokens: Tokens.nullable(),
  /** What the turns' tokens cost, in USD (0 without a turn); null when not known: a counted turn's model had no price, or no server counted. */
  cost_usd: z.number().nullable(),
  each: z.array(
    z.object({
      at: z.string(),
      llm_first_token_ms: z.number().nullable(),
      first_speak_ms: z.number().nullable(),
      interrupted: z.boolean(),
      failed: z.boolean(),
      tokens: Tokens.nullable(),
      model: z.string().nullable(),
      cost_usd: z.number().nullable(),
      /** The passages of the business's documents the turn was given, and whether the reply used each; null with the knowledge base off. */
      knowledge: z
        .array(z.object({ source: z.string(), heading: z.string(), line: z.number(), page: z.number().nullable(), score: z.number(), used: z.boolean() }))
        .nullable(),
    }),
  ),
});

const ToolCalls = z.array(
  z.object({
    name: ToolRunSchema.shape.name,
    arguments: ToolRunSchema.shape.arguments,
    outcome: ToolRunSchema.shape.outcome,
    duration_ms: z.number(),
    reused: ToolRunSchema.shape.reused,
  }),
);

/**
 * The call's record in the report: every field of CallRecordSchema under its name in snake_case,
 * null where the call has none, in the record's order (but the session id first, as version 1
 * has always had it) — a field added to the record is a key added to the report. Turns and tool
 * runs are told in their own shape (`tool_calls`); where the transcript is kept, and the
 * conversation as heard (the transcript holds it), are not reported.
 */
const NOT_REPORTED = ['transcriptFile', 'conversation'] as const satisfies readonly CallField[];
type ReportedAsIs = Exclude<CallField, (typeof NOT_REPORTED)[number] | 'turns' | 'toolRuns'>;
const REPORTED: readonly CallField[] = (['sessionId', ...CALL_FIELDS.filter((field) => field !== 'sessionId')] as CallField[]).filter(
  (field) => !(NOT_REPORTED as readonly CallField[]).includes(field),
);

type Shape = typeof CallRecordSchema.shape;
/** A field's schema with "missing" said as null, as every key of the report is always present. */
type NullWhenMissing<S> = S extends z.ZodOptional<infer Inner> ? z.ZodNullable<Inner> : S;
type RecordShape = { [F in ReportedAsIs as SnakeCase<F>]: NullWhenMissing<Shape[F]> } & { turns: typeof TurnsReport; tool_calls: typeof ToolCalls };

function reportedSchema(field: CallField): [string, z.ZodType] {
  if (field === 'turns') return ['turns', TurnsReport];
  if (field === 'toolRuns') return ['tool_calls', ToolCalls];
  const schema = CallRecordSchema.shape[field] as z.ZodType;
  return [snakeCase(field), schema instanceof z.ZodOptional ? (schema as z.ZodOptional<z.ZodType>).unwrap().nullable() : schema];
}

const RECORD_SHAPE = Object.fromEntries(REPORTED.map(reportedSchema)) as RecordShape;

/**
 * The report as delivered (`version: 1`; a later version only adds keys). Every key is always
 * present; what is unknown is `null`. Times are ISO 8601 UTC, durations milliseconds.
 *
 * ```json
 * {
 *   "version": 1,
 *   "session_id": "c0ffee-1",                     // the voice service's id; it may use one again for a later call
 *   "call_id": "5b0e…",                           // Hotline's id of this call: unique, even when a session id is not
 *   "direction": "inbound",                       // or "outbound"
 *   "from": "4915…", "to": "4930…",               // null when the service sent none
 *   "started_at": "2026-11-22T03:03:55.823Z",
 *   "ended_at": "2026-11-22T03:05:01.611Z",
 *   "duration_ms": 65788,
 *   "end_reason": "transferred",                  // caller_hung_up | agent_hung_up | transferred | silence | error
 *                                                 // | shutdown | idle | voicemail | connection_lost
 *   "service_reason": "transfer",                 // session_end's own reason, or null
 *   "turns": {
 *     "count": 3, "interrupted": 1, "failed": 0,
 *     "llm_first_token_ms": { "p50": 412, "max": 980 },   // null/null when no turn had one
 *     "first_speak_ms": { "p50": 655, "max": 1210 },
 *     "tokens": { "prompt": 9120, "cached": 6144, "completion": 212, "reasoning": 0 },   // every turn's, summed; null if no
 *                                                                                      // server counted any
 *     "each": [ { "at": "…", "llm_first_token_ms": 412, "first_speak_ms": 655, "interrupted": false, "failed": false,
 *                 "tokens": { "prompt": 2980, "cached": 2048, "completion": 64, "reasoning": 0 } } ]   // or null
 *   },
 *   "barge_ins": 1,
 *   "tool_calls": [ { "name": "order_status", "arguments": "{\"order_number\":\"4711\"}",   // the model's JSON text
 *                     "outcome": "ok", "duration_ms": 130, "reused": false } ],            // ok | error | timeout
 *                                                                                          // | invalid | unavailable | aborted
 *   "variables": { "name": "Ada" },               // an outbound request's variables, or null
 *   "tags": { "campaign": "c1" },                 // an outbound request's tags, or null
 *   "language": "de",                             // the language the call ended in, or null (prompts without languages)
 *                                                 // (here any field the call's record gained since: see REPORTED)
 *   "summary": "Ada asked where order 4711 is …", // null unless fields_status is "ok"
 *   "fields": { "callback_wanted": false, "sentiment": "neutral" },   // report.md's fields, or null
 *   "fields_status": "ok",                        // ok | failed (fields_error says why) | skipped (no report.md)
 *   "fields_error": null,
 *   "transcript": [
 *     { "ts": "…", "role": "user", "text": "Where is my order?", "interrupted": false, "tool": null },
 *     { "ts": "…", "role": "tool", "text": "…", "interrupted": false, "tool": { "name": "order_status", "outcome": "ok" } }
 *   ]                                             // role: user | assistant | tool | event; the JSONL file's lines
 * }
 * ```
 */
export const CallReportSchema = z.object({
  version: z.literal(1),
  ...RECORD_SHAPE,
  summary: z.string().nullable(),
  fields: FieldValuesSchema.nullable(),
  fields_status: z.enum(FIELDS_STATUSES),
  fields_error: z.string().nullable(),
  transcript: z.array(
    z.object({
      ts: z.string(),
      role: z.enum(['user', 'assistant', 'tool', 'event']),
      text: z.string(),
      interrupted: z.boolean(),
      tool: z.object({ name: z.string(), outcome: z.string().nullable() }).nullable(),
    }),
  ),
});
export type CallReport = z.infer<typeof CallReportSchema>;

/** What became of the summary and fields. */
export type ReportContent =
  | { readonly status: 'ok'; readonly summary: string; readonly fields: FieldValues }
  | { readonly status: 'failed'; readonly error: string }
  | { readonly status: 'skipped' };

export function buildReport(call: CallSummary, transcript: readonly TranscriptLine[], content: ReportContent): CallReport {
  const ok = content.status === 'ok' ? content : undefined;
  const record = call as Readonly<Record<string, unknown>>;
  const reported = Object.fromEntries(REPORTED.map((field) => reportedValue(call, field, record[field]))) as z.infer<z.ZodObject<RecordShape>>;
  return {
    version: 1,
    ...reported,
    summary: ok?.summary ?? null,
    fields: ok?.fields ?? null,
    fields_status: content.status,
    fields_error: content.status === 'failed' ? content.error : null,
    transcript: transcript.map((line) => ({
      ts: line.ts,
      role: line.role,
      text: line.text,
      interrupted: line.interrupted,
      tool: line.tool ? { name: line.tool.name, outcome: line.tool.outcome } : null,
    })),
  };
}

/** A field of the call's record as the report has it: its key and value. */
function reportedValue(call: CallSummary, field: CallField, value: unknown): [string, unknown] {
  switch (field) {
    case 'turns':
      return ['turns', turnsReport(call)];
    case 'toolRuns':
      return [
        'tool_calls',
        call.toolRuns.map((run) => ({
          name: run.name,
          arguments: run.arguments,
          outcome: run.outcome,
          duration_ms: Math.round(run.durationMs),
          reused: run.reused,
        })),
      ];
    case 'durationMs':
      return ['duration_ms', Math.round(call.durationMs)];
    default:
      // A copy of an object (variables, tags): the report is the call's, not a view of it.
      return [snakeCase(field), value === undefined ? null : typeof value === 'object' && value !== null ? structuredClone(value) : value];
  }
}

function turnsReport(call: CallSummary): z.infer<typeof TurnsReport> {
  return {
    count: call.turns.length,
    interrupted: call.turns.filter((turn) => turn.interrupted).length,
    failed: call.turns.filter((turn) => turn.failed).length,
    llm_first_token_ms: stat(call.turns.map((turn) => turn.llmFirstTokenMs)),
    first_speak_ms: stat(call.turns.map((turn) => turn.firstSpeakMs)),
    tokens: tokensOf(call.turns.reduce<TokenUsage | undefined>((sum, turn) => (turn.tokens ? addUsage(sum, turn.tokens) : sum), undefined)),
    cost_usd: callCostUsd(call.turns),
    each: call.turns.map((turn) => ({
      at: turn.at,
      llm_first_token_ms: rounded(turn.llmFirstTokenMs),
      first_speak_ms: rounded(turn.firstSpeakMs),
      interrupted: turn.interrupted,
      failed: turn.failed,
      tokens: tokensOf(turn.tokens),
      model: turn.model ?? null,
      cost_usd: turn.costUsd ?? null,
      knowledge: turn.knowledge ? turn.knowledge.passages.map((p) => ({ ...p, page: p.page ?? null })) : null,
    })),
  };
}

function rounded(value: number | undefined): number | null {
  return value === undefined ? null : Math.round(value);
}

/** Median (nearest rank) and maximum of the values a turn had; null when none had one. */
function stat(values: readonly (number | undefined)[]): { p50: number | null; max: number | null } {
  const known = values.filter((value): value is number => value !== undefined).sort((a, b) => a - b);
  if (known.length === 0) return { p50: null, max: null };
  return { p50: Math.round(known[Math.ceil(known.length / 2) - 1]!), max: Math.round(known.at(-1)!) };
}

function tokensOf(usage: TokenUsage | undefined): z.infer<typeof Tokens> | null {
  if (!usage) return null;
  return { prompt: usage.prompt, cached: usage.cached ?? null, completion: usage.completion, reasoning: usage.reasoning ?? null };
}
