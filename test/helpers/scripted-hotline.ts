import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { text } from 'node:stream/consumers';

/** An event as the emulated voice service sent it. */
export interface SentEvent {
  type: string;
  session: { id: string; [field: string]: unknown };
  [field: string]: unknown;
}

/**
 * What to answer an event with: an action, an array of them, or nothing.
 * `delayMs` holds the answer back (over the webhook: the HTTP response, a 204 without actions).
 */
export type Answer = { actions?: unknown; delayMs?: number } | undefined;

export interface ScriptedHotline {
  wsUrl: string;
  webhookUrl: string;
  /** Every event received over either transport, in the order it arrived. */
  events: SentEvent[];
  /** Each event's arrival and (webhook) its answer leaving, in order: whether one event waited for another's answer. */
  timeline: { step: 'received' | 'answered'; event: SentEvent }[];
  /** The first event, received already or later, that matches. */
  waitForEvent(predicate: (event: SentEvent) => boolean): Promise<SentEvent>;
  close(): Promise<void>;
}

/**
 * Stands in for Hotline where a test needs actions the real one does not send
 * on cue (arrays, audio clips, barge_in actions, transfers with every field):
 * a real WebSocket endpoint and a real webhook on port 0, each answering every
 * event as `answer` says. The simulator under test cannot tell it from Hotline.
 */
export async function startScriptedHotline(answer: (event: SentEvent) => Answer): Promise<ScriptedHotline> {
  const events: SentEvent[] = [];
  const timeline: ScriptedHotline['timeline'] = [];
  const waiters: { predicate: (event: SentEvent) => boolean; resolve: (event: SentEvent) => void }[] = [];
  const received = (raw: string): SentEvent => {
    const event = JSON.parse(raw) as SentEvent;
    events.push(event);
    timeline.push({ step: 'received', event });
    for (const waiter of waiters.filter((w) => w.predicate(event))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
    return event;
  };
  const withSession = (actions: unknown, sessionId: string): unknown =>
    Array.isArray(actions) ? actions.map((a) => withSession(a, sessionId)) : { session_id: sessionId, ...(actions as object) };

  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/webhook') {
      res.writeHead(404).end();
      return;
    }
    void text(req).then((raw) => {
      const event = received(raw);
      const reply = answer(event);
      const respond = () => {
        timeline.push({ step: 'answered', event });
        if (reply?.actions === undefined) res.writeHead(204).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(withSession(reply.actions, event.session.id)));
      };
      if (reply?.delayMs) setTimeout(respond, reply.delayMs);
      else respond();
    });
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      const event = received(String(data));
      const reply = answer(event);
      if (reply?.actions === undefined) return;
      const send = () => socket.send(JSON.stringify(withSession(reply.actions, event.session.id)));
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    webhookUrl: `http://127.0.0.1:${port}/webhook`,
    events,
    timeline,
    waitForEvent(predicate) {
      const seen = events.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
