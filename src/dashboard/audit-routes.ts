/** The audit log (admins): who did what, when, from where and on which call; filtered by person, action and time. */
import type { Router } from 'express';
import { AUDIT_ACTIONS } from '../privacy/audit-log.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { whoOf } from './gates.js';
import { html, type Html } from '../html.js';
import { formatTime, layout } from './layout.js';
import { sendPage } from './respond.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function auditRoutes(router: Router, deps: Pick<DashboardDeps, 'audit'>): void {
  router.get('/dashboard/audit', async (req, res) => {
    const query = (name: string): string => (typeof req.query[name] === 'string' ? (req.query[name] as string).trim().slice(0, 200) : '');
    const actor = query('actor');
    const action = (AUDIT_ACTIONS as readonly string[]).includes(query('action')) ? query('action') : '';
    const from = DATE.test(query('from')) ? query('from') : '';
    const to = DATE.test(query('to')) ? query('to') : '';
    const entries = deps.audit
      ? await deps.audit.list({ actor: actor || undefined, action: action || undefined, from: from ? `${from}T00:00:00.000Z` : undefined, to: to ? `${to}T23:59:59.999Z` : undefined, limit: 500 })
      : [];
    const body = html`<h1>Audit log</h1>
<form method="get" action="audit" class="filters">
  <label>Who <input name="actor" value="${actor}"></label>
  <label>Action <select name="action"><option value="">any</option>${AUDIT_ACTIONS.map((a) => html`<option${a === action ? html` selected` : ''}>${a}</option>`)}</select></label>
  <label>From <input type="date" name="from" value="${from}"></label>
  <label>To <input type="date" name="to" value="${to}"></label>
  <button type="submit">Filter</button>
</form>
${
  entries.length === 0
    ? html`<p class="muted" id="audit-empty">No entries${actor || action || from || to ? ' match' : ' yet'}.</p>`
    : html`<div class="table-scroll"><table class="grid" id="audit"><thead><tr><th>When (UTC)</th><th>Who</th><th>Role</th><th>Action</th><th>Call</th><th>From</th><th>Details</th></tr></thead><tbody>${entries.map(
        (e) =>
          html`<tr><td>${formatTime(e.at)}</td><td>${e.actor}</td><td>${e.role}</td><td>${e.action}</td><td>${
            e.session_id ? html`<a href="calls/${encodeURIComponent(e.session_id)}">${e.session_id}</a>` : '—'
          }</td><td>${e.source ?? '—'}</td>${detailCell(e.detail)}</tr>`,
      )}</tbody></table></div>`
}`;
    sendPage(res, layout({ title: 'Audit log', section: 'audit', root: '', role: whoOf(res).role, body }));
  });
}

/** An entry's details are JSON, one long token: on one line, cut with an ellipsis, and whole in the title. */
function detailCell(detail: Record<string, unknown> | null): Html {
  const text = detail ? JSON.stringify(detail) : '';
  return html`<td class="detail" title="${text}">${text}</td>`;
}
