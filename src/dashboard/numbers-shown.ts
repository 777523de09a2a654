import type { Request, Router } from 'express';
import { formBody } from './respond.js';
import { cookieOf, SESSION_MS } from './session-cookie.js';

const NUMBERS_COOKIE = 'hotline_numbers';

/** Whether this browser chose to see phone numbers whole; masked unless it did. */
export function numbersShown(req: Request): boolean {
  return cookieOf(req.headers.cookie, NUMBERS_COOKIE) === 'shown';
}

/** The button that shows phone numbers whole or masks them again. */
export function numbersRoutes(router: Router): void {
  router.post('/dashboard/numbers', formBody, (req, res) => {
    const show = req.body?.show === 'yes';
    res.cookie(NUMBERS_COOKIE, show ? 'shown' : 'masked', { httpOnly: true, sameSite: 'strict', secure: req.secure, maxAge: SESSION_MS });
    // Back where the button was pressed: a path of ours below the root, never anywhere else.
    const back = typeof req.body?.back === 'string' ? (req.body.back as string) : '';
    // %2e%2e is ".." to a browser resolving the URL.
    const ours = /^(?:[\w%.-]+\/)*[\w%.-]*$/.test(back) && !back.split('/').includes('..') && !/%2e/i.test(back);
    res.redirect(303, ours ? `./${back}` : './');
  });
}
