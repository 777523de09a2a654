import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { ActionSink } from '../call/call.js';
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';
import { ActionSchema, type Action } from '../protocol/actions.js';
import { describeIssues, parseEvent } from '../protocol/parse-event.js';
import { remoteAddressOf, secretMatches, wsTokenOf } from './auth.js';
import type { RateLimit } from './rate-limit.js';

export interface WebSocketTransportOptions {
  registry: CallRegistry;
  logger: Logger;
  path: string;
  maxPayload: number;
  /** When set, an upgrade without this token is refused with 401 before any session exists. */
  token: string | undefined;
  rateLimit: RateLimit;
  trustProxy: boolean;
}

/**
 * The voice service's WebSocket: one connection per call, events in, actions
 * out. No conversation logic lives here.
 */
export function attachWebSocketTransport(server: Server, options: WebSocketTransportOptions): WebSocketServer {
  // Oversized frames close the socket with 1009, as ws does by itself with maxPayload.
  // Invalid UTF-8 in a text frame would close the socket (1007) and end the call with it; a caller
  // must not lose the call over one bad frame from the service, so such frames are decoded leniently
  // (U+FFFD) and dropped by the event parser like any other malformed frame.
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload, skipUTF8Validation: true });

  server.on('upgrade', function upgradeToVoiceSocket(req: IncomingMessage, socket: Duplex, head: Buffer) {
    // A client that vanishes mid-handshake must not raise an unhandled error.
    socket.on('error', () => socket.destroy());
    void admit(req, socket, options).then(
      (admitted) => {
        if (admitted) wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
      },
      (error: unknown) => {
        options.logger.error({ err: error }, 'WebSocket upgrade failed');
        refuse(socket, 500, 'internal error');
      },
    );
  });

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    handleConnection(ws, req, options);
  });
  return wss;
}

/** Path, rate limit and token, in that order; refuses with an HTTP status and a JSON body. */
async function admit(req: IncomingMessage, socket: Duplex, options: WebSocketTransportOptions): Promise<boolean> {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== options.path) {
    refuse(socket, 404, 'not found');
    return false;
  }
  const address = remoteAddressOf(req, options.trustProxy);
  if (!(await options.rateLimit.allow(address))) {
    refuse(socket, 429, 'too many requests');
    return false;
  }
  if (options.token !== undefined && !secretMatches(wsTokenOf(req), options.token)) {
    options.logger.warn({ remote: address }, 'WebSocket upgrade refused: missing or wrong token');
    refuse(socket, 401, 'missing or wrong token');
    return false;
  }
  if (!options.registry.canAccept) {
    refuse(socket, 503, options.registry.isAccepting ? 'too many calls: try again later' : 'shutting down');
    return false;
  }
  return !socket.destroyed;
}

function refuse(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function handleConnection(ws: WebSocket, req: IncomingMessage, options: WebSocketTransportOptions): void {
  const { registry } = options;
  const log = options.logger.child({ remote: req.socket.remoteAddress });
  const sessions = new Set<string>();
  log.debug('voice service connected');

  const sink: ActionSink = {
    send(action: Action) {
      const checked = ActionSchema.safeParse(action);
      if (!checked.success) {
        log.error({ type: action.type, problem: describeIssues(checked.error) }, 'invalid action not sent');
        return;
      }
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(checked.data));
    },
  };

  ws.on('message', (data: RawData) => {
    const parsed = parseEvent(rawToString(data));
    if (parsed.kind === 'invalid') {
      log.warn({ reason: parsed.reason, sessionId: parsed.sessionId }, 'malformed event dropped');
      return;
    }
    if (parsed.kind === 'unknown') {
      log.info({ type: parsed.type, sessionId: parsed.sessionId }, 'unknown event type ignored');
      return;
    }
    const { event } = parsed;
    const id = event.session.id;
    // Registered before dispatch, so a call is ended with its socket even if handling its start failed.
    const isNew = event.type === 'session_start' && !sessions.has(id);
    if (isNew) sessions.add(id);
    try {
      const call = registry.dispatch(event, sink);
      if (!call) {
        if (isNew) sessions.delete(id);
        log.warn({ type: event.type, sessionId: id }, 'event for an unknown session dropped');
      } else if (event.type === 'session_end') {
        sessions.delete(id);
      } else {
        sessions.add(id);
      }
    } catch (error) {
      // A bug in one event's handling must not take the socket or the other calls down.
      log.error({ err: error, type: event.type, sessionId: event.session.id }, 'event handling failed');
    }
  });

  ws.on('close', (code: number) => {
    log.debug({ code }, 'voice service disconnected');
    // The service closes the socket when the call ends; a call never outlives its socket.
    for (const id of sessions) void registry.end(id, 'socket_closed');
    sessions.clear();
  });

  ws.on('error', (error: Error) => log.warn({ err: error }, 'WebSocket error'));
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
