import { html, type Html } from '../../html.js';
import type { StaffRole } from '../../staff/roles.js';
import { layout } from '../layout.js';

/** The calls in progress; live.js fills the table from the server's event stream. */
export function livePage(options: { numbersShown: boolean; role?: StaffRole | undefined }): Html {
  return layout({
    title: 'Live calls',
    section: 'live',
    root: '',
    numbersShown: options.numbersShown,
    role: options.role,
    scripts: ['live.js'],
    body: html`<h1>Calls in progress <span id="live-count" class="count">…</span></h1>
<p id="live-state" class="muted" role="status">Connecting…</p>
<div class="table-scroll">
<table id="live-calls" class="calls">
  <thead><tr><th>Number</th><th>Direction</th><th>Duration</th><th>State</th><th>Caller said</th><th>Hotline said</th></tr></thead>
  <tbody></tbody>
</table>
</div>
<p id="live-empty" class="muted">No call in progress. Calls appear here as they start, and stay a moment after they end.</p>
<p class="muted">A call's number opens its conversation so far.</p>`,
  });
}

/** The browser side of the live page: an EventSource on `live`, rows kept by session id, durations ticking locally. */
export const LIVE_SCRIPT = String.raw`(function () {
  'use strict';
  var rows = new Map();
  var tbody = document.querySelector('#live-calls tbody');
  var empty = document.getElementById('live-empty');
  var count = document.getElementById('live-count');
  var state = document.getElementById('live-state');
  var LINGER_MS = 8000;
  // Each cell carries its column's name: on a phone the table becomes one card per call.
  var labels = Array.prototype.map.call(document.querySelectorAll('#live-calls thead th'), function (th) { return th.textContent; });

  function text(el, value) { el.textContent = value == null ? '' : String(value); }
  function duration(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
  }
  function refresh() {
    var live = 0;
    rows.forEach(function (row) { if (!row.ended) live++; });
    text(count, live);
    empty.hidden = rows.size > 0;
  }
  function upsert(call) {
    var row = rows.get(call.sessionId);
    if (!row) {
      var tr = document.createElement('tr');
      tr.dataset.session = call.sessionId;
      for (var i = 0; i < 6; i++) {
        var td = document.createElement('td');
        td.dataset.label = labels[i] || '';
        tr.appendChild(td);
      }
      tbody.insertBefore(tr, tbody.firstChild);
      row = { tr: tr, startedAt: Date.parse(call.startedAt), ended: false };
      rows.set(call.sessionId, row);
    }
    var cells = row.tr.children;
    // The number opens the call: its conversation so far, then its story.
    var open = cells[0].firstChild;
    if (!open) {
      open = document.createElement('a');
      open.href = 'calls/' + encodeURIComponent(call.sessionId);
      cells[0].appendChild(open);
    }
    text(open, call.number);
    text(cells[1], call.direction);
    text(cells[3], call.phase);
    cells[3].className = 'phase phase-' + call.phase;
    text(cells[4], call.callerSaid);
    text(cells[5], call.agentSaid);
    row.startedAt = Date.parse(call.startedAt);
    tick();
    refresh();
  }
  function end(sessionId) {
    var row = rows.get(sessionId);
    if (!row || row.ended) return;
    row.ended = true;
    row.endedAt = Date.now();
    row.tr.classList.add('ended');
    var cell = row.tr.children[3];
    cell.className = 'phase phase-ended';
    cell.textContent = '';
    var link = document.createElement('a');
    link.href = 'calls/' + encodeURIComponent(sessionId);
    link.textContent = 'ended · story';
    cell.appendChild(link);
    setTimeout(function () { row.tr.remove(); rows.delete(sessionId); refresh(); }, LINGER_MS);
    refresh();
  }
  function tick() {
    var now = Date.now();
    rows.forEach(function (row) { text(row.tr.children[2], duration((row.ended ? row.endedAt : now) - row.startedAt)); });
  }
  setInterval(tick, 1000);

  var source = new EventSource('live');
  source.addEventListener('open', function () { text(state, 'Live: updates arrive as they happen.'); });
  // Closed for good: the login ended (logged out, or the account changed), and the stream is refused.
  source.addEventListener('error', function () { text(state, source.readyState === 2 ? 'The live view has closed: log in again to see it.' : 'Connection lost; reconnecting…'); });
  source.addEventListener('snapshot', function (event) {
    var calls = JSON.parse(event.data);
    var seen = new Set(calls.map(function (c) { return c.sessionId; }));
    rows.forEach(function (row, id) { if (!seen.has(id) && !row.ended) end(id); });
    calls.forEach(upsert);
    refresh();
    document.body.dataset.live = 'ready';
  });
  source.addEventListener('update', function (event) {
    var update = JSON.parse(event.data);
    update.calls.forEach(upsert);
    update.ended.forEach(end);
  });
})();
`;
