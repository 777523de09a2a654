import type { CampaignProgress } from '../../campaigns/progress.js';
import { html, type Html } from '../html.js';
import { formatTime, layout } from '../layout.js';

/** Every campaign's progress, a button to pause or resume it (starting one is the CLI's and the API's), and a way to its calls. */
export function campaignsPage(campaigns: readonly CampaignProgress[], options: { numbersShown: boolean }): Html {
  return layout({
    title: 'Campaigns',
    section: 'campaigns',
    root: '',
    here: 'campaigns',
    numbersShown: options.numbersShown,
    body: html`<h1>Campaigns <span class="count">${campaigns.length}</span></h1>
${
  campaigns.length === 0
    ? html`<p class="muted">No campaign yet. Start one with <code>npm run campaign -- start campaign.yaml</code> or <code>POST /api/campaigns</code> (README, "Campaigns").</p>`
    : html`<table class="calls" id="campaigns">
  <thead><tr><th>Campaign</th><th>State</th><th>Contacts</th><th>Called</th><th>Reached</th><th>Voicemail</th><th>Pending</th><th>In a call</th><th>Next retry</th><th>Outcomes</th><th></th></tr></thead>
  <tbody>${campaigns.map(
    (c) => html`<tr data-campaign="${c.id}">
    <td data-label="Campaign"><span><strong>${c.name}</strong><br><span class="muted">started ${formatTime(c.createdAt)}</span></span></td>
    <td data-label="State"><span class="reason">${c.state}</span></td>
    <td data-label="Contacts">${c.contacts}</td><td data-label="Called">${c.called}</td><td data-label="Reached">${c.reached}</td><td data-label="Voicemail">${c.voicemail}</td><td data-label="Pending">${c.pending}</td><td data-label="In a call">${c.inCall}</td>
    <td data-label="Next retry">${c.nextRetry ? formatTime(c.nextRetry) : '—'}</td>
    <td data-label="Outcomes"><span>${Object.entries(c.outcomes)
      .filter(([, n]) => n > 0)
      .map(([outcome, n]) => html`<span class="field">${outcome.replaceAll('_', ' ')}: ${n}</span>`)}</span></td>
    <td class="actions">${
      c.state === 'done'
        ? ''
        : html`<form method="post" action="campaigns" class="inline"><input type="hidden" name="campaign" value="${c.id}"><button type="submit" name="do" value="${c.state === 'running' ? 'pause' : 'resume'}">${c.state === 'running' ? 'Pause' : 'Resume'}</button></form>`
    }<form method="post" action="calls" class="inline"><input type="hidden" name="campaign" value="${c.id}"><button type="submit">Its calls</button></form></td>
  </tr>`,
  )}</tbody>
</table>`
}`,
  });
}
