import type { CallSummary, TurnSummary } from '../../call/ports/call-summary.js';
import { languageName } from '../../language/language-tag.js';
import { addUsage, type TokenUsage } from '../../llm/usage.js';
import { callCostUsd, onDemoModel, sumCost } from '../../llm/prices.js';
import type { StoredReport } from '../../store/report-repository.js';
import { html, type Html } from '../../html.js';
import { formatDuration, formatTime, formatUsd, layout, showNumber, UNKNOWN_COST } from '../layout.js';
import type { DeliveryState } from '../reads.js';
import type { TranscriptLine } from '../transcript-lines.js';
import type { StaffRole } from '../../staff/roles.js';
import { conversationList } from './conversation.js';

export interface StoryView {
  call: CallSummary;
  report: StoredReport | undefined;
  lines: readonly TranscriptLine[];
  transcriptProblem: string | undefined;
  deliveries: readonly DeliveryState[];
  /** The other stored calls the service gave the same session id, if it used one again. */
  otherCalls?: readonly { callId: string; startedAt: string }[] | undefined;
  numbersShown: boolean;
  role?: StaffRole | undefined;
  /** Why the person landed here instead of where they meant to go (a button pressed as the call ended). */
  notice?: string | undefined;
}

/** The stretches of a turn's wait, in order: each from the mark before it to its own. */
const STAGES = [
  ['llmRequestMs', 'Hotline', 'caller stopped speaking → LLM request'],
  ['llmFirstTokenMs', 'LLM', 'LLM request → first token'],
  ['firstSpeakMs', 'sentence', 'first token → first sentence sent as speak'],
  ['playbackStartedMs', 'voice', 'speak sent → the service began playing it'],
  ['playbackEndedMs', 'playing', 'playback'],
] as const satisfies readonly (readonly [keyof TurnSummary, string, string])[];

/** One call's story: who, how it ended, the report, the conversation as heard, and where each turn's time went. */
export function storyPage(view: StoryView): Html {
  const { call, report } = view;
  const party = call.direction === 'inbound' ? call.from : call.to;
  const callerLines = view.lines.filter((line) => line.role === 'user' && !line.mailbox);
  return layout({
    title: `Call ${formatTime(call.startedAt)}`,
    section: 'calls',
    root: '../',
    here: `calls/${encodeURIComponent(call.callId)}`,
    numbersShown: view.numbersShown,
    role: view.role,
    scripts: view.report ? [] : ['story.js'],
    body: html`<p><a href="../calls">← All calls</a></p>
${view.notice ? html`<p class="notice" role="status" id="notice">${view.notice}</p>` : ''}
<h1>${call.direction === 'inbound' ? 'Call from' : 'Call to'} ${showNumber(party, view.numbersShown)}</h1>
<dl class="facts">
  <dt>Started</dt><dd>${formatTime(call.startedAt)}</dd>
  <dt>Duration</dt><dd>${formatDuration(call.durationMs)}</dd>
  <dt>Ended</dt><dd><span class="reason reason-${call.endReason}">${call.endReason.replaceAll('_', ' ')}</span>${call.serviceReason ? html` (${call.serviceReason})` : ''}</dd>
  ${call.language ? html`<dt>Language</dt><dd class="language">${languageName(call.language)} <span class="muted">(${call.language})</span></dd>` : ''}
  <dt>Turns</dt><dd>${call.turns.length}</dd>
  <dt>Barge-ins</dt><dd>${call.bargeIns}</dd>
  ${callTokens(call.turns)}
  ${callCost(call.turns)}
  ${call.tags?.campaign ? html`<dt>Campaign</dt><dd>${call.tags.campaign}</dd>` : ''}
  ${call.variables && Object.keys(call.variables).length > 0 ? html`<dt>Variables</dt><dd>${Object.entries(call.variables).map(([k, v]) => html`<span class="field">${k}: ${v}</span>`)}</dd>` : ''}
  <dt>Session</dt><dd><code>${call.sessionId}</code></dd>
  ${view.otherCalls && view.otherCalls.length > 0 ? html`<dt>Same session id</dt><dd>${view.otherCalls.map((other) => html`<a class="field" href="${encodeURIComponent(other.callId)}">${formatTime(other.startedAt)}</a> `)}</dd>` : ''}
</dl>
${reportSection(report, view.deliveries, call.callId)}
<section id="conversation">
  <h2>Conversation</h2>
  ${view.transcriptProblem ? html`<p class="warning">${view.transcriptProblem}</p>` : ''}
  ${conversationList(view.lines)}
</section>
${knowledgeSection(call.turns, callerLines)}
${waterfall(call.turns, callerLines)}`,
  });
}

