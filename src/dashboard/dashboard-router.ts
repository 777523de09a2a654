import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type CookieOptions, type NextFunction, type Request, type Response, type Router } from 'express';
import type { CallActivity } from '../call/ports/call-activity.js';
import type { CallControl, ControlOutcome } from '../call/ports/call-control.js';
import { csvLines, type CsvCell } from '../csv.js';
import type { Logger } from '../logger.js';
import { checkSecret, type SecretGate } from '../transport/auth.js';
import { CsvExports } from '../transport/csv-export.js';
import { HttpError } from '../transport/http-error.js';
import type { CallListing } from '../store/call-search.js';
import { DAY_RANGES } from '../store/call-stats.js';
import { parseFilter } from './filter-form.js';
import { html, type Html } from './html.js';
import { layout, showNumber } from './layout.js';
import type { LiveCalls } from './live-calls.js';
import { historyPage, PAGE_SIZE } from './pages/history.js';
import { LIVE_SCRIPT, livePage } from './pages/live.js';
import { CALL_LIVE_SCRIPT, liveCallPage, type OperatorLines } from './pages/live-call.js';
import { storyPage } from './pages/story.js';
import { campaignsPage, type CampaignsPageOptions } from './pages/campaigns.js';
import { MAX_CAMPAIGN_BYTES, readCampaignForm } from './campaign-form.js';
import type { CreatedCampaign } from '../campaigns/create-campaign.js';
import { describeProblem, InvalidCampaignError } from '../campaigns/errors.js';
import { readDefinitionText } from '../campaigns/definition-text.js';
import { CallNotPlacedError } from '../outbound/errors.js';
import { chartsPage } from './pages/charts.js';
import { promptsPage } from './pages/prompts.js';
import { CHARTS_SCRIPT } from './charts-script.js';
import type { PromptSet, PromptsStatus } from '../prompts/prompt-store.js';
import { builtinVariables } from '../prompts/builtins.js';
import { STORY_SCRIPT } from './story-script.js';
import type { DashboardReads } from './reads.js';
import { crossOriginProblem } from './same-origin.js';
import { COOKIE_NAME, cookieOf, SECURE_COOKIE_NAME, SESSION_MS, SessionCookies } from './session-cookie.js';
import { DASHBOARD_CSS } from './styles.js';
import { FAVICON_SVG } from './favicon.js';

/** What the dashboard reads; `server.ts` hands in the store's and the call core's parts. */
export interface DashboardDeps {
  /** Without it the dashboard is off: every page says how to turn it on. */
  adminToken: string | undefined;
  live: LiveCalls;
  /** The database's calls and reports, read off the call path (see ThreadReads). */
  reads: DashboardReads;
  /** Where a call's transcript is being written: a call in progress is shown from it. */
  transcriptFileOf(sessionId: string): string;
  /** Hands a call in progress over, or ends it, for the person watching. */
  control: CallControl;
  /** Whether the call ended in this process (its story may not be stored yet). */
  callEnded(sessionId: string): boolean;
  /** The prompts in use, for the lines an operator's handover or hangup makes the caller hear. */
  prompts(): PromptSet;
  /** TZ of the built-in date and time placeholders. */
  timeZone: string | undefined;
  /** Sends reports whose delivery was given up again (all, or one call's); undefined without a report webhook. */
  redeliver(which?: { callId: string }): number | undefined;
  /**
   * Pauses or resumes a campaign: no new calls while paused, calls in progress go on. 'not_found' for no such
   * campaign; why not, for one that cannot be resumed (outbound calling not configured).
   */
  campaign(id: string, action: 'pause' | 'resume'): 'done' | 'not_found' | { notDone: string };
  /** Creates a campaign as POST /api/campaigns does: the same checks, the same errors. */
  createCampaign(input: unknown): Promise<CreatedCampaign>;
  /** The AIFLOW_* variables not set, which campaigns need: the campaigns page says so before anyone types. */
  outboundMissing(): string[];
  /** The prompts folder's version in use and its last check. */
  promptsStatus(): PromptsStatus;
  /** The failure budget a wrong admin token spends, shared with every other edge. */
  gate: SecretGate;
  /** The process's CSV exports, shared with the campaigns' results (one limit for both); its own without. */
  exports?: CsvExports | undefined;
  logger: Logger;
}

