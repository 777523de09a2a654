import type { Request, Response, Router } from 'express';
import { readDefinitionText } from '../campaigns/definition-text.js';
import { describeProblem, InvalidCampaignError } from '../campaigns/errors.js';
import { CallNotPlacedError } from '../outbound/errors.js';
import { MAX_CAMPAIGN_BYTES, readCampaignForm } from './campaign-form.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { numbersShown } from './numbers-shown.js';
import { campaignsPage, type CampaignsPageOptions } from './pages/campaigns.js';
import { whoOf } from './gates.js';
import { formBody, sendPage } from './respond.js';
import type { Audit } from './staff-audit.js';

/** The campaigns page: each campaign paused or resumed, and the New campaign form. */
export function campaignRoutes(router: Router, deps: Pick<DashboardDeps, 'campaign' | 'createCampaign' | 'outboundMissing' | 'reads' | 'logger'>, audit: Audit): void {
  router.post('/dashboard/campaigns', formBody, async (req: Request, res: Response) => {
    const id = typeof req.body?.campaign === 'string' ? (req.body.campaign as string) : '';
    const action = req.body?.do === 'pause' || req.body?.do === 'resume' ? (req.body.do as 'pause' | 'resume') : undefined;
    if (!action) return void res.status(400).type('text').send('do is pause or resume');
    const outcome = await deps.campaign(id, action);
    deps.logger.info({ campaignId: id, action, outcome }, 'campaign paused or resumed on the dashboard');
    await audit(req, res, { action: 'campaign_change', detail: { campaign: id, do: action, outcome: typeof outcome === 'string' ? outcome : 'not_done' } });
    if (outcome === 'done') return res.redirect(303, 'campaigns');
    const notFound = outcome === 'not_found';
    res.status(notFound ? 404 : 409);
    const body = notFound
      ? html`<p><a href="campaigns">← Campaigns</a></p><h1>No such campaign</h1>`
      : html`<p><a href="campaigns">← Campaigns</a></p><h1>Not done</h1><p role="alert">${outcome.notDone}</p>`;
    sendPage(res, layout({ title: notFound ? 'No such campaign' : 'Not done', section: 'campaigns', root: '', body }));
  });
  const campaigns = async (req: Request, res: Response, more: Partial<CampaignsPageOptions> = {}): Promise<void> =>
    sendPage(res, campaignsPage(await deps.reads.campaigns(), { numbersShown: numbersShown(req), role: whoOf(res).role, outboundMissing: deps.outboundMissing(), ...more }));
  router.get('/dashboard/campaigns', async (req, res) => {
    // Back from the form: what was started (no personal data, so it may sit in the URL).
    const { created, contacts, merged } = req.query;
    const count = (value: unknown): number => (typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : 0);
    await campaigns(req, res, typeof created === 'string' && created !== '' ? { created: { id: created, contacts: count(contacts), merged: count(merged) } } : {});
  });
  router.get('/dashboard/campaigns/new', (_req, res) => res.redirect(303, '../campaigns#new-campaign'));
  // The New campaign form: the definition and the contacts, pasted or as files, created as POST /api/campaigns creates.
  router.post('/dashboard/campaigns/new', async (req: Request, res: Response) => {
    if (Number(req.headers['content-length'] ?? 0) > 2 * MAX_CAMPAIGN_BYTES + 64 * 1024) {
      res.status(413);
      return campaigns(req, res, { root: '../', form: { definition: '', contacts: '', problems: ['the form is larger than 10 MB: split the list into several campaigns'] } });
    }
    const sent = await readCampaignForm(req);
    try {
      if (sent.problems.length > 0) throw new InvalidCampaignError(sent.problems.map((message) => ({ field: '', message })));
      const definition = await readDefinitionText(sent.definition);
      const input =
        sent.contacts.trim() !== '' && definition !== null && typeof definition === 'object' && !Array.isArray(definition)
          ? { ...definition, contacts: sent.contacts }
          : definition;
      const created = await deps.createCampaign(fileNamedContacts(input));
      deps.logger.info({ campaignId: created.id, contacts: created.contacts, merged: created.merged }, 'campaign started on the dashboard');
      await audit(req, res, { action: 'campaign_create', detail: { campaign: created.id, contacts: created.contacts } });
      res.redirect(303, `../campaigns?created=${encodeURIComponent(created.id)}&contacts=${created.contacts}&merged=${created.merged}`);
    } catch (error) {
      // Shown with the form as it was sent, to be fixed there: every problem of the definition, or why none can start now.
      const refused =
        error instanceof InvalidCampaignError
          ? { status: 400, problems: error.problems.map(describeProblem) }
          : error instanceof CallNotPlacedError
            ? { status: error.status, problems: [error.message] }
            : undefined;
      if (!refused) throw error;
      res.status(refused.status);
      await campaigns(req, res, { root: '../', form: { definition: sent.definition, contacts: sent.contacts, problems: refused.problems } });
    }
  });
}

/**
 * A definition for the CLI names its contacts' file (`contacts: people.csv`); here the file is not
 * there to read: say where the contacts go instead.
 */
function fileNamedContacts(input: unknown): unknown {
  if (input === null || typeof input !== 'object') return input;
  const { contacts } = input as { contacts?: unknown };
  if (typeof contacts === 'string' && !contacts.includes('\n') && /\.(csv|json|txt)$/i.test(contacts.trim())) {
    throw new InvalidCampaignError([
      { field: 'contacts', message: `"${contacts.trim()}" names a file, which is not read here: paste its rows under Contacts, or choose the file there` },
    ]);
  }
  return input;
}
