import type { Router } from 'express';
import type { CallActivity } from '../call/ports/call-activity.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { showNumber } from './layout.js';
import type { LiveViews } from './live-views.js';
import { numbersShown } from './numbers-shown.js';
import { livePage } from './pages/live.js';
import { sendPage } from './respond.js';
import type { SessionCookies } from './session-cookie.js';
import { whoOf } from './gates.js';
import { keepWords, type Redact } from '../call/ports/redaction.js';
import { sessionCookieOf } from './session-request.js';

/** At most this many live views at once: each holds a connection open. */
const MAX_VIEWERS = 20;
const KEEPALIVE_MS = 25_000;

/** The live view: its page, and the stream of calls in progress it shows (server-sent events). */
export function liveRoutes(router: Router, deps: Pick<DashboardDeps, 'live' | 'redact'>, sessions: SessionCookies, liveViews: LiveViews): void {
  const redact = deps.redact ?? keepWords;
  router.get('/dashboard/', (req, res) => void sendPage(res, livePage({ numbersShown: numbersShown(req), role: whoOf(res).role })));

  router.get('/dashboard/live', (req, res) => {
    if (deps.live.viewerCount >= MAX_VIEWERS) return void res.status(503).json({ error: 'too many live views open' });
    const shown = numbersShown(req);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    const stop = deps.live.watch({
      view: (call) => liveView(call, shown, redact),
      send: (event, data) => void res.write(`event: ${event}\ndata: ${data}\n\n`),
    });
    const close = () => res.end();
    const forget = liveViews.open(res.locals.session as string, close);
    // A session that expired (or was logged out on another replica) ends its stream within a keep-alive.
    // Someone the proxy let in has no session of Hotline's: the proxy ends theirs.
    const inForce = async (): Promise<boolean> => res.locals.viaProxy === true || (await sessions.valid(sessionCookieOf(req), Date.now()).catch(() => true));
    const keepAlive = setInterval(() => void inForce().then((yes) => (yes ? res.write(': keep-alive\n\n') : close())), KEEPALIVE_MS);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      stop();
      forget();
    });
  });
}

/** One call as the live view shows it; its words redacted here, as a batch goes out, not as each is said. */
function liveView(call: CallActivity, shown: boolean, redact: Redact): Record<string, unknown> {
  return {
    sessionId: call.sessionId,
    number: showNumber(call.direction === 'inbound' ? call.from : call.to, shown),
    direction: call.direction,
    startedAt: call.startedAt,
    phase: call.phase,
    callerSaid: redact(call.callerSaid ?? ''),
    agentSaid: redact(call.agentSaid ?? ''),
  };
}
