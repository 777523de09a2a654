import type { Request, Response, Router } from 'express';
import type { CallActivity } from '../call/ports/call-activity.js';
import type { ControlOutcome } from '../call/ports/call-control.js';
import { builtinVariables } from '../prompts/builtins.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { html } from '../html.js';
import { layout } from './layout.js';
import { numbersShown } from './numbers-shown.js';
import { liveCallPage, type OperatorLines } from './pages/live-call.js';
import { storyPage } from './pages/story.js';
import { whoOf } from './gates.js';
import { formBody, sendPage } from './respond.js';
import type { Audit } from './staff-audit.js';
import { roleAtLeast } from '../staff/roles.js';

type CallDeps = Pick<DashboardDeps, 'live' | 'reads' | 'transcriptFileOf' | 'remoteConversation' | 'control' | 'callEnded' | 'prompts' | 'timeZone' | 'redeliver' | 'logger'>;

/** A call's page (in progress, or its story), the operator's handover and hangup, and its report sent again. */
export function callRoutes(router: Router, deps: CallDeps, audit: Audit): void {
  router.get('/dashboard/calls/:sessionId', async (req: Request, res: Response) => {
    // A call id (a stored call's link), or a session id (a call in progress, or the latest call with it).
    const sessionId = String(req.params.sessionId);
    const notice = noticeOf(req.query.was);
    const inProgress = deps.live.get(sessionId);
    const found = await deps.reads.call(sessionId);
    // In progress: the conversation so far — unless the link names a stored call by its own id.
    if (inProgress && found?.matchedBy !== 'callId') {
      // A live call and its controls are an operator's: a viewer reads its story once it has ended.
      if (!roleAtLeast(whoOf(res).role, 'operator')) {
        res.status(403);
        const body = html`<p><a href="../calls">← All calls</a></p><h1>In progress</h1><p class="muted">This call is still going on: its story shows here once it has ended.</p>`;
        return sendPage(res, layout({ title: 'In progress', section: 'calls', root: '../', role: whoOf(res).role, body }));
      }
      await audit(req, res, { action: 'open_live_call', sessionId });
      const remote = await deps.remoteConversation?.(sessionId);
      const transcript = remote ? { lines: remote, problem: undefined } : await deps.reads.transcript(deps.transcriptFileOf(sessionId));
      return sendPage(
        res,
        liveCallPage({
          call: inProgress,
          lines: transcript.lines,
          transcriptProblem: transcript.problem,
          numbersShown: numbersShown(req),
          role: whoOf(res).role,
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
    await audit(req, res, { action: 'open_story', sessionId: found.call.sessionId, callId: found.call.callId });
    sendPage(res, storyPage({ ...found, numbersShown: numbersShown(req), role: whoOf(res).role, notice }));
  });

  // A person steps in: the call is handed to a colleague, or ended with a goodbye. Back to the call's page after.
  router.post('/dashboard/calls/:sessionId/transfer', formBody, async (req: Request, res: Response) => {
    const sessionId = String(req.params.sessionId);
    const target = typeof req.body?.target === 'string' && req.body.target !== '' ? (req.body.target as string) : undefined;
    const outcome = await deps.control.transfer(sessionId, target);
    deps.logger.info({ sessionId, target, outcome }, 'operator transfer requested on the dashboard');
    await audit(req, res, { action: 'transfer', sessionId, detail: { outcome, ...(target ? { target } : {}) } });
    await answerControl(res, sessionId, outcome, deps);
  });
  router.post('/dashboard/calls/:sessionId/hangup', async (req: Request, res: Response) => {
    const sessionId = String(req.params.sessionId);
    const outcome = await deps.control.hangUp(sessionId);
    deps.logger.info({ sessionId, outcome }, 'operator hangup requested on the dashboard');
    await audit(req, res, { action: 'hang_up', sessionId, detail: { outcome } });
    await answerControl(res, sessionId, outcome, deps);
  });

  // Reports whose delivery was given up go out again: all of them from the history, one call's from its story.
  router.post('/dashboard/redeliver', async (_req: Request, res: Response) => {
    const requeued = await deps.redeliver();
    deps.logger.info({ requeued }, 'report deliveries queued again on the dashboard');
    if (requeued === undefined) return noWebhook(res, '', 'calls');
    res.redirect(303, 'calls');
  });
  router.post('/dashboard/calls/:sessionId/redeliver', async (req: Request, res: Response) => {
    // The story's form names the call by its call id.
    const callId = String(req.params.sessionId);
    const back = `../${encodeURIComponent(callId)}`;
    if ((await deps.redeliver({ callId })) === undefined) return noWebhook(res, '../../', back);
    res.redirect(303, back);
  });
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
async function answerControl(res: Response, sessionId: string, outcome: ControlOutcome, deps: Pick<DashboardDeps, 'callEnded' | 'reads'>): Promise<void> {
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
function operatorLines(deps: Pick<DashboardDeps, 'prompts' | 'timeZone'>, call: CallActivity): OperatorLines {
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
