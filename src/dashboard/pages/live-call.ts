import type { CallActivity } from '../../call/ports/call-activity.js';
import { html, type Html } from '../../html.js';
import { formatTime, layout, showNumber } from '../layout.js';
import type { TranscriptLine } from '../transcript-lines.js';
import type { StaffRole } from '../../staff/roles.js';
import { conversationList } from './conversation.js';

export interface LiveCallView {
  call: CallActivity;
  /** The transcript as written so far: a reply is written once it has played, or was cut. */
  lines: readonly TranscriptLine[];
  transcriptProblem: string | undefined;
  numbersShown: boolean;
  role?: StaffRole | undefined;
  /** Where the call can be handed over: TRANSFER_TARGET, and the named targets. */
  transferTargets: { readonly default: boolean; readonly named: readonly string[] };
  /** What the caller hears before a handover or a hangup, as the confirmation quotes it. */
  operatorLines: OperatorLines;
  /** Why the person landed here (a button pressed as the call was ending). */
  notice?: string | undefined;
}

/** operator-transfer.md and operator-goodbye.md as this call would speak them. */
export interface OperatorLines {
  readonly transfer: string;
  readonly goodbye: string;
}

/**
 * A call in progress, at its story's address: the conversation so far and
 * what is happening now. call-live.js keeps it current, and shows the story
 * in its place once the call has ended.
 */
export function liveCallPage(view: LiveCallView): Html {
  const { call } = view;
  const party = call.direction === 'inbound' ? call.from : call.to;
  return layout({
    title: 'Call in progress',
    section: 'live',
    root: '../',
    here: `calls/${encodeURIComponent(call.sessionId)}`,
    numbersShown: view.numbersShown,
    role: view.role,
    scripts: ['call-live.js'],
    body: html`<p><a href="../">← Live calls</a></p>
${view.notice ? html`<p class="notice" role="status" id="notice">${view.notice}</p>` : ''}
<div id="live-call" data-session="${call.sessionId}">
<h1>${call.direction === 'inbound' ? 'Call from' : 'Call to'} ${showNumber(party, view.numbersShown)} <span class="badge live">in progress</span></h1>
<p id="live-call-state" class="muted" role="status">This page follows the call as it happens.</p>
<div id="live-call-now">
<dl class="facts">
  <dt>Started</dt><dd>${formatTime(call.startedAt)}</dd>
  <dt>State</dt><dd><span class="phase phase-${call.phase}">${call.phase}</span></dd>
  <dt>Session</dt><dd><code>${call.sessionId}</code></dd>
</dl>
<section id="conversation">
  <h2>Conversation so far</h2>
  ${view.transcriptProblem ? html`<p class="warning">${view.transcriptProblem}</p>` : ''}
  ${conversationList(view.lines)}
  <p class="muted now">Latest words — caller: <q class="caller-said">${call.callerSaid ?? '—'}</q> · Hotline: <q class="agent-said">${call.agentSaid ?? '—'}</q></p>
</section>
</div>
${stepIn(call.sessionId, view.transferTargets, view.operatorLines)}
</div>`,
  });
}

/** A person steps in: hand the call to a colleague (when there is a target), or end it. Each asks first (call-live.js). */
function stepIn(sessionId: string, targets: LiveCallView['transferTargets'], lines: OperatorLines): Html {
  const id = encodeURIComponent(sessionId);
  const choices = [...(targets.default ? [['', 'the default target (TRANSFER_TARGET)']] : []), ...targets.named.map((name) => [name, name])];
  return html`<section id="step-in">
  <h2>Step in</h2>
  ${
    choices.length === 0
      ? html`<p class="muted">Set <code>TRANSFER_TARGET</code> to hand calls to a colleague from here.</p>`
      : html`<form method="post" action="${id}/transfer" data-confirm="${confirmation('Hand this call over now?', lines.transfer, 'then the call goes to the person chosen.')}">
    ${choices.length > 1 ? html`<label>To <select name="target">${choices.map(([value, label]) => html`<option value="${value}">${label}</option>`)}</select></label>` : html`<input type="hidden" name="target" value="${choices[0]![0]}">`}
    <button type="submit" id="transfer-call">Transfer to a person</button>
  </form>`
  }
  <form method="post" action="${id}/hangup" data-confirm="${confirmation('End this call now?', lines.goodbye, 'then Hotline hangs up.')}">
    <button type="submit" id="hang-up-call" class="danger">End the call</button>
  </form>
</section>`;
}

/** The question, and the words the caller will hear first: the person deciding should know what is said for them. */
function confirmation(question: string, line: string, after: string): string {
  return line === '' ? `${question} Hotline says nothing first; ${after}` : `${question}\n\nThe caller hears: “${line}”\n\nand ${after}`;
}

/**
 * The browser side: on each change of this call in the live stream, the page
 * is fetched again and its live part swapped in (one fetch at a time); once
 * the call has ended, the page reloads as the call's story.
 */
export const CALL_LIVE_SCRIPT = String.raw`(function () {
  'use strict';
  var root = document.getElementById('live-call');
  if (!root) return;
  var session = root.dataset.session;
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) { if (!window.confirm(form.dataset.confirm)) event.preventDefault(); });
  });
  var state = document.getElementById('live-call-state');
  var fetching = false;
  var again = false;
  var ended = false;

  function page() {
    return fetch(location.href, { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
      return res.text().then(function (text) { return { status: res.status, doc: new DOMParser().parseFromString(text, 'text/html') }; });
    });
  }
  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    page().then(function (got) {
      var fresh = got.doc.getElementById('live-call-now');
      if (fresh && !ended) document.getElementById('live-call-now').replaceWith(fresh);
      else if (!fresh && got.status === 200) location.reload();
    }).catch(function () {}).then(function () {
      fetching = false;
      if (again) { again = false; refresh(); }
    });
  }
  // The story is stored as the call ends; until it is, the address answers "no such call".
  function awaitStory(tries) {
    page().then(function (got) {
      if (got.status === 200 && !got.doc.getElementById('live-call')) return location.reload();
      if (tries > 0) setTimeout(function () { awaitStory(tries - 1); }, 500);
      else state.textContent = 'The call has ended; its story is not stored yet. Reload in a moment.';
    }).catch(function () { state.textContent = 'The call has ended. Reload to see its story.'; });
  }
  function end() {
    if (ended) return;
    ended = true;
    source.close();
    state.textContent = 'The call has ended; its story follows.';
    document.body.dataset.callLive = 'ended';
    awaitStory(20);
  }

  var source = new EventSource('../live');
  source.addEventListener('error', function () { if (!ended) state.textContent = source.readyState === 2 ? 'The live view has closed: log in again to see it.' : 'Connection lost; reconnecting…'; });
  source.addEventListener('snapshot', function (event) {
    var calls = JSON.parse(event.data);
    if (!calls.some(function (c) { return c.sessionId === session; })) return end();
    state.textContent = 'Live: the conversation grows as it happens.';
    document.body.dataset.callLive = 'ready';
    refresh();
  });
  source.addEventListener('update', function (event) {
    var update = JSON.parse(event.data);
    if (update.ended.indexOf(session) >= 0) return end();
    if (update.calls.some(function (c) { return c.sessionId === session; })) refresh();
  });
})();
`;
