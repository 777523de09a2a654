import express, { type Router } from 'express';
import { describeIssues } from '../protocol/parse-event.js';
import { requireAdminToken } from '../transport/auth.js';
import type { CsvExports } from '../transport/csv-export.js';
import { HttpError } from '../transport/http-error.js';
import type { CampaignRunner } from './campaign-runner.js';
import { parseContacts } from './contacts.js';
import { CampaignInputSchema, type CampaignStore } from './definition.js';
import { CampaignNotFoundError, InvalidCampaignError } from './errors.js';
import { progressOf } from './progress.js';
import { resultsCsv } from './results-csv.js';

export interface CampaignsRouterOptions {
  token: string | undefined;
  runner: CampaignRunner;
  repository: CampaignStore;
  defaultCountryCode: string | undefined;
  /** The process's CSV exports (their limit is shared with the dashboard's). */
  exports: CsvExports;
}

/**
 * /api/campaigns, behind the admin token like /api/calls:
 *   POST /api/campaigns                  a definition with its contacts (JSON rows or CSV text) → 201 {id}
 *   GET  /api/campaigns                  every campaign's progress
 *   GET  /api/campaigns/:id              one campaign's progress
 *   POST /api/campaigns/:id/pause        no new calls; calls in progress go on
 *   POST /api/campaigns/:id/resume
 *   GET  /api/campaigns/:id/results.csv  one row per contact
 */
export function campaignsRouter(options: CampaignsRouterOptions): Router {
  const router = express.Router();
  const { runner, repository, exports } = options;

  router.use('/api/campaigns', requireAdminToken(options.token));

  router.post('/api/campaigns', express.json({ limit: '5mb' }), function createCampaign(req, res) {
    if (!req.is('application/json')) throw new HttpError(415, 'Content-Type must be application/json');
    const parsed = CampaignInputSchema.safeParse(req.body);
    if (!parsed.success) throw new HttpError(400, `invalid campaign: ${describeIssues(parsed.error)}`);
    const { contacts: source, ...settings } = parsed.data;
    let contacts;
    try {
      contacts = parseContacts(source, { defaultCountryCode: options.defaultCountryCode });
    } catch (error) {
      if (error instanceof InvalidCampaignError) throw new HttpError(400, error.message);
      throw error;
    }
    const id = runner.create(settings, contacts);
    res.status(201).json({ id, contacts: contacts.length });
  });

  router.get('/api/campaigns', function listCampaigns(_req, res) {
    res.json({ campaigns: repository.campaigns().map((c) => progressOf(c, repository.tally(c.id))) });
  });

  router.get('/api/campaigns/:id', function showCampaign(req, res) {
    const campaign = found(() => runner.require(req.params.id!));
    res.json(progressOf(campaign, repository.tally(campaign.id)));
  });

  router.post('/api/campaigns/:id/pause', function pauseCampaign(req, res) {
    const campaign = found(() => runner.pause(req.params.id!));
    res.json(progressOf(campaign, repository.tally(campaign.id)));
  });

  router.post('/api/campaigns/:id/resume', function resumeCampaign(req, res) {
    const campaign = found(() => runner.resume(req.params.id!));
    res.json(progressOf(campaign, repository.tally(campaign.id)));
  });

  router.get('/api/campaigns/:id/results.csv', async function campaignResults(req, res) {
    const campaign = found(() => runner.require(req.params.id!));
    const pages = (after: number, limit: number) => repository.contactsAfter(campaign.id, after, limit);
    await exports.send(req, res, `campaign-${campaign.id}.csv`, resultsCsv(pages));
  });

  return router;
}

function found<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof CampaignNotFoundError) throw new HttpError(404, error.message);
    throw error;
  }
}
