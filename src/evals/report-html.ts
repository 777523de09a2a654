/**
 * The eval report as one self-contained HTML file: a chart of pass rates
 * (before and after, with a comparison), each eval's criteria with reasons,
 * and every run's transcript as the caller heard it, the worst one open.
 * No script and nothing fetched: it opens from a CI artifact or a mail.
 */
import { html, raw, type Html } from '../html.js';
import type { Comparison, ItemChange } from './compare.js';
import type { EvalSummary, ItemStats } from './eval-summary.js';
import type { SuiteResult } from './eval-suite.js';
import { lineText } from './heard-transcript.js';
import type { PromptCoverage } from './prompt-coverage.js';
import type { RunResult } from './run-eval.js';
import { ms, pct, usd } from './report-text.js';

export function htmlReport(result: SuiteResult, generatedAt: Date): string {
  const passed = result.summaries.filter((s) => s.status === 'passed').length;
  const failed = result.summaries.filter((s) => s.status === 'failed').length;
  const errors = result.summaries.filter((s) => s.status === 'error').length;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hotline evals — ${passed} passed, ${failed} failed</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<header>
  <h1>Hotline evals</h1>
  <p class="meta">${generatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC · prompts <code>${result.promptsDir}</code>${
    result.before ? html` compared with <code>${result.before.promptsDir}</code>` : ''
  } · ${result.runs} runs each</p>
  <p class="meta">agent: ${result.models.agent} · caller: ${result.models.caller} · judge: ${result.models.judge}</p>
  <p class="totals"><span class="badge passed">${passed} passed</span> <span class="badge failed">${failed} failed</span>${
    errors > 0 ? html` <span class="badge error">${errors} could not be graded</span>` : ''
  }${result.comparison ? html` <span class="badge ${result.comparison.regressions.length > 0 ? 'failed' : 'passed'}">${result.comparison.regressions.length} regressions</span>` : ''}</p>
</header>
<main>
${result.offline ? offlineSection(result.offline) : ''}
<section>
  <h2>Pass rates</h2>
  ${chart(result)}
</section>
${result.comparison && result.before ? comparisonSection(result.comparison) : ''}
${result.summaries.map((summary) => evalSection(summary))}
</main>
</body>
</html>
`;
  return page.text;
}

const BAR_WIDTH = 320;
const ROW = 26;
const LABEL = 420;

/** Horizontal bars with the 95 % interval as a whisker; with a comparison, the earlier rate as a thin grey bar above. */
function chart(result: SuiteResult): Html {
  const rows: { label: string; after: ItemStats; before: ItemStats | undefined; min: number }[] = [];
  for (const summary of result.summaries) {
    const earlier = result.before?.summaries.find((s) => s.name === summary.name);
    for (const item of summary.items) rows.push({ label: `${summary.name}: ${item.name}`, after: item, before: earlier?.items.find((i) => i.name === item.name), min: summary.minPassRate });
  }
  const height = rows.length * ROW + 30;
  const width = LABEL + BAR_WIDTH + 70;
  const x = (rate: number): number => LABEL + rate * BAR_WIDTH;
  const bars = rows.map((row, index) => {
    const y = 10 + index * ROW;
    const { after, before } = row;
    const below = after.rate !== null && after.rate < row.min;
    return html`<g>
  <text x="${LABEL - 8}" y="${y + 15}" text-anchor="end" class="label">${truncate(row.label, 60)}<title>${row.label}</title></text>
  <rect x="${LABEL}" y="${y + 2}" width="${BAR_WIDTH}" height="18" class="track"/>
  ${before?.rate != null ? html`<rect x="${LABEL}" y="${y}" width="${(before.rate * BAR_WIDTH).toFixed(1)}" height="4" class="before"><title>before ${pct(before.rate)}</title></rect>` : ''}
  ${after.rate !== null ? html`<rect x="${LABEL}" y="${y + 5}" width="${(after.rate * BAR_WIDTH).toFixed(1)}" height="14" class="${below ? 'bar-failed' : 'bar-passed'}"><title>${pct(after.rate)} (95% interval ${pct(after.low)}–${pct(after.high)})</title></rect>
  <line x1="${x(after.low).toFixed(1)}" x2="${x(after.high).toFixed(1)}" y1="${y + 12}" y2="${y + 12}" class="whisker"/>` : ''}
  <text x="${LABEL + BAR_WIDTH + 8}" y="${y + 17}" class="value">${after.rate === null ? '—' : pct(after.rate)}</text>
</g>`;
  });
  const ticks = [0, 0.25, 0.5, 0.75, 1].map(
    (t) => html`<line x1="${x(t)}" x2="${x(t)}" y1="6" y2="${height - 18}" class="tick"/><text x="${x(t)}" y="${height - 4}" text-anchor="middle" class="axis">${pct(t)}</text>`,
  );
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="pass rate per criterion and check">${ticks}${bars}</svg>
<p class="legend"><span class="key passed"></span> at or above the eval's pass rate <span class="key failed"></span> below it — the line across a bar is the 95% interval${
    result.before ? html` <span class="key before"></span> before the edit` : ''
  }</p>`;
}

/** First on the page: a green offline report must not read as a check of system.md. */
function offlineSection(coverage: PromptCoverage): Html {
  return html`<section class="offline" id="offline">
  <h2>Offline: the built-in scripted model played the agent</h2>
  <p>It answers from the evals' <code>scripted:</code> rules (or the demo script), not from your prompts. These passes say nothing about what is not checked below; run the evals with a real model (set <code>OPENAI_API_KEY</code>) to check it.</p>
  <table>
    <tbody>
      <tr><th>used by these calls</th><td>${coverage.exercised.length > 0 ? coverage.exercised.map((file, i) => html`${i > 0 ? ', ' : ''}<code>${file}</code>`) : 'no prompt file'}</td></tr>
      ${coverage.unchecked.map((u) => html`<tr class="row-failed"><th>not checked</th><td><code>${u.part}</code> — ${u.why}</td></tr>`)}
      ${coverage.unreached.length > 0 ? html`<tr><th>not reached by these calls</th><td>${coverage.unreached.join(', ')}</td></tr>` : ''}
    </tbody>
  </table>
</section>`;
}

function comparisonSection(comparison: Comparison): Html {
  return html`<section>
  <h2>Before and after</h2>
  <table>
    <thead><tr><th>eval</th><th>criterion or check</th><th>before</th><th>after</th><th>change</th></tr></thead>
    <tbody>${comparison.items.map(
      (item) => html`<tr class="${changeClass(item)}"><td>${item.eval}</td><td>${item.item}</td><td>${rateCell(item.before)}</td><td>${rateCell(item.after)}</td><td>${changeText(item)}</td></tr>`,
    )}</tbody>
  </table>
  <table>
    <thead><tr><th>eval</th><th>first speak p50 before</th><th>after</th><th>agent cost per call before</th><th>after</th></tr></thead>
    <tbody>${comparison.evals.map(
      (entry) => html`<tr><td>${entry.eval}</td><td>${ms(entry.firstSpeakP50Ms.before)}</td><td>${ms(entry.firstSpeakP50Ms.after)}</td><td>${usd(entry.agentCostPerCallUsd.before)}</td><td>${usd(entry.agentCostPerCallUsd.after)}</td></tr>`,
    )}</tbody>
  </table>
</section>`;
}

function evalSection(summary: EvalSummary): Html {
  const anchor = (run: number): string => `${summary.name}-run-${run}`;
  return html`<section class="eval" id="${summary.name}">
  <h2><span class="badge ${summary.status}">${summary.status}</span> ${summary.name}</h2>
  ${summary.description ? html`<p>${summary.description}</p>` : ''}
  <p class="meta"><code>${summary.file}</code> · first speak p50 ${ms(summary.firstSpeakP50Ms)}, p95 ${ms(summary.firstSpeakP95Ms)} · agent ${usd(summary.agentCostPerCallUsd)} per call · caller and judge ${usd(summary.evalCostUsd)} in all · pass at ${pct(summary.minPassRate)}${
    summary.worstRun !== undefined ? html` · <a href="#${anchor(summary.worstRun)}">the worst run: ${summary.worstRun}</a>` : ''
  }</p>
  <table>
    <thead><tr><th></th><th>criterion or check</th><th>passed</th><th>95% interval</th></tr></thead>
    <tbody>${summary.items.map((item) => {
      const below = item.rate !== null && item.rate < summary.minPassRate;
      return html`<tr class="${below ? 'row-failed' : ''}"><td>${below ? '✗' : '✓'}</td><td>${item.name}${item.kind === 'check' ? html` <span class="tag">check</span>` : ''}${item.flaky ? html` <span class="tag flaky">flaky</span>` : ''}</td><td>${item.rate === null ? '—' : `${item.passes} of ${item.graded} (${pct(item.rate)})`}</td><td>${item.rate === null ? '—' : `${pct(item.low)}–${pct(item.high)}`}</td></tr>`;
    })}</tbody>
  </table>
  ${summary.runs.map((run) => runDetails(run, anchor(run.run), run.run === summary.worstRun))}
</section>`;
}

function runDetails(run: RunResult, id: string, open: boolean): Html {
  const failures = run.verdicts.filter((v) => !v.pass).length + run.checks.filter((c) => !c.pass).length;
  const state = run.error !== undefined ? html`<span class="badge error">not graded</span>` : failures > 0 ? html`<span class="badge failed">${failures} failed</span>` : html`<span class="badge passed">all passed</span>`;
  return html`<details id="${id}"${open ? raw(' open') : ''}>
  <summary>run ${run.run} ${state} · ${run.turns} turns · ended: ${run.endReason.replaceAll('_', ' ') || '—'} · agent ${usd(run.agentCostUsd)}${
    run.answerTimeouts > 0 ? html` · <span class="error">${run.answerTimeouts} answers did not end in time</span>` : ''
  }</summary>
  ${run.error !== undefined ? html`<p class="error">${run.error}</p>` : ''}
  ${run.prompts ? html`<p class="meta">prompt files this call used: ${run.prompts.used.join(', ') || 'none'}</p>` : ''}
  <ol class="transcript">${run.transcript.map(
    (line) => html`<li class="${line.who}${line.cut ? ' cut' : ''}">${lineText(line)}</li>`,
  )}</ol>
  ${run.verdicts.length + run.checks.length > 0
    ? html`<ul class="verdicts">${run.verdicts.map(
        (v) => html`<li class="${v.pass ? 'pass' : 'fail'}">${v.pass ? '✓' : '✗'} ${v.criterion} — <em>${v.reason}</em></li>`,
      )}${run.checks.map((c) => html`<li class="${c.pass ? 'pass' : 'fail'}">${c.pass ? '✓' : '✗'} ${c.name} — <em>${c.detail}</em></li>`)}</ul>`
    : ''}
</details>`;
}

function rateCell(item: ItemStats | undefined): string {
  return item?.rate == null ? '—' : `${item.passes}/${item.graded} (${pct(item.rate)})`;
}

function changeText(item: ItemChange): string {
  if (item.change === 'worse') return item.significant ? 'worse' : 'worse (could be chance)';
  if (item.change === 'better') return item.significant ? 'better' : 'better (could be chance)';
  return item.change;
}

function changeClass(item: ItemChange): string {
  return item.change === 'worse' ? 'row-failed' : item.change === 'better' ? 'row-better' : '';
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const STYLE = `
:root { color-scheme: light; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --ink: #1f2328; --muted: #656d76; --line: #d0d7de; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f6f8fa; }
header { background: #fff; border-bottom: 1px solid var(--line); padding: 20px 32px; }
h1 { margin: 0 0 4px; font-size: 24px; }
main { padding: 12px 32px 48px; max-width: 1200px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; margin: 16px 0; }
h2 { font-size: 18px; margin: 0 0 8px; }
.meta { color: var(--muted); margin: 2px 0; }
code { font-size: 13px; background: #eff1f3; padding: 1px 4px; border-radius: 4px; }
.badge { display: inline-block; border-radius: 12px; padding: 0 10px; font-size: 13px; font-weight: 600; color: #fff; }
.badge.passed { background: var(--ok); } .badge.failed { background: var(--bad); } .badge.error { background: var(--warn); }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
tr.row-failed td { background: #ffebe9; } tr.row-better td { background: #dafbe1; }
.tag { font-size: 12px; border: 1px solid var(--line); border-radius: 10px; padding: 0 6px; color: var(--muted); }
.tag.flaky { border-color: var(--warn); color: var(--warn); }
.chart { max-width: 100%; height: auto; }
.chart .label, .chart .value, .chart .axis { font-size: 13px; fill: var(--ink); }
.chart .axis { fill: var(--muted); font-size: 11px; }
.chart .track { fill: #eff1f3; } .chart .bar-passed { fill: var(--ok); } .chart .bar-failed { fill: var(--bad); }
.chart .before { fill: #8c959f; } .chart .whisker { stroke: var(--ink); stroke-width: 2; } .chart .tick { stroke: var(--line); }
.legend { color: var(--muted); font-size: 13px; }
.key { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: middle; margin: 0 4px 0 12px; }
.key.passed { background: var(--ok); } .key.failed { background: var(--bad); } .key.before { background: #8c959f; }
details { border-top: 1px solid var(--line); padding: 6px 0; }
summary { cursor: pointer; }
.transcript { list-style: none; padding: 0; margin: 8px 0; }
.transcript li { margin: 4px 0; padding: 6px 10px; border-radius: 8px; max-width: 80%; }
.transcript li.agent { background: #ddf4ff; } .transcript li.caller { background: #eff1f3; margin-left: auto; }
.transcript li.cut { border-right: 3px solid var(--warn); }
.verdicts { padding-left: 18px; } .verdicts .pass { color: var(--ok); } .verdicts .fail { color: var(--bad); }
.verdicts em { color: var(--ink); }
.error { color: var(--warn); font-weight: 600; }
section.offline { border: 2px solid var(--warn); } section.offline th { width: 220px; }
`;
