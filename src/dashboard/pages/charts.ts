import type { CallEndReason } from '../../call/ports/call-summary.js';
import { DAY_RANGES, type ChartData } from '../../store/call-stats.js';
import { html, scriptJson, type Html } from '../../html.js';
import type { StaffRole } from '../../staff/roles.js';
import { formatTime, layout } from '../layout.js';

/** How an end reason reads to the business; a record, so a reason added to the core must be worded here too. */
const OUTCOME_LABELS: Record<CallEndReason, string> = {
  caller_hung_up: 'Caller hung up',
  agent_hung_up: 'Agent ended the call',
  transferred: 'Passed to a person',
  silence: 'Caller stayed silent',
  error: 'Gave up after errors',
  shutdown: 'Hotline was shutting down',
  idle: 'Nothing happened for too long',
  voicemail: 'Left a voicemail',
  connection_lost: 'Connection lost',
  operator_hung_up: 'Ended by an operator',
  operator_transferred: 'Passed to a person by an operator',
  cut_off: 'Cut off: Hotline stopped during the call',
};

function outcomeLabel(reason: string): string {
  return Object.hasOwn(OUTCOME_LABELS, reason) ? OUTCOME_LABELS[reason as CallEndReason] : reason.replaceAll('_', ' ');
}

/**
 * What the browser script draws, shaped as Chart.js takes it (labels and one
 * array per line), so the script does no arithmetic of its own. Barge-ins are
 * in percent here because that is how the axis reads.
 */
export interface ChartsView {
  hours: { labels: string[]; calls: number[] };
  days: {
    labels: string[];
    calls: number[];
    firstSpeakP50: (number | null)[];
    firstSpeakP95: (number | null)[];
    llmFirstTokenP50: (number | null)[];
    llmFirstTokenP95: (number | null)[];
    bargeInPercent: (number | null)[];
  };
  outcomes: { labels: string[]; calls: number[] };
}

export function chartsView(data: ChartData): ChartsView {
  const days = data.days;
  return {
    hours: { labels: data.hours.map((h) => h.label), calls: data.hours.map((h) => h.calls) },
    days: {
      labels: days.map((d) => d.label),
      calls: days.map((d) => d.calls),
      firstSpeakP50: days.map((d) => d.firstSpeakMs.p50),
      firstSpeakP95: days.map((d) => d.firstSpeakMs.p95),
      llmFirstTokenP50: days.map((d) => d.llmFirstTokenMs.p50),
      llmFirstTokenP95: days.map((d) => d.llmFirstTokenMs.p95),
      bargeInPercent: days.map((d) => (d.bargeInRate === null ? null : round(d.bargeInRate * 100, 1))),
    },
    outcomes: { labels: data.outcomes.map((o) => outcomeLabel(o.reason)), calls: data.outcomes.map((o) => o.calls) },
  };
}

