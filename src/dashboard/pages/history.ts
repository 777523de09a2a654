import { CALL_END_REASONS } from '../../call/ports/call-summary.js';
import type { CampaignProgress } from '../../campaigns/progress.js';
import type { CallListing, CostTotal } from '../../store/call-search.js';
import { filterEntries, type ParsedFilter } from '../filter-form.js';
import { html, type Html } from '../../html.js';
import type { StaffRole } from '../../staff/roles.js';
import { formatDuration, formatTime, formatUsd, layout, showNumber, UNKNOWN_COST } from '../layout.js';

export const PAGE_SIZE = 50;

export interface HistoryView {
  parsed: ParsedFilter;
  calls: readonly CallListing[];
  total: number;
  /** What all the matching calls cost, not only the page's. */
  cost: CostTotal;
  fieldNames: readonly string[];
  campaigns: readonly CampaignProgress[];
  /** Report deliveries given up: the receiver was down longer than the retries lasted. */
  failedDeliveries: number;
  numbersShown: boolean;
  role?: StaffRole | undefined;
}

/**
 * The call history. Filters are posted, never put in the URL: a number or a
 * field value searched for must not land in a proxy's access log.
 */
export function historyPage(view: HistoryView): Html {
  const { parsed, calls, total } = view;
  const v = parsed.values;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const hidden = filterEntries(v).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  const pageButton = (page: number, label: string, rel: string) =>
    html`<form method="post" action="calls" class="inline"><button type="submit" name="page" value="${page}" data-rel="${rel}">${label}</button>${hidden}</form>`;
  const option = (value: string, selected: string | undefined, label = value) =>
    html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;
  return layout({
    title: 'Calls',
    scripts: ['filters.js'],
    section: 'calls',
    root: '',
    here: 'calls',
    numbersShown: view.numbersShown,
    role: view.role,
    body: html`<h1>Calls <span class="count" id="total">${total}</span></h1>
${costTotal(total, view.cost)}
${
  view.failedDeliveries > 0
    ? html`<div class="warning" id="failed-deliveries"><p role="alert">${view.failedDeliveries} report${view.failedDeliveries === 1 ? '' : 's'} could not be delivered to the webhook: its receiver failed for longer than the retries last.</p>
<form method="post" action="redeliver"><button type="submit">Deliver them again</button></form></div>`
    : ''
}
<details class="filters fold-narrow" id="filter-box" open>
<summary id="filter-summary">Filter${activeFilters(v) > 0 ? ` (${activeFilters(v)} active)` : ''}</summary>
<form method="post" action="calls" class="filters" id="filters">
  <label>From <input type="date" name="since" value="${v.since ?? ''}"></label>
  <label>To <input type="date" name="until" value="${v.until ?? ''}"></label>
  <label>Direction <select name="direction">${option('', v.direction, 'any')}${option('inbound', v.direction)}${option('outbound', v.direction)}</select></label>
  <label>Ended <select name="outcome">${option('', v.outcome, 'any way')}${CALL_END_REASONS.map((r) => option(r, v.outcome, r.replaceAll('_', ' ')))}</select></label>
  <label>Campaign <select name="campaign">${option('', v.campaign, 'any')}${view.campaigns.map((c) => option(c.id, v.campaign, c.name))}</select></label>
  <label>Number <input type="search" name="number" inputmode="tel" autocomplete="off" value="${v.number ?? ''}"></label>
  <label>Summary says <input type="search" name="text" autocomplete="off" value="${v.text ?? ''}" placeholder="invoice"></label>
  <label>Field <select name="field">${option('', v.field, '—')}${view.fieldNames.map((f) => option(f, v.field))}</select></label>
  <label>is <input type="text" name="value" value="${v.value ?? ''}" placeholder="true"></label>
  <label>LLM cost at least $ <input type="text" name="cost_min" inputmode="decimal" autocomplete="off" size="7" value="${v.cost_min ?? ''}" placeholder="0.05"></label>
  <label>at most $ <input type="text" name="cost_max" inputmode="decimal" autocomplete="off" size="7" value="${v.cost_max ?? ''}"></label>
  <button type="submit">Filter</button>
  <a href="calls" class="button">Clear</a>
</form>
</details>
${parsed.ignored.length > 0 ? html`<p class="warning" role="alert">Ignored, not understood: ${parsed.ignored.join(', ')}.</p>` : ''}
${parsed.problems.map((problem) => html`<p class="warning filter-problem" role="alert">${problem}.</p>`)}
<form method="post" action="calls.csv" class="export">${hidden}<button type="submit" id="export">Export CSV (${total})</button></form>
<div class="table-scroll">
<table class="calls" id="history">
  <thead><tr><th>Ended</th><th>Number</th><th>Direction</th><th>Duration</th><th>Ended how</th><th>Turns</th><th>Barge-ins</th><th class="cost">LLM cost</th><th>Summary</th></tr></thead>
  <tbody>
  ${calls.map(
    (call) => html`<tr>
    <td data-label="Ended"><a href="calls/${encodeURIComponent(call.callId)}">${formatTime(call.endedAt)}</a></td>
    <td data-label="Number">${showNumber(call.direction === 'inbound' ? call.from : call.to, view.numbersShown)}</td>
    <td data-label="Direction">${call.direction}</td>
    <td data-label="Duration">${formatDuration(call.durationMs)}</td>
    <td data-label="Ended how"><span class="reason reason-${call.endReason}">${call.endReason.replaceAll('_', ' ')}</span></td>
    <td data-label="Turns">${call.turns}</td>
    <td data-label="Barge-ins">${call.bargeIns}</td>
    <td data-label="LLM cost" class="cost">${costCell(call)}</td>
    <td data-label="Summary" class="summary" title="${summaryTitle(call)}"><span>${call.summary ?? ''}${fieldBadges(call)}</span></td>
  </tr>`,
  )}
  </tbody>
</table>
</div>
${calls.length === 0 ? html`<p class="muted">No call matches.</p>` : ''}
<nav class="pager">
  ${parsed.page > 1 ? pageButton(parsed.page - 1, '← Newer', 'prev') : ''}
  <span>Page ${parsed.page} of ${pages}</span>
  ${parsed.page < pages ? pageButton(parsed.page + 1, 'Older →', 'next') : ''}
</nav>`,
  });
}

