import type { CampaignProgress } from '../../campaigns/progress.js';
import { html, type Html } from '../../html.js';
import type { StaffRole } from '../../staff/roles.js';
import { formatTime, layout } from '../layout.js';

export interface CampaignsPageOptions {
  numbersShown: boolean;
  role?: StaffRole | undefined;
  /** The AIFLOW_* variables not set: said above the form, before anyone types. */
  outboundMissing: readonly string[];
  /** The way back to the dashboard's root: '' at campaigns, '../' at campaigns/new (a form sent back with its problems). */
  root?: string;
  /** A campaign just created (from the redirect after the form). */
  created?: { id: string; contacts: number; merged: number } | undefined;
  /** The form as it was sent, and everything wrong with it. */
  form?: { definition: string; contacts: string; problems: readonly string[] } | undefined;
}

/** Longer pasted contacts are not sent back into the form: choosing the file again is quicker than scrolling it. */
const MAX_REFILL_CHARS = 200_000;

const DEFINITION_EXAMPLE = `name: spring check-in
time_zone: Europe/Berlin
calling_hours: { days: [mon, tue, wed, thu, fri], from: "09:00", to: "18:00" }
concurrency: 3
retries:
  no_answer: { times: 2, after_minutes: 30 }`;

const CONTACTS_EXAMPLE = `phone,name,topic
+49 151 1234567,Anna,your order 42`;

/** Every campaign's progress, a button to pause or resume it and a way to its calls; a form to start a new one. */
export function campaignsPage(campaigns: readonly CampaignProgress[], options: CampaignsPageOptions): Html {
  const root = options.root ?? '';
  return layout({
    title: 'Campaigns',
    section: 'campaigns',
    root,
    here: 'campaigns',
    numbersShown: options.numbersShown,
    role: options.role,
    body: html`<h1>Campaigns <span class="count">${campaigns.length}</span></h1>
${options.created ? createdNotice(options.created) : ''}
${newCampaign(options, campaigns.length === 0)}
${
  campaigns.length === 0
    ? html`<p class="muted">No campaign yet. Start one here, with <code>npm run campaign -- start campaign.yaml</code> or with <code>POST /api/campaigns</code> (docs/outbound-and-campaigns.md).</p>`
    : html`<div class="table-scroll"><table class="calls" id="campaigns">
  <thead><tr><th>Campaign</th><th>State</th><th>Contacts</th><th>Called</th><th>Reached</th><th>Voicemail</th><th>Pending</th><th>In a call</th><th>Next retry</th><th>Outcomes</th><th></th></tr></thead>
  <tbody>${campaigns.map(
    (c) => html`<tr data-campaign="${c.id}">
    <td data-label="Campaign"><span><strong>${c.name}</strong><br><span class="muted">started ${formatTime(c.createdAt)}</span></span></td>
    <td data-label="State"><span class="reason">${c.state}</span></td>
    <td data-label="Contacts"><span>${c.contacts}${c.merged > 0 ? html`<br><span class="muted">${c.merged} duplicate ${c.merged === 1 ? 'row' : 'rows'} merged</span>` : ''}</span></td><td data-label="Called">${c.called}</td><td data-label="Reached">${c.reached}</td><td data-label="Voicemail">${c.voicemail}</td><td data-label="Pending">${c.pending}</td><td data-label="In a call">${c.inCall}</td>
    <td data-label="Next retry">${c.nextRetry ? formatTime(c.nextRetry) : '—'}</td>
    <td data-label="Outcomes"><span>${Object.entries(c.outcomes)
      .filter(([, n]) => n > 0)
      .map(([outcome, n]) => html`<span class="field">${outcome.replaceAll('_', ' ')}: ${n}</span>`)}</span></td>
    <td class="actions">${
      c.state === 'done'
        ? ''
        : html`<form method="post" action="${root}campaigns" class="inline"><input type="hidden" name="campaign" value="${c.id}"><button type="submit" name="do" value="${c.state === 'running' ? 'pause' : 'resume'}">${c.state === 'running' ? 'Pause' : 'Resume'}</button></form>`
    }<form method="post" action="${root}calls" class="inline"><input type="hidden" name="campaign" value="${c.id}"><button type="submit">Its calls</button></form></td>
  </tr>`,
  )}</tbody>
</table></div>`
}`,
  });
}