function reportSection(report: StoredReport | undefined, deliveries: readonly DeliveryState[], callId: string): Html {
  // story.js fetches the page again until the report is there, and puts it in this one's place.
  if (!report) return html`<section id="report" data-await="report"><h2>Report</h2><p class="muted" role="status">No report yet: it is being written, and shows here once it is ready.</p></section>`;
  return html`<section id="report">
  <h2>Report</h2>
  ${deliveryLine(deliveries, callId)}
  ${report.summary ? html`<p class="report-summary">${report.summary}</p>` : ''}
  ${
    report.fields
      ? html`<dl class="facts">${Object.entries(report.fields).map(([name, value]) => html`<dt>${name}</dt><dd>${String(value)}</dd>`)}</dl>`
      : html`<p class="muted">Fields ${report.fieldsStatus}${report.fieldsError ? html`: ${report.fieldsError}` : ''}.</p>`
  }
</section>`;
}

/** What became of the report's delivery to the webhook; one given up can be sent again from here. */
function deliveryLine(deliveries: readonly DeliveryState[], callId: string): Html {
  const last = deliveries.at(-1);
  if (!last) return html`<p class="delivery muted">Not sent to a webhook (no <code>REPORT_WEBHOOK_URL</code> when it was made).</p>`;
  const tries = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;
  switch (last.status) {
    case 'delivered':
      return html`<p class="delivery delivered">Delivered to the webhook ${last.deliveredAt ? formatTime(last.deliveredAt) : ''} (${tries(last.attempts)}).</p>`;
    case 'pending':
      return html`<p class="delivery pending">Being delivered: ${last.attempts === 0 ? 'not tried yet' : html`${tries(last.attempts)} failed (${last.lastError ?? ''}), next ${formatTime(new Date(last.nextAttemptAt).toISOString())}`}.</p>`;
    case 'failed':
      return html`<div class="delivery failed"><p role="alert">Delivery given up after ${tries(last.attempts)}: ${last.lastError ?? ''}.</p>
    <form method="post" action="${encodeURIComponent(callId)}/redeliver"><button type="submit" id="redeliver">Deliver again</button></form></div>`;
  }
}

/**
 * What each turn was given of the business's documents, and which passages its reply drew on: a
 * wrong answer is traced to the passage that said it, or to the question nothing answered.
 */
function knowledgeSection(turns: readonly TurnSummary[], callerLines: readonly TranscriptLine[]): Html | '' {
  if (!turns.some((turn) => turn.knowledge)) return '';
  return html`<section id="knowledge">
  <h2>From the documents</h2>
  <ol class="knowledge">
  ${turns.map((turn, i) => {
    if (!turn.knowledge) return '';
    const { passages, ms } = turn.knowledge;
    return html`<li value="${i + 1}"><span class="label">${callerLines[i]?.text ?? ''}</span> <span class="muted">(${ms.toFixed(2)} ms)</span>
      ${
        passages.length === 0
          ? html`<p class="muted">Nothing matched: the model was told not to guess.</p>`
          : html`<ul>${passages.map(
              (p) =>
                html`<li class="${p.used ? 'used' : ''}"><code>${p.source}</code>${p.heading ? html` › ${p.heading}` : ''}, ${p.page !== undefined ? html`page ${p.page}, ` : ''}line ${p.line} <span class="muted">score ${p.score}</span>${p.used ? html` · <strong>used</strong>` : ''}</li>`,
            )}</ul>`
      }
    </li>`;
  })}
  </ol>
</section>`;
}

/** Each turn as a row of bars on one scale, with its time axis: a slow turn is seen, not read. */
function waterfall(turns: readonly TurnSummary[], callerLines: readonly TranscriptLine[]): Html {
  if (turns.length === 0) return html``;
  const ends = turns.map((t) => t.playbackEndedMs ?? t.playbackStartedMs ?? t.firstSpeakMs ?? t.llmFirstTokenMs ?? 0);
  const { scale, ticks } = timeAxis(Math.max(1, ...ends));
  const pct = (ms: number) => `${((ms / scale) * 100).toFixed(2)}%`;
  return html`<section id="waterfall">
  <h2>Where the time went</h2>
  <p class="muted">From the moment the caller's words arrived. ${STAGES.slice(0, 4).map(([, label, what]) => html`<span class="legend stage-${label}">${label}</span> ${what}; `)}<span class="legend stage-playing">playing</span>.</p>
  <ol class="waterfall">
  ${turns.map((turn, i) => {
    let from = 0;
    const bars: Html[] = [];
    for (const [key, label, what] of STAGES) {
      const to = turn[key];
      if (to === undefined) continue;
      const width = Math.max(0, to - from);
      bars.push(html`<span class="bar stage-${label}" style="left:${pct(from)};width:${pct(width)}" title="${what}: ${width.toFixed(1)} ms"></span>`);
      from = to;
    }
    const first = turn.firstSpeakMs;
    return html`<li class="${turn.interrupted ? 'interrupted' : ''}${turn.failed ? ' failed' : ''}">
      <span class="label">${i + 1}. ${callerLines[i]?.text ?? ''}</span>
      <span class="track">${bars}</span>
      <span class="figure">${first !== undefined ? html`first speak ${Math.round(first)} ms` : turn.failed ? 'failed' : 'no speech'}${turn.interrupted ? ' · interrupted' : ''}${turnTokens(turn.tokens)}${turnCost(turn.costUsd)}</span>
    </li>`;
  })}
  </ol>
  <div class="waterfall-axis" aria-hidden="true"><span class="spacer"></span><span class="ticks">${ticks.map(
    (ms, i) => html`<span class="tick${i === 0 ? ' first' : ''}${i === ticks.length - 1 && i > 0 ? ' last' : ''}" style="left:${pct(ms)}">${formatMs(ms)}</span>`,
  )}</span><span class="unit">from the caller's words</span></div>
</section>`;
}

