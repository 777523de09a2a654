/**
 * The People page (admins): a person's access request (their data as one JSON document) and their
 * erasure request, found by their phone number. An erasure is confirmed on a page that names what
 * will go, and both are on record in the audit log.
 */
import type { Request, Response, Router } from 'express';
import { InvalidPhoneNumberError } from '../phone/errors.js';
import { countPersonData, erasePersonData, exportPersonData, PersonDataUnreadableError, type PersonCounts } from '../privacy/person-data.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { whoOf } from './gates.js';
import { html, type Html } from '../html.js';
import { layout } from './layout.js';
import { formBody, rootOf, sendPage } from './respond.js';
import type { Audit } from './staff-audit.js';

/** What the confirmation asks to be typed: a click alone does not erase a person. */
const CONFIRM_WORD = 'erase';

export function peopleRoutes(router: Router, deps: Pick<DashboardDeps, 'people' | 'logger'>, audit: Audit): void {
  // Pages answer /dashboard/people and /dashboard/people/…: each link is relative to where it is served.
  const page = (req: Request, res: Response, body: (root: string) => Html, status = 200): void => {
    const root = rootOf(req);
    res.status(status);
    sendPage(res, layout({ title: 'People', section: 'people', root, role: whoOf(res).role, body: body(root) }));
  };
  const field = (req: Request, name: string): string => (typeof req.body?.[name] === 'string' ? (req.body[name] as string).trim() : '');

  router.get('/dashboard/people', (req, res) => page(req, res, (root) => peopleForm(root, deps.people === undefined)));

  // The number goes in a form's body, never in a URL: URLs end up in logs and the browser's history.
  router.post('/dashboard/people', formBody, async (req, res) => {
    if (!deps.people) return page(req, res, (root) => peopleForm(root, true), 404);
    const number = field(req, 'number');
    try {
      const counts = await countPersonData(deps.people, number);
      page(req, res, (root) => html`${peopleForm(root, false, number)}${found(root, number, counts)}`);
    } catch (error) {
      if (!(error instanceof InvalidPhoneNumberError || error instanceof PersonDataUnreadableError)) throw error;
      page(req, res, (root) => peopleForm(root, false, number, error.message), statusOf(error));
    }
  });

  router.post('/dashboard/people/export', formBody, async (req, res) => {
    if (!deps.people) return page(req, res, (root) => peopleForm(root, true), 404);
    try {
      const document = await exportPersonData(deps.people, field(req, 'number'));
      await audit(req, res, { action: 'export_person', detail: { calls: document.calls.length } });
      res.set('Content-Disposition', `attachment; filename="person-${document.number.slice(-4)}-${document.exportedAt.slice(0, 10)}.json"`);
      res.type('json').send(`${JSON.stringify(document, null, 2)}\n`);
    } catch (error) {
      if (!(error instanceof InvalidPhoneNumberError || error instanceof PersonDataUnreadableError)) throw error;
      page(req, res, (root) => peopleForm(root, false, field(req, 'number'), error.message), statusOf(error));
    }
  });

  router.post('/dashboard/people/erase', formBody, async (req, res) => {
    if (!deps.people) return page(req, res, (root) => peopleForm(root, true), 404);
    const number = field(req, 'number');
    try {
      if (field(req, 'confirm').toLowerCase() !== CONFIRM_WORD) {
        const counts = await countPersonData(deps.people, number);
        return page(req, res, (root) => html`${peopleForm(root, false, number)}<p class="warning" role="alert">Nothing was erased: type “${CONFIRM_WORD}” to confirm.</p>${found(root, number, counts)}`, 400);
      }
      const result = await erasePersonData(deps.people, number, { actor: whoOf(res).name, stopCalling: field(req, 'stop') === 'yes' });
      await audit(req, res, { action: 'erase_person', detail: { erasure: result.id, calls: result.counts.calls, leftInProgress: result.leftInProgress } });
      deps.logger.info({ erasure: result.id, counts: result.counts }, 'a person’s data erased on the dashboard');
      page(
        req,
        res,
        (root) => html`${peopleForm(root, false)}<section class="notice" role="status" id="erased"><h2>Erased</h2><p>${describe(result.counts)} went (erasure ${result.id}).${
          result.leftInProgress > 0 ? ` ${result.leftInProgress} call(s) still in progress were left: erase again once they have ended.` : ''
        }${result.addedToStopList ? ' The number is on the stop list now.' : ''}</p>${
          result.filesWiped ? '' : html`<p class="warning" role="alert">The rows are deleted, but may still be in the database's files (${result.wipeProblems?.join('; ')}): erase again to try again.</p>`
        }</section>`,
      );
    } catch (error) {
      if (!(error instanceof InvalidPhoneNumberError || error instanceof PersonDataUnreadableError)) throw error;
      page(req, res, (root) => peopleForm(root, false, number, error.message), statusOf(error));
    }
  });
}

/** A number that is none is the asker's mistake; data that could not be read is the server's. */
function statusOf(error: InvalidPhoneNumberError | PersonDataUnreadableError): number {
  return error instanceof PersonDataUnreadableError ? 500 : 400;
}

function peopleForm(root: string, off: boolean, number = '', problem?: string): Html {
  if (off) return html`<h1>People</h1><p class="muted">The store is not available to this dashboard.</p>`;
  return html`<h1>People</h1>
<p class="muted">A person's access request (their data, as one JSON document) or erasure request, found by their phone number in any written form.</p>
<form method="post" action="${root}people" class="filters">
  <label>Phone number <input name="number" value="${number}" required autocomplete="off" inputmode="tel"></label>
  <button type="submit">Find</button>
</form>
${problem ? html`<p class="warning" role="alert">${problem}</p>` : ''}`;
}

function found(root: string, number: string, counts: PersonCounts): Html {
  const nothing = counts.calls + counts.callsInProgress + counts.campaignContacts + counts.outboundRequests + counts.stopList === 0;
  if (nothing) return html`<p role="status" id="found">Nothing is stored for this number.</p>`;
  return html`<section id="found" role="status">
<h2>Stored for this number</h2>
<p>${describe(counts)}${counts.callsInProgress > 0 ? html` — and ${counts.callsInProgress} call(s) in progress, which an erasure leaves until they have ended` : ''}${
    counts.stopList > 0 ? html`; the number is on the stop list (kept)` : ''
  }.</p>
<form method="post" action="${root}people/export"><input type="hidden" name="number" value="${number}"><button type="submit">Download their data (JSON)</button></form>
<form method="post" action="${root}people/erase" class="danger">
  <input type="hidden" name="number" value="${number}">
  <p><strong>Erasing removes ${describe(counts)}, for good.</strong> What stays is the fact of the erasure, with these counts, and who did it.</p>
  <label><input type="checkbox" name="stop" value="yes"> They asked not to be called again: put the number on the stop list</label>
  <label>Type “${CONFIRM_WORD}” to confirm <input name="confirm" autocomplete="off" required></label>
  <button type="submit">Erase everything</button>
</form>
</section>`;
}

function describe(counts: PersonCounts): string {
  return (
    `${counts.calls} call(s), ${counts.transcripts} transcript(s), ${counts.reports} report(s), ${counts.deliveries} report delivery(ies), ` +
    `${counts.campaignContacts} campaign entry(ies) and ${counts.outboundRequests} requested call(s)` +
    (counts.refusedRecords > 0 ? `, and ${counts.refusedRecords} record(s) the database refused` : '')
  );
}