/** Why a call's cost can be unknown (callCostUsd in llm/prices.ts), in the words of someone reading the page. */
const UNKNOWN_WHY = 'a model without a price (LLM_PRICES_FILE), or no token counts from the server';

/** A call's cost in its row: dollars; "demo" on the demo model, which nobody pays; a dash when a price is missing. */
function costCell(call: CallListing): Html | string {
  if (call.costUsd !== null) return formatUsd(call.costUsd);
  if (call.demo) return html`<span class="demo" title="${DEMO_WHY}">demo</span>`;
  return html`<span class="muted" title="not known: ${UNKNOWN_WHY}">${UNKNOWN_COST}</span>`;
}

/** What a demo call's cost is, for whoever wonders why it has none. */
const DEMO_WHY = 'the built-in demo model answered: no cost';

/**
 * What every matching call cost together. Calls of unknown cost are counted and said apart, never
 * added as $0: a sum that looks complete and is not would mislead whoever pays the bill. Calls on
 * the demo model are said apart again, in a plain colour: their cost is not missing, there is none.
 */
function costTotal(total: number, cost: CostTotal): Html | '' {
  if (total === 0) return '';
  const calls = (n: number) => `${n} call${n === 1 ? '' : 's'}`;
  const all = `LLM cost of ${total === 1 ? 'the call that matches' : `all ${total} calls that match`}`;
  const demo = cost.demo > 0 ? html`<span class="demo" id="cost-demo" title="${DEMO_WHY}">${cost.demo} demo call${cost.demo === 1 ? '' : 's'} (no cost)</span>` : '';
  if (cost.demo === total) return html`<p class="cost-total" id="cost-total">${all}: none — ${demo}</p>`;
  if (cost.usd === null && cost.demo === 0) {
    return html`<p class="cost-total" id="cost-total">${all}: <strong id="cost-sum">${UNKNOWN_COST}</strong> <span class="warning" id="cost-unknown">not known${total === 1 ? '' : ' for any of them'} (${UNKNOWN_WHY})</span></p>`;
  }
  const priced = total - cost.unknown - cost.demo;
  const sum = cost.usd === null ? UNKNOWN_COST : formatUsd(cost.usd);
  const unknown =
    cost.unknown > 0
      ? html`<span class="warning" id="cost-unknown">${calls(cost.unknown)} with no known cost (${UNKNOWN_COST}) ${cost.unknown === 1 ? 'is' : 'are'} not in the sum</span> <span class="muted">(${UNKNOWN_WHY})</span>`
      : '';
  const apart = [unknown, demo].filter((part) => part !== '');
  return html`<p class="cost-total" id="cost-total">${all}: <strong id="cost-sum">${sum}</strong>${priced > 0 && priced < total ? ` for ${priced} of them` : ''}${apart.map((part) => html`; ${part}`)}</p>`;
}

/** How many of the filter's fields are set: the folded filter's summary says so, so that a filtered list is not taken for all calls. */
function activeFilters(values: ParsedFilter['values']): number {
  // A field and the value it should have are one filter.
  return filterEntries(values).filter(([name]) => !(name === 'value' && values.field !== undefined)).length;
}

/** The summary cell's whole text, fields too: on one line it may end in an ellipsis. */
function summaryTitle(call: CallListing): string {
  const fields = call.fields ? Object.entries(call.fields).map(([name, value]) => `${name}: ${String(value)}`) : [];
  return [call.summary ?? '', ...fields].filter((part) => part !== '').join(' · ');
}

function fieldBadges(call: CallListing): Html {
  if (!call.fields) return html``;
  return html`<span class="fields">${Object.entries(call.fields).map(([name, value]) => html`<span class="field">${name}: ${String(value)}</span>`)}</span>`;
}