const NUMBERS_COOKIE = 'hotline_numbers';
/** At most this many live views at once: each holds a connection open. */
const MAX_VIEWERS = 20;
const KEEPALIVE_MS = 25_000;
/** Calls per slice of a CSV export: formatting a slice here takes about half a millisecond. */
const CSV_BATCH = 100;

/**
 * The dashboard under /dashboard: live calls, the history, each call's story.
 * Server-rendered pages and a few small scripts; every link is relative, so it
 * works under whatever prefix a reverse proxy adds. Behind the admin token,
 * given once at a login form and kept as a session in an HttpOnly, SameSite
 * cookie; whatever may change something must come from the dashboard's own pages.
 */
export function dashboardRouter(deps: DashboardDeps): Router {
  const router = express.Router();
  const token = deps.adminToken;
  // Before anything else: every page names it, the page saying the dashboard is off too.
  const favicon = (_req: Request, res: Response) => void res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(FAVICON_SVG);
  router.get('/dashboard/assets/favicon.svg', favicon);
  router.get('/favicon.ico', favicon);
  if (token === undefined) {
    router.use('/dashboard', (_req, res) => {
      res.status(404).type('html').send(
        layout({ title: 'Dashboard off', root: '', body: html`<div class="login"><h1>The dashboard is off</h1><p>Set <code>ADMIN_TOKEN</code> and restart Hotline to turn it on.</p></div>` }).text,
      );
    });
    return router;
  }
  const sessions = new SessionCookies(token);
  const exports = deps.exports ?? new CsvExports(deps.logger);
  const chartJs = chartJsSource();
  const scripts: Record<string, string> = { 'live.js': LIVE_SCRIPT, 'call-live.js': CALL_LIVE_SCRIPT, 'charts.js': CHARTS_SCRIPT, 'story.js': STORY_SCRIPT, ...(chartJs ? { 'chart.umd.min.js': chartJs } : {}) };
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });

  // Nothing of the dashboard is cached or framed, and its pages load nothing from elsewhere.
  router.use('/dashboard', (_req, res, next) => {
    res.set({
      'Cache-Control': 'no-store',
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
    });
    next();
  });

  // Before anything else, the login and the logout too: a page elsewhere on this host (another port,
  // a sibling subdomain) is "same site", so the browser would send the cookie with its forms.
  router.use('/dashboard', (req: Request, res: Response, next: NextFunction) => {
    const problem = crossOriginProblem(req);
    if (problem === undefined) return next();
    deps.logger.warn({ method: req.method, path: pathOf(req), problem }, 'dashboard request from elsewhere refused');
    res.status(403);
    sendPage(res, layout({ title: 'Refused', root: rootOf(req), body: html`<div class="login"><h1>Refused</h1><p role="alert">This request was ${problem}: only the dashboard's own pages may change anything. Nothing was done.</p></div>` }));
  });

  router.get('/dashboard/assets/dashboard.css', (_req, res) => void res.type('css').send(DASHBOARD_CSS));
  router.get('/dashboard/assets/:name', (req, res, next) => {
    const name = String(req.params.name);
    // Own names only: "constructor" is not a script.
    if (!Object.hasOwn(scripts, name)) return next();
    const script = scripts[name]!;
    res.type('js').send(script);
  });

  router.get('/dashboard/login', (req, res) => void sendPage(res, loginPage(rootOf(req), undefined)));
  router.post('/dashboard/login', form, async (req: Request, res: Response) => {
    const presented = typeof req.body?.token === 'string' ? (req.body.token as string) : undefined;
    // As at every edge: an address out of failures is refused before the token is compared.
    try {
      await checkSecret(req, deps.gate, presented, token, 'admin token');
    } catch (error) {
      if (!(error instanceof HttpError) || (error.status !== 401 && error.status !== 429)) throw error;
      deps.logger.warn({ ip: req.ip, status: error.status }, 'dashboard login refused');
      if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
      res.status(error.status);
      const problem = error.status === 401 ? 'That is not the admin token.' : `Too many wrong tokens from this address: try again in ${error.retryAfterSeconds ?? 60} s.`;
      return sendPage(res, loginPage('', problem));
    }
    res.cookie(cookieName(req), sessions.issue(Date.now()), sessionCookieOptions(req, SESSION_MS));
    res.redirect(303, './');
  });

  router.get('/dashboard', (req, res, next) => {
    // /dashboard without its slash: relative links would resolve one level too high.
    if (pathOf(req) === '/dashboard') return res.redirect(301, 'dashboard/');
    next();
  });

  // Every page below needs a session in force; without one the browser goes to the login form.
  router.use('/dashboard', (req: Request, res: Response, next: NextFunction) => {
    const session = sessions.sessionOf(sessionCookieOf(req), Date.now());
    if (session !== undefined) {
      res.locals.session = session;
      return next();
    }
    if (req.method === 'GET' && req.accepts(['html', 'json']) === 'html') return res.redirect(303, `${rootOf(req)}login`);
    res.status(401).json({ error: 'log in to the dashboard first' });
  });

  // Live views open per session: a logout closes its own at once.
  const liveViews = new Map<string, Set<() => void>>();
  router.post('/dashboard/logout', (req, res) => {
    const ended = sessions.end(sessionCookieOf(req));
    for (const close of (ended && liveViews.get(ended)) || []) close();
    res.clearCookie(cookieName(req), sessionCookieOptions(req));
    res.redirect(303, 'login');
  });
  router.post('/dashboard/numbers', form, (req, res) => {
    const show = req.body?.show === 'yes';
    res.cookie(NUMBERS_COOKIE, show ? 'shown' : 'masked', { httpOnly: true, sameSite: 'strict', secure: req.secure, maxAge: SESSION_MS });
    // Back where the button was pressed: a path of ours below the root, never anywhere else.
    const back = typeof req.body?.back === 'string' ? (req.body.back as string) : '';
    // %2e%2e is ".." to a browser resolving the URL.
    const ours = /^(?:[\w%.-]+\/)*[\w%.-]*$/.test(back) && !back.split('/').includes('..') && !/%2e/i.test(back);
    res.redirect(303, ours ? `./${back}` : './');
  });

  router.get('/dashboard/', (req, res) => void sendPage(res, livePage({ numbersShown: numbersShown(req) })));

  router.get('/dashboard/live', (req, res) => {
    if (deps.live.viewerCount >= MAX_VIEWERS) return void res.status(503).json({ error: 'too many live views open' });
    const shown = numbersShown(req);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    const stop = deps.live.watch({
      view: (call) => liveView(call, shown),
      send: (event, data) => void res.write(`event: ${event}\ndata: ${data}\n\n`),
    });
    const session = res.locals.session as string;
    const close = () => res.end();
    const views = liveViews.get(session) ?? new Set();
    liveViews.set(session, views.add(close));
    // A session that expired (or was logged out in another process) ends its stream within a keep-alive.
    const keepAlive = setInterval(() => (sessions.valid(sessionCookieOf(req), Date.now()) ? res.write(': keep-alive\n\n') : close()), KEEPALIVE_MS);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      stop();
      views.delete(close);
      if (views.size === 0) liveViews.delete(session);
    });
  });

  const history = async (req: Request, res: Response) => {
    const input = { ...(req.query as Record<string, unknown>), ...((req.body ?? {}) as Record<string, unknown>) };
    const parsed = parseFilter(input);
    const { reads } = deps;
    const [{ calls, total }, fieldNames, campaigns, failedDeliveries] = await Promise.all([
      reads.page(parsed.filter, PAGE_SIZE, (parsed.page - 1) * PAGE_SIZE),
      reads.fieldNames(),
      reads.campaigns(),
      reads.failedDeliveries(),
    ]);
    sendPage(res, historyPage({ parsed, calls, total, fieldNames, campaigns, failedDeliveries, numbersShown: numbersShown(req) }));
  };
  router.get('/dashboard/calls', history);
  router.post('/dashboard/calls', form, history);

  router.post('/dashboard/calls.csv', form, async (req: Request, res: Response) => {
    const { filter } = parseFilter((req.body ?? {}) as Record<string, unknown>);
    const shown = numbersShown(req);
    const { reads } = deps;
    // A batch at a time, each only once the client has taken the last: never the whole file in memory.
    async function* rows(): AsyncGenerator<string> {
      yield csvLines([CSV_COLUMNS]);
      for (let after: CallListing | undefined; ; ) {
        const batch = await reads.batch(filter, after, CSV_BATCH);
        if (batch.length === 0) return;
        yield csvLines(batch.map((call) => csvRow(call, shown)));
        after = batch.at(-1);
      }
    }
    await exports.send(req, res, 'hotline-calls.csv', rows());
  });

  router.get('/dashboard/calls/:sessionId', async (req: Request, res: Response) => {
    // A call id (a stored call's link), or a session id (a call in progress, or the latest call with it).
    const sessionId = String(req.params.sessionId);
    const notice = noticeOf(req.query.was);
    const inProgress = deps.live.get(sessionId);
    const found = await deps.reads.call(sessionId);
    // In progress: the conversation so far — unless the link names a stored call by its own id.
    if (inProgress && found?.matchedBy !== 'callId') {
      const transcript = await deps.reads.transcript(deps.transcriptFileOf(sessionId));
      return sendPage(
        res,
        liveCallPage({
          call: inProgress,
          lines: transcript.lines,
          transcriptProblem: transcript.problem,
          numbersShown: numbersShown(req),
          transferTargets: deps.control.transferTargets(),
          operatorLines: operatorLines(deps, inProgress),
          notice,
        }),
      );
    }
    if (!found && deps.callEnded(sessionId)) {
      // Ended a moment ago: its story is being stored. story.js shows it as soon as it is.
      const body = html`<p><a href="../calls">← All calls</a></p>${notice ? html`<p class="notice" role="status" id="notice">${notice}</p>` : ''}
<div data-await="story"><h1>The call has ended</h1><p class="muted" role="status">Its story is being stored, and shows here in a moment.</p></div>`;
      return sendPage(res, layout({ title: 'Call ended', section: 'calls', root: '../', body, scripts: ['story.js'] }));
    }
    if (!found) {
      res.status(404);
      const body = html`<p><a href="../calls">← All calls</a></p><h1>No such call</h1>
<p class="muted">No call with this id is stored or in progress. A call that has just ended is stored in a moment.</p>`;
      return sendPage(res, layout({ title: 'No such call', section: 'calls', root: '../', body }));
    }
    sendPage(res, storyPage({ ...found, numbersShown: numbersShown(req), notice }));
  });

  // A person steps in: the call is handed to a colleague, or ended with a goodbye. Back to the call's page after.
  router.post('/dashboard/calls/:sessionId/transfer', form, async (req: Request, res: Response) => {
    const sessionId = String(req.params.sessionId);
    const target = typeof req.body?.target === 'string' && req.body.target !== '' ? (req.body.target as string) : undefined;
    const outcome = deps.control.transfer(sessionId, target);
    deps.logger.info({ sessionId, target, outcome }, 'operator transfer requested on the dashboard');
    await answerControl(res, sessionId, outcome, deps);
  });
  router.post('/dashboard/calls/:sessionId/hangup', async (req: Request, res: Response) => {
    const sessionId = String(req.params.sessionId);
    const outcome = deps.control.hangUp(sessionId);
    deps.logger.info({ sessionId, outcome }, 'operator hangup requested on the dashboard');
    await answerControl(res, sessionId, outcome, deps);
  });

  // Reports whose delivery was given up go out again: all of them from the history, one call's from its story.
  router.post('/dashboard/redeliver', (_req: Request, res: Response) => {
    const requeued = deps.redeliver();
    deps.logger.info({ requeued }, 'report deliveries queued again on the dashboard');
    if (requeued === undefined) return noWebhook(res, '', 'calls');
    res.redirect(303, 'calls');
  });
  router.post('/dashboard/calls/:sessionId/redeliver', (req: Request, res: Response) => {
    // The story's form names the call by its call id.
    const callId = String(req.params.sessionId);
    const back = `../${encodeURIComponent(callId)}`;
    if (deps.redeliver({ callId }) === undefined) return noWebhook(res, '../../', back);
    res.redirect(303, back);
  });

  router.post('/dashboard/campaigns', form, (req: Request, res: Response) => {
    const id = typeof req.body?.campaign === 'string' ? (req.body.campaign as string) : '';
    const action = req.body?.do === 'pause' || req.body?.do === 'resume' ? (req.body.do as 'pause' | 'resume') : undefined;
    if (!action) return void res.status(400).type('text').send('do is pause or resume');
    const outcome = deps.campaign(id, action);
    deps.logger.info({ campaignId: id, action, outcome }, 'campaign paused or resumed on the dashboard');
    if (outcome === 'done') return res.redirect(303, 'campaigns');
    const notFound = outcome === 'not_found';
    res.status(notFound ? 404 : 409);
    const body = notFound
      ? html`<p><a href="campaigns">← Campaigns</a></p><h1>No such campaign</h1>`
      : html`<p><a href="campaigns">← Campaigns</a></p><h1>Not done</h1><p role="alert">${outcome.notDone}</p>`;
    sendPage(res, layout({ title: notFound ? 'No such campaign' : 'Not done', section: 'campaigns', root: '', body }));
  });
  const campaigns = async (req: Request, res: Response, more: Partial<CampaignsPageOptions> = {}): Promise<void> =>
    sendPage(res, campaignsPage(await deps.reads.campaigns(), { numbersShown: numbersShown(req), outboundMissing: deps.outboundMissing(), ...more }));
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
  router.get('/dashboard/charts', async (req, res) => {
    // A range is no personal data: it may sit in the URL, so a chart of 90 days can be bookmarked.
    const asked = Number(req.query.days);
    const dayCount = DAY_RANGES.find((days) => days === asked) ?? DAY_RANGES[0];
    sendPage(res, chartsPage(await deps.reads.charts(new Date(), dayCount), { numbersShown: numbersShown(req) }));
  });
  router.get('/dashboard/prompts', async (req, res) =>
    sendPage(res, promptsPage(deps.promptsStatus(), { numbersShown: numbersShown(req) }, await deps.reads.checkPrompts())),
  );
  return router;
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

