/**
 * An eval's runs summed up: per criterion and check, how often it held, with
 * a 95 % confidence interval (five runs say less than fifty), the run that
 * went worst, and what the calls cost and how fast they answered.
 */
import type { RunResult } from './run-eval.js';

export interface ItemStats {
  readonly name: string;
  readonly kind: 'criterion' | 'check';
  readonly passes: number;
  /** Runs that were graded (errors are not). */
  readonly graded: number;
  /** passes / graded; null when no run was graded. */
  readonly rate: number | null;
  /** The Wilson score interval of the rate, 95 %. */
  readonly low: number;
  readonly high: number;
  /** Passed in some runs and failed in others. */
  readonly flaky: boolean;
}

export type EvalStatus = 'passed' | 'failed' | 'error';

export interface EvalSummary {
  readonly name: string;
  readonly description: string | undefined;
  readonly file: string;
  readonly runs: readonly RunResult[];
  readonly items: readonly ItemStats[];
  readonly errors: number;
  readonly minPassRate: number;
  /** failed: an item below minPassRate; error: no run could be graded. */
  readonly status: EvalStatus;
  /** The graded run with the most failures (the first of them), to read first. */
  readonly worstRun: number | undefined;
  readonly firstSpeakP50Ms: number | null;
  readonly firstSpeakP95Ms: number | null;
  /** Mean over the graded runs; null when a run's model has no price. */
  readonly agentCostPerCallUsd: number | null;
  readonly evalCostUsd: number | null;
}

const Z95 = 1.959964;

/** The Wilson score interval: sound at 0 %, 100 % and few runs, where the normal approximation is not. */
export function wilsonInterval(passes: number, total: number): { low: number; high: number } {
  if (total === 0) return { low: 0, high: 1 };
  const p = passes / total;
  const z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * total)) / (1 + z2 / total);
  const half = (Z95 * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total))) / (1 + z2 / total);
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export function summarize(
  evaluation: { name: string; description?: string | undefined; criteria: readonly string[] },
  file: string,
  runs: readonly RunResult[],
  minPassRate: number,
): EvalSummary {
  const graded = runs.filter((run) => run.error === undefined);
  const outcomes = new Map<string, { kind: ItemStats['kind']; results: boolean[] }>();
  const add = (name: string, kind: ItemStats['kind'], pass: boolean): void => {
    const entry = outcomes.get(name) ?? { kind, results: [] };
    entry.results.push(pass);
    outcomes.set(name, entry);
  };
  for (const criterion of evaluation.criteria) outcomes.set(criterion, { kind: 'criterion', results: [] });
  for (const run of graded) {
    for (const verdict of run.verdicts) add(verdict.criterion, 'criterion', verdict.pass);
    for (const check of run.checks) add(check.name, 'check', check.pass);
  }
  const items = [...outcomes].map(([name, { kind, results }]): ItemStats => {
    const passes = results.filter(Boolean).length;
    return {
      name,
      kind,
      passes,
      graded: results.length,
      rate: results.length === 0 ? null : passes / results.length,
      ...wilsonInterval(passes, results.length),
      flaky: passes > 0 && passes < results.length,
    };
  });
  const failures = (run: RunResult): number => run.verdicts.filter((v) => !v.pass).length + run.checks.filter((c) => !c.pass).length;
  const worst = graded.reduce<RunResult | undefined>((w, run) => (w === undefined || failures(run) > failures(w) ? run : w), undefined);
  const latencies = graded.flatMap((run) => run.firstSpeakMs).sort((a, b) => a - b);
  const status: EvalStatus =
    graded.length === 0 ? 'error' : items.some((item) => item.rate !== null && item.rate < minPassRate) ? 'failed' : 'passed';
  return {
    name: evaluation.name,
    description: evaluation.description,
    file,
    runs,
    items,
    errors: runs.length - graded.length,
    minPassRate,
    status,
    worstRun: worst?.run,
    firstSpeakP50Ms: percentile(latencies, 0.5),
    firstSpeakP95Ms: percentile(latencies, 0.95),
    agentCostPerCallUsd: meanOrNull(graded.map((run) => run.agentCostUsd)),
    evalCostUsd: sumOrNull(runs.map((run) => run.evalCostUsd)),
  };
}

export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? null;
}

function meanOrNull(values: readonly (number | null)[]): number | null {
  const sum = sumOrNull(values);
  return sum === null || values.length === 0 ? null : sum / values.length;
}

function sumOrNull(values: readonly (number | null)[]): number | null {
  let sum = 0;
  for (const value of values) {
    if (value === null) return null;
    sum += value;
  }
  return sum;
}
