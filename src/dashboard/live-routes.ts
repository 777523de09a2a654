import type { Router } from 'express';
import type { CallActivity } from '../call/ports/call-activity.js';
import type { DashboardDeps } from './dashboard-deps.js';
import { showNumber } from './layout.js';
import { numbersShown } from './numbers-shown.js';
import { livePage } from './pages/live.js';
import { sendPage } from './respond.js';
import { whoOf } from './gates.js';
import { keepWords, type Redact } from '../call/ports/redaction.js';
import { guardStream, type StreamGuards } from './stream-guard.js';

/** At most this many live views at once: each holds a connection open. */
const MAX_VIEWERS = 20;
const KEEPALIVE_MS = 25_000;

/** The live view: its page, and the stream of calls in progress it shows (server-sent events). */
export function liveRoutes(router: Router, deps: Pick<DashboardDeps, 'live' | 'redact'>, guards: StreamGuards): void {
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
    // It tells new calls and what callers say for as long as it is open: only while the session stands.
    const release = guardStream(req, res, guards, 'live view', () => res.end());
    const keepAlive = setInterval(() => void res.write(': keep-alive\n\n'), KEEPALIVE_MS);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      stop();
      release();
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
