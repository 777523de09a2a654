/**
 * The terminal summary: per eval a line, per criterion and check its pass
 * rate and interval, the reason of a failure from the worst run, and with a
 * comparison what got better or worse.
 */
import type { Comparison, ItemChange } from './compare.js';
import type { EvalSummary, ItemStats } from './eval-summary.js';
import type { SuiteResult } from './eval-suite.js';
import { lineText } from './heard-transcript.js';
import { coverageLines, coverageReminder } from './prompt-coverage.js';

const MARK = { passed: '✓', failed: '✗', error: '!' } as const;

export function textReport(result: SuiteResult, options: { transcripts?: boolean } = {}): string[] {
  const lines: string[] = [];
  lines.push(`agent: ${result.models.agent} · caller: ${result.models.caller} · judge: ${result.models.judge} · ${result.runs} runs each`);
  if (result.offline) lines.push('', ...coverageLines(result.offline));
  for (const summary of result.summaries) {
    lines.push('', ...evalLines(summary));
    const worst = summary.runs.find((run) => run.run === summary.worstRun);
    if (options.transcripts && summary.status !== 'passed' && worst) {
      lines.push(`    the call of run ${worst.run}, as the caller heard it:`, ...worst.transcript.map((line) => `      ${lineText(line)}`));
    }
  }
  if (result.comparison && result.before) lines.push('', ...comparisonLines(result.comparison, result.before.promptsDir, result.promptsDir));
  lines.push('', totals(result));
  // Again where the verdict is read: a green offline run must not pass for a check of system.md.
  if (result.offline) lines.push(coverageReminder(result.offline));
  return lines;
}

function evalLines(summary: EvalSummary): string[] {
  const errors = summary.errors > 0 ? ` · ${summary.errors} of ${summary.runs.length} runs could not be graded` : '';
  const lines = [
    `${MARK[summary.status]} ${summary.name} — ${summary.status}${errors} · first speak p50 ${ms(summary.firstSpeakP50Ms)} · agent ${usd(summary.agentCostPerCallUsd)}/call`,
  ];
  const worst = summary.runs.find((run) => run.run === summary.worstRun);
  for (const item of summary.items) {
    const below = item.rate !== null && item.rate < summary.minPassRate;
    lines.push(`    ${below ? '✗' : '✓'} ${rate(item)}  ${item.name}${item.flaky ? '  (flaky)' : ''}`);
    if (!below || !worst) continue;
    const why = worst.verdicts.find((v) => v.criterion === item.name && !v.pass)?.reason ?? worst.checks.find((c) => c.name === item.name && !c.pass)?.detail;
    if (why) lines.push(`        run ${worst.run}: ${why}`);
  }
  for (const run of summary.runs) if (run.error !== undefined) lines.push(`    ! run ${run.run}: ${run.error}`);
  return lines;
}

export function rate(item: ItemStats): string {
  if (item.rate === null) return '  —  ';
  return `${item.passes}/${item.graded} ${pct(item.rate).padStart(4)} [${pct(item.low)}–${pct(item.high)}]`;
}

function comparisonLines(comparison: Comparison, beforeDir: string, afterDir: string): string[] {
  const lines = [`before (${beforeDir}) → after (${afterDir}):`];
  const changed = comparison.items.filter((item) => item.change !== 'same');
  if (changed.length === 0) lines.push('    no criterion or check changed');
  for (const item of changed) lines.push(`    ${changeMark(item)} ${item.eval}: ${item.item}  ${rateOf(item.before)} → ${rateOf(item.after)}`);
  for (const entry of comparison.evals) {
    lines.push(
      `    ${entry.eval}: first speak p50 ${ms(entry.firstSpeakP50Ms.before)} → ${ms(entry.firstSpeakP50Ms.after)}, ` +
        `agent ${usd(entry.agentCostPerCallUsd.before)} → ${usd(entry.agentCostPerCallUsd.after)} per call`,
    );
  }
  return lines;
}

function changeMark(item: ItemChange): string {
  if (item.change === 'worse') return item.significant ? '▼ worse' : '▽ worse (could be chance)';
  if (item.change === 'better') return item.significant ? '▲ better' : '△ better (could be chance)';
  return item.change === 'new' ? '+ new' : '- gone';
}

function rateOf(item: ItemStats | undefined): string {
  return item?.rate == null ? '—' : pct(item.rate);
}

function totals(result: SuiteResult): string {
  const count = (status: EvalSummary['status']): number => result.summaries.filter((s) => s.status === status).length;
  const regressions = result.comparison ? `, ${result.comparison.regressions.length} regressions` : '';
  const errors = count('error') > 0 ? `, ${count('error')} could not be graded` : '';
  return `${count('passed')} passed, ${count('failed')} failed${errors}${regressions}`;
}

export function pct(value: number): string {
  return `${Math.round(value * 100)}%`;
}

export function ms(value: number | null): string {
  return value === null ? '—' : `${Math.round(value)} ms`;
}

export function usd(value: number | null): string {
  if (value === null) return '$—';
  return value < 0.01 ? `$${value.toFixed(5)}` : `$${value.toFixed(3)}`;
}