/** Reports sent again need somewhere to go. */
function noWebhook(res: Response, root: string, back: string): void {
  res.status(409);
  const body = html`<p><a href="${back}">← Back</a></p><h1>Not done</h1><p role="alert">Reports are not delivered anywhere: set <code>REPORT_WEBHOOK_URL</code>.</p>`;
  sendPage(res, layout({ title: 'Not done', section: 'calls', root, body }));
}

/** Why a person lands on a call's page other than by a link: `?was=` names one of these, never free text. */
const NOTICES = {
  ended: 'The call had already ended when you pressed the button: nothing more was done.',
  ending: 'The call was already ending or being handed over: nothing more was done.',
} as const;

function noticeOf(was: unknown): string | undefined {
  return typeof was === 'string' && Object.hasOwn(NOTICES, was) ? NOTICES[was as keyof typeof NOTICES] : undefined;
}

/**
 * Back to the call's page (…/calls/<id>, from …/calls/<id>/transfer) whenever there is a call to
 * show: done, or a call that ended (or began to) as the button was pressed — what the person
 * wanted has happened or no longer can, and the page says which. Not done: why, with the way back.
 */
async function answerControl(res: Response, sessionId: string, outcome: ControlOutcome, deps: DashboardDeps): Promise<void> {
  const back = `../${encodeURIComponent(sessionId)}`;
  if (outcome === 'done') return res.redirect(303, back);
  if (outcome === 'ending') return res.redirect(303, `${back}?was=ending`);
  if (outcome === 'not_found' && (deps.callEnded(sessionId) || (await deps.reads.call(sessionId)) !== undefined)) {
    return res.redirect(303, `${back}?was=ended`);
  }
  const why = {
    not_found: 'No call with this id is in progress or stored.',
    no_destination: 'There is no such transfer target: set TRANSFER_TARGET, or choose one of TRANSFER_TARGETS.',
  }[outcome];
  res.status(outcome === 'not_found' ? 404 : 409);
  const body = html`<p><a href="${back}">← The call</a></p><h1>Not done</h1><p role="alert">${why}</p>`;
  sendPage(res, layout({ title: 'Not done', section: 'live', root: '../../', body }));
}