/** The charts of calls, outcomes, waiting times and barge-ins. */
export function chartsPage(data: ChartData, options: { numbersShown: boolean; role?: StaffRole | undefined }): Html {
  const { last24h } = data;
  const totalDays = sum(data.days.map((d) => d.calls));
  const totalOutcomes = sum(data.outcomes.map((o) => o.calls));
  const lastDays = `last ${data.dayCount} days`;
  return layout({
    title: 'Charts',
    section: 'charts',
    root: '',
    here: 'charts',
    numbersShown: options.numbersShown,
    role: options.role,
    scripts: ['chart.umd.min.js', 'charts.js'],
    body: html`<h1>Charts</h1>
<p class="muted">As of ${formatTime(data.at)} UTC. Hours and days are UTC.</p>
<nav class="ranges" id="day-ranges" aria-label="Days shown">Days shown: ${[...DAY_RANGES]
  .sort((a, b) => a - b)
  .map((days) =>
    days === data.dayCount ? html`<strong aria-current="true">${days}</strong> ` : html`<a href="charts?days=${days}">${days}</a> `,
  )}</nav>
<dl class="facts" id="summary">
  <dt>Calls in the last 24 hours</dt><dd id="calls-24h">${last24h.calls}</dd>
  <dt>Time until the agent starts speaking, p95: 95 of 100 turns were faster (last 24 hours)</dt><dd id="first-speak-24h">${ms(last24h.firstSpeakP95Ms)}</dd>
  <dt>Callers cutting the agent short (last 24 hours)</dt><dd id="barge-in-24h">${percent(last24h.bargeInRate)}</dd>
</dl>

<figure>
  <figcaption>Calls per hour, last 48 hours</figcaption>
  <div class="chart"><canvas id="chart-hours">${fallback(
    `${sum(data.hours.map((h) => h.calls))} calls in the last 48 hours.`,
    ['Hour', 'Calls'],
    data.hours.map((h) => [h.label, String(h.calls)]),
  )}</canvas></div>
</figure>

<figure>
  <figcaption>Calls per day, ${lastDays}</figcaption>
  <div class="chart"><canvas id="chart-days">${fallback(
    `${totalDays} calls in the ${lastDays}.`,
    ['Day', 'Calls'],
    data.days.map((d) => [d.label, String(d.calls)]),
  )}</canvas></div>
</figure>

<figure>
  <figcaption>How calls ended, ${lastDays}</figcaption>
  ${totalOutcomes === 0 ? html`<p class="muted">No calls ended in the ${lastDays}.</p>` : ''}
  <div class="chart"><canvas id="chart-outcomes">${fallback(
    `${totalOutcomes} calls in the ${lastDays}.`,
    ['How the call ended', 'Calls'],
    data.outcomes.map((o) => [outcomeLabel(o.reason), String(o.calls)]),
  )}</canvas></div>
</figure>

<figure>
  <figcaption>Waiting times per day, in milliseconds: until the agent starts to speak, and until the language model's first word</figcaption>
  <p class="muted">The median (p50) is a typical turn; p95 is the slow end: 95 of 100 turns were faster.</p>
  <div class="chart"><canvas id="chart-latency">${fallback(
    'Waiting times per day in milliseconds; a dash is a day without measured turns.',
    ['Day', 'First speak p50', 'First speak p95', 'LLM first token p50', 'LLM first token p95'],
    data.days.map((d) => [d.label, ms(d.firstSpeakMs.p50), ms(d.firstSpeakMs.p95), ms(d.llmFirstTokenMs.p50), ms(d.llmFirstTokenMs.p95)]),
  )}</canvas></div>
</figure>

<figure>
  <figcaption>Barge-ins per day: how often callers cut the agent short, per turn</figcaption>
  <div class="chart"><canvas id="chart-barge-ins">${fallback(
    'Barge-ins per turn by day; a dash is a day without turns.',
    ['Day', 'Barge-in rate', 'Barge-ins', 'Turns'],
    data.days.map((d) => [d.label, percent(d.bargeInRate), String(d.bargeIns), String(d.turns)]),
  )}</canvas></div>
</figure>
<script type="application/json" id="chart-data">${scriptJson(chartsView(data))}</script>`,
  });
}

/** What a screen reader (or a browser without the script) gets in place of the drawing: a sentence and the numbers. */
function fallback(sentence: string, headers: readonly string[], rows: readonly (readonly string[])[]): Html {
  return html`<p>${sentence}</p>
    <table><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
    <tbody>${rows.map((row) => html`<tr>${row.map((cell, i) => (i === 0 ? html`<th scope="row">${cell}</th>` : html`<td>${cell}</td>`))}</tr>`)}</tbody></table>`;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function ms(value: number | null): string {
  return value === null ? '—' : `${Math.round(value).toLocaleString('en')} ms`;
}

function percent(rate: number | null): string {
  return rate === null ? '—' : `${round(rate * 100, 1)} %`;
}
