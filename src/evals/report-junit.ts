/**
 * JUnit XML for CI: a test suite per eval, a test case per criterion and
 * check. Below the pass rate is a failure; an eval no run of which could be
 * graded is an error, so CI tells a broken model key from a worse prompt.
 */
import type { EvalSummary } from './eval-summary.js';
import type { SuiteResult } from './eval-suite.js';
import { coverageLines, type PromptCoverage } from './prompt-coverage.js';
import { rate } from './report-text.js';

export function junitReport(result: SuiteResult): string {
  const suites = result.summaries.map((summary) => suite(summary, result.offline));
  const tests = result.summaries.reduce((n, s) => n + s.items.length, 0);
  const failures = result.summaries.reduce((n, s) => n + failedItems(s), 0);
  const errors = result.summaries.filter((s) => s.status === 'error').length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="hotline evals" tests="${tests}" failures="${failures}" errors="${errors}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

/** In every suite, as CI shows one: an offline pass must say what it did not check. */
function offlineNotice(offline: PromptCoverage | undefined): string[] {
  if (!offline) return [];
  const properties = [
    ['offline', 'true'],
    ['prompt files used', offline.exercised.join(', ')],
    ['not checked offline', offline.unchecked.map((u) => u.part).join(', ')],
  ];
  return [
    '    <properties>',
    ...properties.map(([name, value]) => `      <property name="${xml(name ?? '')}" value="${xml(value ?? '')}"/>`),
    '    </properties>',
  ];
}

function suite(summary: EvalSummary, offline: PromptCoverage | undefined): string {
  const seconds = summary.runs.reduce((sum, run) => sum + run.durationMs, 0) / 1000;
  const head = `  <testsuite name="${xml(summary.name)}" file="${xml(summary.file)}" tests="${summary.items.length}" failures="${failedItems(summary)}" errors="${summary.status === 'error' ? 1 : 0}" time="${seconds.toFixed(3)}">`;
  const cases = summary.items.map((item) => {
    const name = `${item.kind}: ${item.name}`;
    const open = `    <testcase classname="${xml(summary.name)}" name="${xml(name)}">`;
    if (item.rate === null) {
      const why = summary.runs.map((run) => run.error).filter((e) => e !== undefined).join('; ');
      return `${open}\n      <error message="no run could be graded">${xml(why)}</error>\n    </testcase>`;
    }
    if (item.rate >= summary.minPassRate) return `${open}<system-out>${xml(rate(item))}</system-out></testcase>`;
    const reasons = summary.runs
      .map((run) => {
        const failed = run.verdicts.find((v) => v.criterion === item.name && !v.pass)?.reason ?? run.checks.find((c) => c.name === item.name && !c.pass)?.detail;
        return failed === undefined ? undefined : `run ${run.run}: ${failed}`;
      })
      .filter((r) => r !== undefined);
    const message = `passed ${rate(item)}, below ${Math.round(summary.minPassRate * 100)}%`;
    return `${open}\n      <failure message="${xml(message)}">${xml(reasons.join('\n'))}</failure>\n    </testcase>`;
  });
  const out = offline ? [`    <system-out>${xml(coverageLines(offline).join('\n'))}</system-out>`] : [];
  return [head, ...offlineNotice(offline), ...cases, ...out, '  </testsuite>'].join('\n');
}

function failedItems(summary: EvalSummary): number {
  return summary.items.filter((item) => item.rate !== null && item.rate < summary.minPassRate).length;
}

function xml(text: string): string {
  // Control characters other than tab and newlines are not allowed in XML 1.0 at all.
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
