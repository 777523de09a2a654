import express, { type Request, type Response } from 'express';
import type { Html } from '../html.js';

/** The dashboard's own forms (the login, the filters, the buttons): small, and URL-encoded. */
export const formBody = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });

export function sendPage(res: Response, page: Html): void {
  res.type('html').send(page.text);
}

/** The request's path as the server got it (a mounted middleware's req.path lacks the mount). */
export function pathOf(req: Request): string {
  return new URL(req.originalUrl, 'http://hotline').pathname;
}

/** From a page one level below the root (calls/x) back up; '' at the root. */
export function rootOf(req: Request): string {
  const depth = pathOf(req).replace(/^\/dashboard\/?/, '').split('/').length - 1;
  return '../'.repeat(Math.max(0, depth));
}