/** The call's LLM tokens, every turn's summed, when a server counted any: what the prompt cache saved shows here. */
function callTokens(turns: readonly TurnSummary[]): Html | '' {
  const sum = turns.reduce<TokenUsage | undefined>((total, turn) => (turn.tokens ? addUsage(total, turn.tokens) : total), undefined);
  if (!sum) return '';
  const cached = sum.cached === undefined ? 'the server did not say how many were cached' : `${count(sum.cached)} of them cached`;
  const reasoning = sum.reasoning ? ` (${count(sum.reasoning)} reasoning)` : '';
  return html`<dt>LLM tokens</dt><dd class="tokens">${count(sum.prompt)} prompt, ${cached}; ${count(sum.completion)} completion${reasoning}</dd>`;
}

/**
 * The call's LLM cost as the history lists and sums it (callCostUsd in llm/prices.ts), and when it is not known,
 * why — with what the priced turns cost, where some were.
 */
function callCost(turns: readonly TurnSummary[]): Html {
  const cost = callCostUsd(turns);
  if (cost !== null) return html`<dt>LLM cost</dt><dd class="cost" id="call-cost">${dollars(cost)}${turns.length === 0 ? html` <span class="muted">(no LLM turn)</span>` : ''}</dd>`;
  if (onDemoModel(turns)) return html`<dt>LLM cost</dt><dd class="cost demo" id="call-cost">demo <span class="muted">(the built-in demo model: no cost)</span></dd>`;
  const unpriced = [...new Set(turns.filter((turn) => turn.tokens && turn.costUsd === undefined).map((turn) => turn.model ?? 'the model'))];
  const why = unpriced.length > 0 ? `no price for ${unpriced.join(', ')} (LLM_PRICES_FILE)` : 'no token counts came from the server';
  const partial = sumCost(turns);
  return html`<dt>LLM cost</dt><dd class="cost unknown" id="call-cost">${UNKNOWN_COST} <span class="muted">not known: ${why}${partial === null ? '' : `; the turns with a price cost ${dollars(partial)}`}</span></dd>`;
}

/** Dollars to a tenth of a cent, or the fraction of a cent a short call costs (the history's figures too). */
export const dollars = formatUsd;

/** A turn's cached / prompt tokens under its figure; the rest in its title. */
function turnTokens(tokens: TokenUsage | undefined): Html | '' {
  if (!tokens) return '';
  const title = `prompt ${count(tokens.prompt)}, cached ${tokens.cached === undefined ? 'not said' : count(tokens.cached)}, completion ${count(tokens.completion)}${tokens.reasoning === undefined ? '' : `, reasoning ${count(tokens.reasoning)}`}`;
  return html`<span class="tokens" title="${title}">${tokens.cached === undefined ? '?' : count(tokens.cached)} / ${count(tokens.prompt)} tokens cached</span>`;
}

function turnCost(costUsd: number | undefined): Html | '' {
  return costUsd === undefined ? '' : html` <span class="cost">${dollars(costUsd)}</span>`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * The axis under the waterfall: round steps of 1, 2 or 5 (× 10ⁿ ms), four or five of them, and
 * the scale stretched to the last tick so that the axis ends on a labelled value.
 */
export function timeAxis(longestMs: number): { scale: number; ticks: number[] } {
  const rough = Math.max(longestMs, 1) / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? 10 * magnitude;
  const scale = Math.ceil(longestMs / step) * step || step;
  const ticks: number[] = [];
  for (let ms = 0; ms <= scale + step / 1000; ms += step) ticks.push(Math.round(ms * 1000) / 1000);
  return { scale, ticks };
}

/** 0 ms, 250 ms, 1 s, 1.5 s: milliseconds below a second, seconds from there. */
function formatMs(ms: number): string {
  if (ms < 1000) return `${Number(ms.toPrecision(3))} ms`;
  return `${Number((ms / 1000).toPrecision(3))} s`;
}
