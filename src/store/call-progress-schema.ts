import { z } from 'zod';
import { TOOL_OUTCOMES } from '../call/ports/business-tools.js';
import { CALL_END_REASONS } from '../call/ports/call-summary.js';

/** A turn's LLM tokens as stored (see TokenUsage). */
export const TokenUsageSchema = z.object({
  prompt: z.number(),
  completion: z.number(),
  cached: z.number().optional(),
  reasoning: z.number().optional(),
});

/** A turn's figures as stored (a call row's `turns`, the journal). */
export const TurnSchema = z.object({
  at: z.string(),
  llmRequestMs: z.number().optional(),
  llmFirstTokenMs: z.number().optional(),
  firstSpeakMs: z.number().optional(),
  playbackStartedMs: z.number().optional(),
  playbackEndedMs: z.number().optional(),
  interrupted: z.boolean(),
  failed: z.boolean(),
  tokens: TokenUsageSchema.optional(),
  model: z.string().optional(),
  costUsd: z.number().nonnegative().optional(),
});

/** A tool run as stored (a call row's `tool_runs`, the journal). */
export const ToolRunSchema = z.object({
  name: z.string(),
  arguments: z.string(),
  outcome: z.enum(TOOL_OUTCOMES),
  durationMs: z.number(),
  reused: z.boolean(),
});

/** A line of the conversation as heard (a call row's `conversation`, the journal). */
export const HeardLineSchema = z.object({ role: z.enum(['user', 'assistant']), text: z.string() });

const Strings = z.record(z.string(), z.string());

/** A call's record as the call writer journals it: in progress, or ended (with its end). */
export const CallProgressSchema = z.object({
  callId: z.string(),
  sessionId: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from: z.string().optional(),
  to: z.string().optional(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  durationMs: z.number().optional(),
  endReason: z.enum(CALL_END_REASONS).optional(),
  serviceReason: z.string().optional(),
  turns: z.array(TurnSchema),
  bargeIns: z.number(),
  toolRuns: z.array(ToolRunSchema),
  variables: Strings.optional(),
  tags: Strings.optional(),
  transcriptFile: z.string(),
  conversation: z.array(HeardLineSchema).optional(),
  revision: z.number(),
});
