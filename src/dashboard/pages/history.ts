import { CALL_END_REASONS } from '../../call/ports/call-summary.js';
import type { CampaignProgress } from '../../campaigns/progress.js';
import type { CallListing } from '../../store/call-search.js';
import { filterEntries, type ParsedFilter } from '../filter-form.js';
import { html, type Html } from '../html.js';
import type { StaffRole } from '../../privacy/roles.js';
import { formatDuration, formatTime, layout, showNumber } from '../layout.js';

export const PAGE_SIZE = 50;

export interface HistoryView {
  parsed: ParsedFilter;
  calls: readonly CallListing[];
  total: number;
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
    section: 'calls',
    root: '',
    here: 'calls',
    numbersShown: view.numbersShown,
    role: view.role,
    body: html`<h1>Calls <span class="count" id="total">${total}</span></h1>
${
  view.failedDeliveries > 0
    ? html`<div class="warning" id="failed-deliveries"><p role="alert">${view.failedDeliveries} report${view.failedDeliveries === 1 ? '' : 's'} could not be delivered to the webhook: its receiver failed for longer than the retries last.</p>
<form method="post" action="redeliver"><button type="submit">Deliver them again</button></form></div>`
    : ''
}
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
  <button type="submit">Filter</button>
  <a href="calls" class="button">Clear</a>
</form>
${parsed.ignored.length > 0 ? html`<p class="warning" role="alert">Ignored, not understood: ${parsed.ignored.join(', ')}.</p>` : ''}
<form method="post" action="calls.csv" class="export">${hidden}<button type="submit" id="export">Export CSV (${total})</button></form>
<table class="calls" id="history">
  <thead><tr><th>Ended</th><th>Number</th><th>Direction</th><th>Duration</th><th>Ended how</th><th>Turns</th><th>Barge-ins</th><th>Summary</th></tr></thead>
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
    <td data-label="Summary" class="summary"><span>${call.summary ?? ''}${fieldBadges(call)}</span></td>
  </tr>`,
  )}
  </tbody>
</table>
${calls.length === 0 ? html`<p class="muted">No call matches.</p>` : ''}
<nav class="pager">
  ${parsed.page > 1 ? pageButton(parsed.page - 1, '← Newer', 'prev') : ''}
  <span>Page ${parsed.page} of ${pages}</span>
  ${parsed.page < pages ? pageButton(parsed.page + 1, 'Older →', 'next') : ''}
</nav>`,
  });
}

function fieldBadges(call: CallListing): Html {
  if (!call.fields) return html``;
  return html`<span class="fields">${Object.entries(call.fields).map(([name, value]) => html`<span class="field">${name}: ${String(value)}</span>`)}</span>`;
}
