/**
 * Runs the evals: each N times, within a bounded number of calls at once; and
 * with `compare`, the same evals against a second prompt folder, run for run,
 * so that an edit is judged on the same personas as what it replaces.
 */
import type { PriceTable } from '../llm/prices.js';
import type { Logger } from '../logger.js';
import { compareSuites, type Comparison } from './compare.js';
import type { EvalModels } from './eval-models.js';
import { summarize, type EvalSummary } from './eval-summary.js';
import type { LoadedEval } from './load-evals.js';
import type { PlayOptions } from './play-eval-call.js';
import { offlineCoverage, type PromptCoverage } from './prompt-coverage.js';
import { runEvalOnce, type RunResult } from './run-eval.js';

export interface SuiteOptions {
  evals: readonly LoadedEval[];
  promptsDir: string;
  /** A second prompt folder: the one before the edit. */
  compareWith?: string;
  runs: number;
  concurrency: number;
  minPassRate: number;
  models: EvalModels;
  prices: PriceTable;
  play: Omit<PlayOptions, 'wsUrl'>;
  signal: AbortSignal;
  logger?: Logger;
  /** Told of each run as it ends (for progress). */
  runEnded?: (name: string, folder: string, result: RunResult) => void;
}

export interface SuiteResult {
  readonly promptsDir: string;
  readonly summaries: readonly EvalSummary[];
  readonly before?: { readonly promptsDir: string; readonly summaries: readonly EvalSummary[] };
  readonly comparison?: Comparison;
  readonly runs: number;
  readonly models: { readonly agent: string; readonly caller: string; readonly judge: string };
  /** Set when the scripted model played the agent: what of the prompt folders that checked, and what not. */
  readonly offline?: PromptCoverage;
}

export async function runSuite(options: SuiteOptions): Promise<SuiteResult> {
  const folders = [options.promptsDir, ...(options.compareWith === undefined ? [] : [options.compareWith])];
  const tasks: { folder: string; loaded: LoadedEval; run: number }[] = [];
  // Run for run, the two folders side by side: a slow endpoint or a busy machine weighs on both alike.
  for (const loaded of options.evals) {
    for (let run = 1; run <= options.runs; run++) for (const folder of folders) tasks.push({ folder, loaded, run });
  }
  const results = new Map<string, RunResult[]>();
  await pool(tasks, options.concurrency, async ({ folder, loaded, run }) => {
    const result = await runEvalOnce(loaded.evaluation, run, {
      promptsDir: folder,
      models: options.models,
      prices: options.prices,
      play: options.play,
      signal: options.signal,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const key = `${folder}\n${loaded.evaluation.name}`;
    results.set(key, [...(results.get(key) ?? []), result]);
    options.runEnded?.(loaded.evaluation.name, folder, result);
  });
  const summariesOf = (folder: string): EvalSummary[] =>
    options.evals.map(({ file, evaluation }) => {
      const runs = (results.get(`${folder}\n${evaluation.name}`) ?? []).sort((a, b) => a.run - b.run);
      return summarize(evaluation, file, runs, evaluation.min_pass_rate ?? options.minPassRate);
    });
  const summaries = summariesOf(options.promptsDir);
  const models = {
    agent: describeModel(options.models.agent),
    caller: describeModel(options.models.caller),
    judge: describeModel(options.models.judge),
  };
  const offline = options.models.agent.kind === 'scripted' ? { offline: offlineCoverage([...results.values()].flat(), options.evals) } : {};
  if (options.compareWith === undefined) return { promptsDir: options.promptsDir, summaries, runs: options.runs, models, ...offline };
  const before = { promptsDir: options.compareWith, summaries: summariesOf(options.compareWith) };
  return { promptsDir: options.promptsDir, summaries, before, comparison: compareSuites(before.summaries, summaries), runs: options.runs, models, ...offline };
}

function describeModel(model: EvalModels['agent']): string {
  if (model.kind === 'scripted') return 'the built-in scripted model';
  return `${model.endpoint.model}${model.endpoint.baseURL ? ` at ${hostOf(model.endpoint.baseURL)}` : ''}`;
}

/** Where a model is, fit to print in a report: no credentials a URL may carry. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'its base URL';
  }
}

/** Runs `work` on every item, at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
