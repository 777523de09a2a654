import type { Request, Router } from 'express';
import { roleAtLeast, type Who } from '../staff/roles.js';
import { needs } from './gates.js';
import type { Audit } from './staff-audit.js';
import { formBody } from './respond.js';
import { cookieOf, SESSION_MS } from './session-cookie.js';

const NUMBERS_COOKIE = 'hotline_numbers';

/** Whether this browser chose to see phone numbers whole; masked unless it did, and always for a viewer. */
export function numbersShown(req: Request): boolean {
  if (numbersHidden(req)) return false;
  return cookieOf(req.headers.cookie, NUMBERS_COOKIE) === 'shown';
}

/** Whether the role signed in never sees a number whole (a viewer): no filter, count or export may tell it one either. */
export function numbersHidden(req: Request): boolean {
  const who = req.res?.locals.who as Who | undefined;
  return who !== undefined && !roleAtLeast(who.role, 'operator');
}

/** The button that shows phone numbers whole or masks them again; showing them is on record (operators and up). */
export function numbersRoutes(router: Router, audit: Audit): void {
  router.post('/dashboard/numbers', needs('operator'), formBody, async (req, res) => {
    const show = req.body?.show === 'yes';
    if (show) await audit(req, res, { action: 'reveal_numbers' });
    res.cookie(NUMBERS_COOKIE, show ? 'shown' : 'masked', { httpOnly: true, sameSite: 'strict', secure: req.secure, maxAge: SESSION_MS });
    // Back where the button was pressed: a path of ours below the root, never anywhere else.
    const back = typeof req.body?.back === 'string' ? (req.body.back as string) : '';
    // %2e%2e is ".." to a browser resolving the URL.
    const ours = /^(?:[\w%.-]+\/)*[\w%.-]*$/.test(back) && !back.split('/').includes('..') && !/%2e/i.test(back);
    res.redirect(303, ours ? `./${back}` : './');
  });
}
