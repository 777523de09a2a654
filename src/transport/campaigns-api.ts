import express, { type ErrorRequestHandler, type Response, type Router } from 'express';
import { CallNotPlacedError, OutboundNotConfiguredError } from '../outbound/errors.js';
import { requireAdminToken, type SecretGate } from './auth.js';
import type { CsvExports } from './csv-export.js';
import { HttpError } from './http-error.js';
import type { CampaignRunner } from '../campaigns/campaign-runner.js';
import { createCampaign } from '../campaigns/create-campaign.js';
import type { CampaignStore } from '../campaigns/definition.js';
import { CampaignNotFoundError, InvalidCampaignError } from '../campaigns/errors.js';
import { progressOf } from '../campaigns/progress.js';
import { resultsCsv } from '../campaigns/results-csv.js';

export interface CampaignsRouterOptions {
  token: string | undefined;
  /** The failure budget a wrong token spends, shared with every other edge. */
  gate: SecretGate;
  runner: CampaignRunner;
  repository: CampaignStore;
  defaultCountryCode: string | undefined;
  /** The process's CSV exports (their limit is shared with the dashboard's). */
  exports: CsvExports;
}

/**
 * /api/campaigns, behind the admin token like /api/calls:
 *   POST /api/campaigns                  a definition with its contacts (JSON rows or CSV text) → 201 {id, contacts, merged, duplicates};
 *                                        400 {error, problems: [{field, line?, message}], more?} names the problems
 *   GET  /api/campaigns                  every campaign's progress
 *   GET  /api/campaigns/:id              one campaign's progress
 *   POST /api/campaigns/:id/pause        no new calls; calls in progress go on
 *   POST /api/campaigns/:id/resume
 *   GET  /api/campaigns/:id/results.csv  one row per contact
 */
export function campaignsRouter(options: CampaignsRouterOptions): Router {
  const router = express.Router();
  const { runner, repository, exports } = options;

  router.use('/api/campaigns', requireAdminToken(options.token, options.gate));

  router.post('/api/campaigns', express.json({ limit: MAX_BODY }), async function startCampaign(req, res) {
    if (!req.is('application/json')) throw new HttpError(415, 'Content-Type must be application/json');
    try {
      res.status(201).json(await createCampaign(runner, req.body, { defaultCountryCode: options.defaultCountryCode }));
    } catch (error) {
      if (error instanceof InvalidCampaignError) return refuse(res, error);
      if (error instanceof OutboundNotConfiguredError) return void res.status(error.status).json({ error: error.message, missing: error.missing });
      if (error instanceof CallNotPlacedError) throw new HttpError(error.status, error.message);
      throw error;
    }
  });

  router.get('/api/campaigns', async function listCampaigns(_req, res) {
    const campaigns = await repository.campaigns();
    const progress = [];
    for (const c of campaigns) progress.push(progressOf(c, await repository.tally(c.id)));
    res.json({ campaigns: progress });
  });

  router.get('/api/campaigns/:id', async function showCampaign(req, res) {
    const campaign = await found(() => runner.require(req.params.id!));
    res.json(progressOf(campaign, await repository.tally(campaign.id)));
  });

  router.post('/api/campaigns/:id/pause', async function pauseCampaign(req, res) {
    const campaign = await found(() => runner.pause(req.params.id!));
    res.json(progressOf(campaign, await repository.tally(campaign.id)));
  });

  router.post('/api/campaigns/:id/resume', async function resumeCampaign(req, res) {
    let campaign;
    try {
      campaign = await found(() => runner.resume(req.params.id!));
    } catch (error) {
      // Resumed without the AIFLOW_* settings, it would burn its contacts: it stays paused.
      if (error instanceof OutboundNotConfiguredError) return void res.status(error.status).json({ error: error.message, missing: error.missing });
      throw error;
    }
    res.json(progressOf(campaign, await repository.tally(campaign.id)));
  });

  router.get('/api/campaigns/:id/results.csv', async function campaignResults(req, res) {
    const campaign = await found(() => runner.require(req.params.id!));
    const pages = (after: number, limit: number) => repository.contactsAfter(campaign.id, after, limit);
    await exports.send(req, res, `campaign-${campaign.id}.csv`, resultsCsv(pages));
  });

  router.use('/api/campaigns', tooLarge);
  return router;
}

/** Problems listed one by one in an answer: a list of 150,000 bad rows is not answered with 150,000. */
const PROBLEMS_IN_ANSWER = 100;

/** 400 with every problem: one sentence for people, and the list for a program (the CLI points each at its line). */
function refuse(res: Response, error: InvalidCampaignError): void {
  const { problems } = error;
  const more = problems.length - PROBLEMS_IN_ANSWER;
  res.status(400).json({ error: `invalid campaign: ${error.message}`, problems: problems.slice(0, PROBLEMS_IN_ANSWER), ...(more > 0 ? { more } : {}) });
}

const MAX_BODY = '5mb';

/** The body parser's 413, saying what to do about it. */
const tooLarge: ErrorRequestHandler = (error: unknown, _req, _res, next) => {
  if (error && typeof error === 'object' && 'type' in error && error.type === 'entity.too.large') {
    return next(
      new HttpError(413, `the campaign is larger than ${MAX_BODY.replace('mb', ' MB')}: send the contacts as CSV text (about 30 bytes a row), or split the list into several campaigns`),
    );
  }
  next(error);
};

async function found<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CampaignNotFoundError) throw new HttpError(404, error.message);
    throw error;
  }
}
