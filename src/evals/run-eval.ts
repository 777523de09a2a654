/**
 * One run of one eval: a fresh stack, the call played, then every criterion
 * judged and every check made. A model that fails (the caller's or the
 * judge's) makes the run an error, never a failed criterion: nothing was
 * learnt about the agent.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { callCostUsd, type PriceTable } from '../llm/prices.js';
import type { CallSummary } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { runChecks, type CheckResult } from './hard-checks.js';
import type { Eval } from './eval-schema.js';
import { EvalModelError, RoleClient, type EvalModels } from './eval-models.js';
import { startEvalStack } from './eval-stack.js';
import type { TranscriptLine } from './heard-transcript.js';
import { Judge, type Verdict } from './judge.js';
import { playEvalCall, type PlayedCall, type PlayOptions } from './play-eval-call.js';
import type { PromptUse } from './prompt-lines.js';
import { SimulatedCaller } from './simulated-caller.js';

/** How long Hotline may take to hand over its record of a call that has ended. */
const RECORD_TIMEOUT_MS = 10_000;

export interface CriterionVerdict extends Verdict {
  readonly criterion: string;
}

export interface RunResult {
  readonly run: number;
  /** Set when the run could not be graded; then verdicts and checks are empty. */
  readonly error?: string;
  readonly transcript: readonly TranscriptLine[];
  readonly verdicts: readonly CriterionVerdict[];
  readonly checks: readonly CheckResult[];
  readonly turns: number;
  /** How the call ended, as Hotline's record says. */
  readonly endReason: string;
  readonly firstSpeakMs: readonly number[];
  /** Answers that had not ended when the answer timeout ran out: the caller went on regardless. */
  readonly answerTimeouts: number;
  /** What the agent's tokens cost (Hotline's own record); null when its model has no price. */
  readonly agentCostUsd: number | null;
  /** What the caller and judge cost; null when a model has no price. */
  readonly evalCostUsd: number | null;
  readonly durationMs: number;
  /** Which of the prompt folder's files the call used; absent when no call was recorded. */
  readonly prompts?: PromptUse;
}

export interface RunContext {
  promptsDir: string;
  models: EvalModels;
  prices: PriceTable;
  play: Omit<PlayOptions, 'wsUrl'>;
  signal: AbortSignal;
  logger?: Logger;
}

export async function runEvalOnce(evaluation: Eval, run: number, context: RunContext): Promise<RunResult> {
  // A run's own signal: its call and its judge's requests listen to it, not each to the whole suite's.
  const own = new AbortController();
  setMaxListeners(0, own.signal);
  const stop = (): void => own.abort();
  context.signal.addEventListener('abort', stop, { once: true });
  try {
    return await runOnce(evaluation, run, { ...context, signal: own.signal });
  } finally {
    context.signal.removeEventListener('abort', stop);
  }
}

async function runOnce(evaluation: Eval, run: number, context: RunContext): Promise<RunResult> {
  const startedAt = performance.now();
  const base = { run, transcript: [], verdicts: [], checks: [], turns: 0, endReason: '', firstSpeakMs: [], answerTimeouts: 0, agentCostUsd: null, evalCostUsd: null };
  let stack;
  try {
    stack = await startEvalStack({ evaluation, promptsDir: context.promptsDir, models: context.models, run, ...(context.logger ? { logger: context.logger } : {}) });
  } catch (error) {
    return { ...base, error: `Hotline could not start: ${messageOf(error)}`, durationMs: performance.now() - startedAt };
  }
  const callerClient = new RoleClient('caller', stack.caller, context.prices);
  const judgeClient = new RoleClient('judge', stack.judge, context.prices);
  const evalCost = (): number | null => (callerClient.unpriced || judgeClient.unpriced ? null : callerClient.costUsd + judgeClient.costUsd);
  let played;
  let record;
  try {
    played = await playEvalCall(evaluation, new SimulatedCaller(evaluation.caller.persona, callerClient, evaluation.language), { ...context.play, wsUrl: stack.wsUrl }, context.signal);
    record = await withTimeout(stack.callRecord(played.sessionId), RECORD_TIMEOUT_MS);
  } catch (error) {
    await stack.close();
    return { ...base, error: messageOf(error), evalCostUsd: evalCost(), durationMs: performance.now() - startedAt };
  }
  try {
    const prompts = record ? stack.promptUse(played.transcript.lines, record.toolRuns) : undefined;
    return await grade(evaluation, run, played, record, new Judge(judgeClient), { startedAt, evalCost, signal: context.signal, prompts });
  } finally {
    // After the judging: offline, the judge is this stack's scripted model.
    await stack.close();
  }
}

async function grade(
  evaluation: Eval,
  run: number,
  played: PlayedCall,
  record: CallSummary | undefined,
  judge: Judge,
  context: { startedAt: number; evalCost: () => number | null; signal: AbortSignal; prompts: PromptUse | undefined },
): Promise<RunResult> {
  const { startedAt, evalCost } = context;
  const common = {
    ...(context.prompts ? { prompts: context.prompts } : {}),
    run,
    transcript: played.transcript.lines,
    turns: played.turns,
    endReason: record?.endReason ?? '',
    firstSpeakMs: played.firstSpeakMs,
    answerTimeouts: played.timeouts,
    agentCostUsd: record ? callCostUsd(record.turns) : null,
  };
  if (!record) {
    return { ...common, verdicts: [], checks: [], error: `Hotline kept no record of the call within ${RECORD_TIMEOUT_MS} ms`, evalCostUsd: evalCost(), durationMs: performance.now() - startedAt };
  }
  const text = played.transcript.text();
  let verdicts: CriterionVerdict[];
  try {
    verdicts = await Promise.all(
      evaluation.criteria.map(async (criterion) => ({ criterion, ...(await judge.grade(criterion, text, context.signal)) })),
    );
  } catch (error) {
    if (!(error instanceof EvalModelError)) throw error;
    return { ...common, verdicts: [], checks: [], error: error.message, evalCostUsd: evalCost(), durationMs: performance.now() - startedAt };
  }
  const checks = runChecks(evaluation.checks, { record, turns: played.turns, firstSpeakMs: played.firstSpeakMs }, evaluation.language);
  return { ...common, verdicts, checks, evalCostUsd: evalCost(), durationMs: performance.now() - startedAt };
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