function createdNotice(created: NonNullable<CampaignsPageOptions['created']>): Html {
  const merged = created.merged > 0 ? html` (${created.merged} duplicate ${created.merged === 1 ? 'row' : 'rows'} merged into the first with the same number)` : '';
  return html`<p role="status" id="created">Campaign started with ${created.contacts} ${created.contacts === 1 ? 'contact' : 'contacts'}${merged}.</p>`;
}

/**
 * The form goes through the same creation as POST /api/campaigns. Without the service's address and
 * token nothing can be started, and the form says so before anyone types; an AI flow and a billing
 * device may still come with the definition.
 */
function newCampaign(options: CampaignsPageOptions, open: boolean): Html {
  const root = options.root ?? '';
  const { outboundMissing: missing, form } = options;
  const blocked = missing.includes('AIFLOW_API_URL') || missing.includes('AIFLOW_ACCESS_TOKEN');
  const contacts = form && form.contacts.length <= MAX_REFILL_CHARS ? form.contacts : '';
  return html`<details id="new-campaign"${open || form ? html` open` : ''}>
<summary><h2 style="display:inline">New campaign</h2></summary>
${
  missing.length > 0
    ? html`<p class="warning" role="alert" id="outbound-missing">Outbound calling is not configured: set ${missing.map((name, i) => html`${i === 0 ? '' : i === missing.length - 1 ? ' and ' : ', '}<code>${name}</code>`)} and restart Hotline (docs/outbound-and-campaigns.md)${
        blocked ? '. Until then no campaign can be started.' : html`, or give <code>aiFlowId</code> and <code>billingDevice</code> in the definition.`
      }</p>`
    : ''
}
${
  form && form.problems.length > 0
    ? html`<div class="warning" role="alert" id="problems"><p>Not started: ${form.problems.length === 1 ? 'one problem' : `${form.problems.length} problems`}.</p><ul>${form.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
    : ''
}
${form && form.contacts.length > MAX_REFILL_CHARS ? html`<p class="muted">The contacts pasted were long: paste them or choose their file again.</p>` : ''}
<form method="post" action="${root}campaigns/new" enctype="multipart/form-data" id="new-campaign-form">
<fieldset${blocked ? html` disabled` : ''} style="border:0;padding:0;margin:0;display:grid;gap:.75rem;max-width:48rem">
  <label style="display:grid;gap:.25rem">Definition, YAML or JSON (docs/outbound-and-campaigns.md: name, time_zone, calling_hours, concurrency, retries, stop_list …)
    <textarea name="definition" rows="10" spellcheck="false" placeholder="${DEFINITION_EXAMPLE}" style="font-family:monospace">${form?.definition ?? ''}</textarea></label>
  <label style="display:grid;gap:.25rem">… or its file <input type="file" name="definition_file" accept=".yaml,.yml,.json,text/yaml,application/json"></label>
  <label style="display:grid;gap:.25rem">Contacts, CSV with a header: the number in <code>phone</code>, every other column a variable (or <code>contacts</code> in the definition)
    <textarea name="contacts" rows="8" spellcheck="false" placeholder="${CONTACTS_EXAMPLE}" style="font-family:monospace">${contacts}</textarea></label>
  <label style="display:grid;gap:.25rem">… or their file <input type="file" name="contacts_file" accept=".csv,text/csv,text/plain"></label>
  <p><button type="submit">Start the campaign</button> <span class="muted">Rows with the same number are merged into the first. Nothing starts while anything is wrong: every problem is listed.</span></p>
</fieldset>
</form>
</details>`;
}
