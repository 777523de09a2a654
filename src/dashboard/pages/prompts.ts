import type { PromptsCheck } from '../../prompts-check.js';
import type { PromptsStatus } from '../../prompts/prompt-store.js';
import { html, type Html } from '../../html.js';
import type { StaffRole } from '../../staff/roles.js';
import { formatTime, layout } from '../layout.js';

/**
 * The prompts in use, read-only: edits are made in the folder (or the
 * ConfigMap), and Hotline takes them by itself. Worded for whoever owns the
 * business's texts, not only for whoever runs Hotline.
 */
export function promptsPage(status: PromptsStatus, options: { numbersShown: boolean; role?: StaffRole | undefined }, checked?: PromptsCheck): Html {
  const check = status.lastCheck;
  return layout({
    title: 'Prompts',
    section: 'prompts',
    root: '',
    here: 'prompts',
    numbersShown: options.numbersShown,
    role: options.role,
    body: html`<h1>Prompts</h1>
<p class="muted">What the agent says is written in the files of the prompts folder. A change there is used from the next call on,
without a restart; a change with a mistake in it is not used, and the agent keeps speaking from the last version that worked.</p>
<dl class="facts" id="prompts-status">
  <dt>Folder</dt><dd><code>${status.dir}</code></dd>
  <dt>Version in use</dt><dd><code id="prompts-version">${status.version}</code></dd>
  <dt>In use since</dt><dd>${formatTime(status.loadedAt)} UTC</dd>
  <dt>Last check of the folder</dt><dd id="prompts-last-check">${lastCheck(check)}</dd>
</dl>
${check === undefined || check.problems.length === 0 ? '' : problems(check)}
<h2>Files in use <span class="count">${status.files.length}</span></h2>
${
  status.files.length === 0
    ? html`<p class="muted">No prompt file was found in the folder.</p>`
    : html`<ul id="prompt-files">${status.files.map((file) => html`<li><code>${file}</code></li>`)}</ul>`
}
<p class="muted">Any prompt not listed here is spoken from Hotline's built-in wording.</p>
${checked ? everyFile(checked) : ''}`,
  });
}

/** The folder as `npm run prompts:check` sees it now: prompts, report.md, tools and voicemail.yaml. */
function everyFile(checked: PromptsCheck): Html {
  return html`<h2>Every file, as <code>npm run prompts:check</code> sees it <span class="count" id="check-problems">${checked.problems}</span></h2>
<p class="muted">${checked.problems === 0 ? 'No problem in any file.' : `${checked.problems} problem${checked.problems === 1 ? '' : 's'} to look at.`}</p>
<div class="table-scroll"><table class="calls" id="prompts-check">
  <thead><tr><th>File</th><th>Holds</th><th>Problems</th></tr></thead>
  <tbody>${checked.files.map(
    (file) => html`<tr>
    <td data-label="File"><code>${file.file}</code></td>
    <td data-label="Holds">${file.summary}</td>
    <td data-label="Problems"><span>${file.problems.length === 0 ? html`<span class="muted">none</span>` : file.problems.map((p) => html`<div class="${p.severity === 'error' ? 'warning' : ''}">${p.severity}: ${p.message}</div>`)}</span></td>
  </tr>`,
  )}</tbody>
</table></div>`;
}

function lastCheck(check: PromptsStatus['lastCheck']): Html {
  if (check === undefined) return html`<span class="muted">Not checked again since Hotline started.</span>`;
  const at = html`<span class="muted">(checked ${formatTime(check.at)} UTC)</span>`;
  if (!check.ok) {
    return html`<strong class="warning">Not used: the folder has mistakes, so Hotline kept the last good version.</strong> ${at}`;
  }
  const warnings = check.problems.length;
  return warnings === 0
    ? html`<span>Read without problems.</span> ${at}`
    : html`<span>Read and in use, with ${warnings} ${warnings === 1 ? 'thing' : 'things'} worth a look below.</span> ${at}`;
}

function problems(check: NonNullable<PromptsStatus['lastCheck']>): Html {
  return html`<h2>${check.ok ? 'Worth a look' : 'What to fix'}</h2>
<div class="table-scroll"><table class="calls" id="prompt-problems">
  <thead><tr><th>File</th><th>Severity</th><th>What is wrong</th></tr></thead>
  <tbody>${check.problems.map(
    (p) => html`<tr>
    <td data-label="File"><code>${p.file}</code></td>
    <td data-label="Severity">${p.severity === 'error' ? html`<span class="warning">error: stops the change being used</span>` : 'warning: in use, worth a look'}</td>
    <td data-label="What is wrong">${p.message}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}
