import type { Request, Response } from 'express';
import type { Logger } from '../logger.js';
import { whoOf } from './gates.js';
import type { OpenStreams } from './open-streams.js';
import { sessionCookieOf } from './session-request.js';
import type { SessionStanding } from './session-standing.js';

/** What keeps long-lived responses honest: the sessions' standing, and the streams open here. */
export interface StreamGuards {
  readonly standing: SessionStanding;
  readonly streams: OpenStreams;
  readonly logger: Logger;
}

/**
 * Holds a long-lived response (the live view's stream, an export) open only while its session
 * stands: the gates let it in once, and a session can end or its account change for hours after.
 * Asked every `standing.everyMs`; a logout or a change found in this process closes it at once.
 * What it returns is called once the response has closed.
 */
export function guardStream(req: Request, res: Response, guards: StreamGuards, what: 'live view' | 'export', close: () => void): () => void {
  // Someone the proxy let in has no session of Hotline's to ask: their live view is closed after as long, so
  // that the browser's reconnection goes through the proxy again and meets the gates with what it says now.
  if (res.locals.viaProxy === true) return what === 'live view' ? renewed(guards.standing.everyMs, close) : () => undefined;
  const staff = whoOf(res).name;
  let closed = false;
  const closeOnce = (): void => {
    if (closed) return;
    closed = true;
    guards.logger.info({ staff, stream: what }, 'dashboard stream closed: its login no longer stands');
    close();
  };
  const forget = guards.streams.open(res.locals.session as string, staff, closeOnce);
  const cookie = sessionCookieOf(req);
  const timer = setInterval(() => {
    guards.standing.of(cookie, Date.now(), true).then(
      (session) => {
        if (session === undefined) closeOnce();
      },
      // The store briefly away: asked again at the next turn, the stream kept meanwhile.
      () => undefined,
    );
  }, guards.standing.everyMs);
  timer.unref();
  return () => {
    closed = true;
    clearInterval(timer);
    forget();
  };
}

function renewed(afterMs: number, close: () => void): () => void {
  const timer = setTimeout(close, afterMs);
  timer.unref();
  return () => clearTimeout(timer);
}
