import { z } from 'zod';
import { TOOL_OUTCOMES } from './business-tools.js';

/**
 * A call's record, declared once: what the call core tells of each call (CallSummary, CallSoFar),
 * what the store keeps of it (a row of `calls`, one column per field), what the write journal and
 * the handover between replicas carry (CallProgress), and what the report sends. Everything else
 * derives from these schemas: the types by `z.infer` (made read-only by Recorded), the store's
 * columns and their mapping by the fields' names in snake_case (store/schema.ts), the report's keys
 * the same way (reports/report-builder.ts).
 *
 * A new field of a call is one line in CallRecordSchema (optional, if records stored before it
 * came must still read), one migration step per dialect adding its column, and the code in
 * call-record.ts that fills it in. Its column is the field's name in snake_case; a value that is
 * not a string, number or boolean is JSON text; a boolean is 0 or 1; an optional field's column
 * is nullable.
 */

/** How a call ended. */
export const CALL_END_REASONS = [
  /** The caller (or the person called) hung up, or the service ended the call. */
  'caller_hung_up',
  /** The model said goodbye and hung up. */
  'agent_hung_up',
  /** The call went to a person. */
  'transferred',
  /** The caller stayed silent through the re-prompts. */
  'silence',
  /** Hotline gave up after failed turns (the LLM kept failing). */
  'error',
  /** Hotline was shutting down. */
  'shutdown',
  /** No event for CALL_IDLE_TIMEOUT_MS. */
  'idle',
  /** An outbound call reached a mailbox: a message was left. */
  'voicemail',
  /** The connection to the voice service broke and did not come back. */
  'connection_lost',
  /** A person running Hotline ended the call (the dashboard, the admin API). */
  'operator_hung_up',
  /** A person running Hotline handed the call to a colleague. */
  'operator_transferred',
  /**
   * Hotline stopped while the call went on (killed, out of memory, a crash): found in progress when
   * it started again. The record holds what was said until then.
   */
  'cut_off',
] as const;
export type CallEndReason = (typeof CALL_END_REASONS)[number];

/** A turn's LLM tokens (see TokenUsage in llm/usage.ts). */
export const TokenUsageSchema = z.object({
  prompt: z.number(),
  completion: z.number(),
  /** The part of `prompt` the provider read from its cache; undefined when the server does not say. */
  cached: z.number().optional(),
  /** The part of `completion` spent thinking; undefined when the server does not say. */
  reasoning: z.number().optional(),
});

/** A passage of the business's documents a turn was given: where it is, its score, and whether the reply drew on it. */
export const KnowledgeRefSchema = z.object({
  source: z.string(),
  heading: z.string(),
  line: z.number(),
  page: z.number().optional(),
  score: z.number(),
  /** The reply used it: its distinctive words are in what was said (see KnowledgeLookup.used). */
  used: z.boolean(),
});

/** A turn's figures (a call row's `turns`, the journal). */
export const TurnSchema = z.object({
  /** ISO time the caller's words arrived. */
  at: z.string(),
  /** From the caller's words to the LLM request (a mailbox check or a keypad pause may come between). */
  llmRequestMs: z.number().optional(),
  /** From the caller's words to the LLM's first token (answer or reasoning). */
  llmFirstTokenMs: z.number().optional(),
  /** From the caller's words to the first speak of the reply. */
  firstSpeakMs: z.number().optional(),
  /** From the caller's words to the service saying the reply began to play (assistant_speak). */
  playbackStartedMs: z.number().optional(),
  /** From the caller's words to the reply's speech having played (assistant_speech_ended). */
  playbackEndedMs: z.number().optional(),
  /** The caller cut this reply short. */
  interrupted: z.boolean(),
  /** The LLM failed this turn: the caller heard the apology. */
  failed: z.boolean(),
  /**
   * The tokens of the turn's LLM requests, summed, as the server counted them (`cached`: read from
   * its prompt cache). Absent when the server sent no counts, or the turn was cut before they came.
   */
  tokens: TokenUsageSchema.optional(),
  /** The model the turn asked. */
  model: z.string().optional(),
  /** What its tokens cost, in USD, at the prices of the day (LLM_PRICES_FILE); absent for a model without a price. */
  costUsd: z.number().nonnegative().optional(),
  /** The business's documents the turn's request was given, with the knowledge base on: none found is an empty list. */
  knowledge: z
    .object({
      /** How long the lookup took, in ms. */
      ms: z.number(),
      passages: z.array(KnowledgeRefSchema),
    })
    .optional(),
});

