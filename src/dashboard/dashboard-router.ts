import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { CallActivity } from '../call/ports/call-activity.js';
import type { CallControl, ControlOutcome } from '../call/ports/call-control.js';
import { csvLines, type CsvCell } from '../csv.js';
import type { Logger } from '../logger.js';
import { secretMatches } from '../transport/auth.js';
import { CsvExports } from '../transport/csv-export.js';
import type { CallListing } from '../store/call-search.js';
import { DAY_RANGES } from '../store/call-stats.js';
import { parseFilter } from './filter-form.js';
import { html, type Html } from './html.js';
import { layout, showNumber } from './layout.js';
import type { LiveCalls } from './live-calls.js';
import { historyPage, PAGE_SIZE } from './pages/history.js';
import { LIVE_SCRIPT, livePage } from './pages/live.js';
import { CALL_LIVE_SCRIPT, liveCallPage } from './pages/live-call.js';
import { storyPage } from './pages/story.js';
import { campaignsPage } from './pages/campaigns.js';
import { chartsPage } from './pages/charts.js';
import { promptsPage } from './pages/prompts.js';
import { CHARTS_SCRIPT } from './charts-script.js';
import type { PromptsStatus } from '../prompts/prompt-store.js';
import type { DashboardReads } from './reads.js';
import { COOKIE_NAME, cookieOf, SESSION_MS, SessionCookies } from './session-cookie.js';
import { DASHBOARD_CSS } from './styles.js';

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
  /** Sends reports whose delivery was given up again (all, or one call's); undefined without a report webhook. */
  redeliver(which?: { callId: string }): number | undefined;
  /** Pauses or resumes a campaign: no new calls while paused, calls in progress go on. False for no such campaign. */
  campaign(id: string, action: 'pause' | 'resume'): boolean;
  /** The prompts folder's version in use and its last check. */
  promptsStatus(): PromptsStatus;
  /** Whether a failed login from this address may be tried again now. */
  allowLoginAttempt(address: string): Promise<boolean>;
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
 * Server-rendered pages and three small scripts; every link is relative, so it
 * works under whatever prefix a reverse proxy adds. Behind the admin token,
 * given once at a login form and kept in an HttpOnly, SameSite cookie.
 */
export function dashboardRouter(deps: DashboardDeps): Router {
  const router = express.Router();
  const token = deps.adminToken;
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
  const scripts: Record<string, string> = { 'live.js': LIVE_SCRIPT, 'call-live.js': CALL_LIVE_SCRIPT, 'charts.js': CHARTS_SCRIPT, ...(chartJs ? { 'chart.umd.min.js': chartJs } : {}) };
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
    const address = req.ip ?? 'unknown';
    const presented = typeof req.body?.token === 'string' ? (req.body.token as string) : undefined;
    // As at the transports: a wrong token spends the address's budget of failures, then gets 429.
    if (!secretMatches(presented, token)) {
      deps.logger.warn({ ip: address }, 'dashboard login refused');
      const allowed = await deps.allowLoginAttempt(address);
      res.status(allowed ? 401 : 429);
      return sendPage(res, loginPage('', allowed ? 'That is not the admin token.' : 'Too many wrong tokens from this address; wait a minute.'));
    }
    res.cookie(COOKIE_NAME, sessions.issue(Date.now()), { httpOnly: true, sameSite: 'strict', secure: req.secure, maxAge: SESSION_MS });
    res.redirect(303, './');
  });

  router.get('/dashboard', (req, res, next) => {
    // /dashboard without its slash: relative links would resolve one level too high.
    if (pathOf(req) === '/dashboard') return res.redirect(301, 'dashboard/');
    next();
  });

  // Every page below needs the cookie; without it the browser goes to the login form.
  router.use('/dashboard', (req: Request, res: Response, next: NextFunction) => {
    if (sessions.valid(cookieOf(req.headers.cookie, COOKIE_NAME), Date.now())) return next();
    if (req.method === 'GET' && req.accepts(['html', 'json']) === 'html') return res.redirect(303, `${rootOf(req)}login`);
    res.status(401).json({ error: 'log in to the dashboard first' });
  });

  router.post('/dashboard/logout', (_req, res) => {
    res.clearCookie(COOKIE_NAME, { httpOnly: true, sameSite: 'strict' });
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
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      stop();
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
        }),
      );
    }
    if (!found) {
      res.status(404);
      const body = html`<p><a href="../calls">← All calls</a></p><h1>No such call</h1>
<p class="muted">No call with this id is stored or in progress. A call that has just ended is stored in a moment.</p>`;
      return sendPage(res, layout({ title: 'No such call', section: 'calls', root: '../', body }));
    }
    sendPage(res, storyPage({ ...found, numbersShown: numbersShown(req) }));
  });

  // A person steps in: the call is handed to a colleague, or ended with a goodbye. Back to the call's page after.
  router.post('/dashboard/calls/:sessionId/transfer', form, (req: Request, res: Response) => {
    const sessionId = String(req.params.sessionId);
    const target = typeof req.body?.target === 'string' && req.body.target !== '' ? (req.body.target as string) : undefined;
    const outcome = deps.control.transfer(sessionId, target);
    deps.logger.info({ sessionId, target, outcome }, 'operator transfer requested on the dashboard');
    answerControl(res, sessionId, outcome);
  });
  router.post('/dashboard/calls/:sessionId/hangup', (req: Request, res: Response) => {
    const sessionId = String(req.params.sessionId);
    const outcome = deps.control.hangUp(sessionId);
    deps.logger.info({ sessionId, outcome }, 'operator hangup requested on the dashboard');
    answerControl(res, sessionId, outcome);
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
    const found = deps.campaign(id, action);
    deps.logger.info({ campaignId: id, action, found }, 'campaign paused or resumed on the dashboard');
    if (found) return res.redirect(303, 'campaigns');
    res.status(404);
    const body = html`<p><a href="campaigns">← Campaigns</a></p><h1>No such campaign</h1>`;
    sendPage(res, layout({ title: 'No such campaign', section: 'campaigns', root: '', body }));
  });
  router.get('/dashboard/campaigns', async (req, res) => sendPage(res, campaignsPage(await deps.reads.campaigns(), { numbersShown: numbersShown(req) })));
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

/** Reports sent again need somewhere to go. */
function noWebhook(res: Response, root: string, back: string): void {
  res.status(409);
  const body = html`<p><a href="${back}">← Back</a></p><h1>Not done</h1><p role="alert">Reports are not delivered anywhere: set <code>REPORT_WEBHOOK_URL</code>.</p>`;
  sendPage(res, layout({ title: 'Not done', section: 'calls', root, body }));
}

/** Done: back to the call's page (…/calls/<id>, from …/calls/<id>/transfer). Not done: why, with the way back. */
function answerControl(res: Response, sessionId: string, outcome: ControlOutcome): void {
  const back = `../${encodeURIComponent(sessionId)}`;
  if (outcome === 'done') return res.redirect(303, back);
  const why = {
    not_found: 'The call is no longer in progress.',
    ending: 'The call is already ending or being handed over.',
    no_destination: 'There is no such transfer target: set TRANSFER_TARGET, or choose one of TRANSFER_TARGETS.',
  }[outcome];
  res.status(outcome === 'not_found' ? 404 : 409);
  const body = html`<p><a href="${back}">← The call</a></p><h1>Not done</h1><p role="alert">${why}</p>`;
  sendPage(res, layout({ title: 'Not done', section: 'live', root: '../../', body }));
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