/**
 * operator-transfer.md and operator-goodbye.md with the call's built-in placeholders, as the
 * confirmation quotes them; a placeholder only the call knows (an outbound request's, a CRM's)
 * falls back to its default. Shown as spoken: SSML tags left out.
 */
function operatorLines(deps: DashboardDeps, call: CallActivity): OperatorLines {
  const prompts = deps.prompts();
  const vars = builtinVariables({ from: call.from, to: call.to, direction: call.direction }, new Date(), deps.timeZone);
  const spoken = (text: string) =>
    text
      .replace(/<[^>]*>/g, ' ')
      .replace(/&(amp|lt|gt|quot|apos);/g, (_m, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[name]!)
      .replace(/\s+/g, ' ')
      .trim();
  const quiet = () => undefined;
  return { transfer: spoken(prompts.render('operatorTransfer', vars, quiet)), goodbye: spoken(prompts.render('operatorGoodbye', vars, quiet)) };
}

const CSV_COLUMNS = ['session_id', 'started_at', 'ended_at', 'direction', 'from', 'to', 'duration_s', 'end_reason', 'turns', 'barge_ins', 'campaign', 'summary', 'fields', 'call_id'];

function csvRow(call: CallListing, shown: boolean): CsvCell[] {
  return [
    call.sessionId,
    call.startedAt,
    call.endedAt,
    call.direction,
    showNumber(call.from, shown),
    showNumber(call.to, shown),
    Math.round(call.durationMs / 1000),
    call.endReason,
    call.turns,
    call.bargeIns,
    call.campaign ?? '',
    call.summary ?? '',
    call.fields ? JSON.stringify(call.fields) : '',
    // Last, so the columns before keep their places: a session id the service used again is another call.
    call.callId,
  ];
}

function liveView(call: CallActivity, shown: boolean): Record<string, unknown> {
  return {
    sessionId: call.sessionId,
    number: showNumber(call.direction === 'inbound' ? call.from : call.to, shown),
    direction: call.direction,
    startedAt: call.startedAt,
    phase: call.phase,
    callerSaid: call.callerSaid ?? '',
    agentSaid: call.agentSaid ?? '',
  };
}

function loginPage(root: string, problem: string | undefined): Html {
  return layout({
    title: 'Log in',
    root,
    body: html`<form method="post" action="${root}login" class="login">
  <h1>Hotline dashboard</h1>
  ${problem ? html`<p class="warning" role="alert">${problem}</p>` : ''}
  <label>Admin token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
  <button type="submit">Log in</button>
</form>`,
  });
}

/**
 * `__Host-hotline_dashboard` over HTTPS (req.secure: TLS here, or X-Forwarded-Proto from a proxy
 * TRUST_PROXY trusts), `hotline_dashboard` over plain HTTP, where a browser may not keep a Secure
 * cookie. Each is read only over its own scheme.
 */
function cookieName(req: Request): string {
  return req.secure ? SECURE_COOKIE_NAME : COOKIE_NAME;
}

function sessionCookieOf(req: Request): string | undefined {
  return cookieOf(req.headers.cookie, cookieName(req));
}

/** `__Host-` demands Secure and Path=/ (Express's default) and no Domain. */
function sessionCookieOptions(req: Request, maxAge?: number): CookieOptions {
  return { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/', ...(maxAge === undefined ? {} : { maxAge }) };
}

function sendPage(res: Response, page: Html): void {
  res.type('html').send(page.text);
}

function numbersShown(req: Request): boolean {
  return cookieOf(req.headers.cookie, NUMBERS_COOKIE) === 'shown';
}

/** The request's path as the server got it (a mounted middleware's req.path lacks the mount). */
function pathOf(req: Request): string {
  return new URL(req.originalUrl, 'http://hotline').pathname;
}

/** From a page one level below the root (calls/x) back up; '' at the root. */
function rootOf(req: Request): string {
  const depth = pathOf(req).replace(/^\/dashboard\/?/, '').split('/').length - 1;
  return '../'.repeat(Math.max(0, depth));
}

/** Chart.js's UMD build, from the installed package: served as a file of our own, nothing from a CDN. */
function chartJsSource(): string | undefined {
  try {
    const main = createRequire(import.meta.url).resolve('chart.js');
    return readFileSync(path.join(path.dirname(main), 'chart.umd.min.js'), 'utf8');
  } catch {
    return undefined;
  }
}