/** A tool run (a call row's `tool_runs`, the journal). */
export const ToolRunSchema = z.object({
  name: z.string(),
  arguments: z.string(),
  outcome: z.enum(TOOL_OUTCOMES),
  durationMs: z.number(),
  reused: z.boolean(),
});

/** A line of the conversation as the caller heard it: their words, or what of a reply was played to them. */
export const HeardLineSchema = z.object({ role: z.enum(['user', 'assistant']), text: z.string() });

const Strings = z.record(z.string(), z.string());

/** An ended call's record: CallSummary. The order of its fields is the order of its columns and of the report's keys. */
export const CallRecordSchema = z.object({
  /** The call's own id, made by Hotline: a session id the service uses again is a new call with a new call id. */
  callId: z.string(),
  /** The voice service's id of the session. */
  sessionId: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from: z.string().optional(),
  to: z.string().optional(),
  /** ISO times. */
  startedAt: z.string(),
  endedAt: z.string(),
  durationMs: z.number(),
  endReason: z.enum(CALL_END_REASONS),
  /** session_end's own reason, when the service sent one. */
  serviceReason: z.string().optional(),
  turns: z.array(TurnSchema),
  bargeIns: z.number(),
  toolRuns: z.array(ToolRunSchema),
  /** An outbound call Hotline requested: the request's variables (and a campaign's, among them). */
  variables: Strings.optional(),
  /** The request's own tags (a campaign and contact id), untouched by the call. */
  tags: Strings.optional(),
  /** The call's JSONL transcript, complete on disk when the summary is given. */
  transcriptFile: z.string(),
  /**
   * The conversation as heard (no tool calls): with it another replica takes the call up where it
   * was (its owner killed, or stopping). Absent from records written before it was kept.
   */
  conversation: z.array(HeardLineSchema).optional(),
  /**
   * The language the call was in at its end (a prompts language folder's tag: `de`, `tr`), when the
   * prompts have languages; how it was chosen and each switch are in the transcript.
   */
  language: z.string().optional(),
});

/** The fields a call has only once it has ended. */
export const CALL_END_FIELDS = ['endedAt', 'durationMs', 'endReason'] as const;
const END = { endedAt: true, durationMs: true, endReason: true } as const satisfies Record<(typeof CALL_END_FIELDS)[number], true>;

/** A call's record while it goes on: its summary without an end (CallSoFar; the handover between replicas). */
export const CallSoFarSchema = CallRecordSchema.omit(END);

/**
 * A call's record as the call writer journals it and the store holds it: in progress, or ended
 * (with its end). `revision` grows with each snapshot of the same call.
 */
export const CallProgressSchema = CallRecordSchema.partial(END).extend({ revision: z.number() });

/** A parsed value as the record's readers see it: read-only all the way down. */
export type Recorded<T> = T extends readonly (infer E)[] ? readonly Recorded<E>[] : T extends object ? { readonly [K in keyof T]: Recorded<T[K]> } : T;

export type TurnSummary = Recorded<z.output<typeof TurnSchema>>;
/** As the call's record holds it while the turn goes on: `used` is filled in once the reply is known. */
export type KnowledgeRef = z.output<typeof KnowledgeRefSchema>;
export type ToolRunSummary = Recorded<z.output<typeof ToolRunSchema>>;
export type HeardLine = Recorded<z.output<typeof HeardLineSchema>>;
export type CallSummary = Recorded<z.output<typeof CallRecordSchema>>;
/** What the core tells of a call in progress: its summary without an end. */
export type CallSoFar = Recorded<z.output<typeof CallSoFarSchema>>;
/**
 * A call's record while it goes on (issue 22: written as it happens, from session_start on): what
 * is known so far. Its end, duration and end reason come when it ends; `revision` grows with each
 * snapshot of the same call, so a late or repeated write never replaces a newer one.
 */
export type CallProgress = Recorded<z.output<typeof CallProgressSchema>>;

/** A field of a call's record. */
export type CallField = keyof CallSummary & string;

/** The record's fields, in their order. */
export const CALL_FIELDS = Object.keys(CallRecordSchema.shape) as CallField[];

/** `bargeIns` → `barge_ins`: how the store's columns and the report's keys name a field. */
export type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

export function snakeCase<S extends string>(name: S): SnakeCase<S> {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) as SnakeCase<S>;
}
