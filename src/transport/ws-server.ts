import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { Call } from '../call/call.js';
import type { ActionSink } from '../call/call-deps.js';
import type { CallRegistry } from '../call/call-registry.js';
import type { Logger } from '../logger.js';
import { checkAction } from '../protocol/action-check.js';
import type { Action } from '../protocol/actions.js';
import { describeIssues, parseEvent } from '../protocol/parse-event.js';
import { clientAddressOf, secretMatches, wsTokenOf, type ProxyTrust } from './auth.js';
import { textFrame } from './ws-frame.js';
import type { AccessLimits } from './rate-limit.js';

export interface WebSocketTransportOptions {
  registry: CallRegistry;
  logger: Logger;
  path: string;
  maxPayload: number;
  /** When set, an upgrade without this token is refused with 401 before any session exists. */
  token: string | undefined;
  /** Per-address limits, applied once the token has been checked. */
  limits: AccessLimits;
  /** Which X-Forwarded-For hops name the client; the same function as the webhook's. */
  proxyTrust: ProxyTrust;
  /** A socket that has started no call by then is closed. */
  startTimeoutMs: number;
  /** Every socket is pinged this often and dropped if it did not answer the last ping; 0 never. */
  pingIntervalMs: number;
  /** A socket that drops without a close handshake: its calls wait this long for the service to reconnect. */
  reconnectGraceMs: number;
  /** Actions sent together go out as one array frame (production service only). */
  actionArrays?: boolean;
}

/** Closes a socket that started no call in time: it was holding one of the MAX_CALLS places for nothing. */
const CLOSE_NO_SESSION_START = 1008;
/** Closes a socket left without a call when every place is taken ("try again later"). */
const CLOSE_NO_FREE_PLACE = 1013;
const CLOSE_GOING_AWAY = 1001;
/** Hotline ended the call itself (idle, shutdown) and says so. */
const CLOSE_CALL_ENDED = 1000;
/** No close frame: the connection broke (or a dead peer was dropped), rather than being closed. */
const CLOSE_ABNORMAL = 1006;

/** Session id → what to tell the socket carrying that call when it ends. */
type CallCarriers = Map<string, (sessionId: string) => void>;

/** What the upgrade found out about a socket before it opened. */
interface Admitted {
  /** The client as the rate limits saw it. */
  address: string;
  /** Gives back the MAX_CALLS place the socket holds until its first call starts (idempotent). */
  releaseSlot: () => void;
}

/**
 * The voice service's WebSocket: one connection per call, events in, actions
 * out. No conversation logic lives here. Closing the returned server stops
 * its ping timer.
 */
export function attachWebSocketTransport(server: Server, options: WebSocketTransportOptions): WebSocketServer {
  // Oversized frames close the socket with 1009, as ws does by itself with maxPayload.
  // Invalid UTF-8 in a text frame would close the socket (1007) and end the call with it; a caller
  // must not lose the call over one bad frame from the service, so such frames are decoded leniently
  // (U+FFFD) and dropped by the event parser like any other malformed frame.
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload, skipUTF8Validation: true });
  // One listener for all sockets: a call's end, by whichever side, reaches the socket that carried it.
  const carriers: CallCarriers = new Map();
  options.registry.onCallEnded((sessionId) => {
    const callEnded = carriers.get(sessionId);
    carriers.delete(sessionId);
    callEnded?.(sessionId);
  });

  server.on('upgrade', function upgradeToVoiceSocket(req: IncomingMessage, socket: Duplex, head: Buffer) {
    // A client that vanishes mid-handshake must not raise an unhandled error. A function of the
    // module's, not an arrow here: it stays on the socket for the call's life, and an arrow would keep
    // this scope's upgrade request (its headers) alive with it, about 1 KB of every call.
    socket.on('error', destroySocket);
    void admit(req, socket, options).then(
      (admitted) => {
        if (!admitted) return;
        // The raw socket closes with the WebSocket, and also when ws refuses the handshake itself
        // (a bad Sec-WebSocket-Key) without ever opening one: either way the place is free again.
        socket.once('close', admitted.releaseSlot);
        wss.handleUpgrade(req, socket, head, (ws) => {
          handleConnection(ws, socket, admitted, options, carriers);
          wss.emit('connection', ws, req);
        });
      },
      (error: unknown) => {
        options.logger.error({ err: error }, 'WebSocket upgrade failed');
        refuse(socket, 500, 'internal error');
      },
    );
  });

  const stopPinging = pingPeriodically(wss, options);
  wss.once('close', stopPinging);
  return wss;
}

function destroySocket(this: Duplex): void {
  this.destroy();
}

/**
 * Path, then token and rate limits, then a MAX_CALLS place; refuses with an
 * HTTP status and a JSON body. An admitted socket holds its place from here.
 */
async function admit(req: IncomingMessage, socket: Duplex, options: WebSocketTransportOptions): Promise<Admitted | undefined> {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== options.path) {
    refuse(socket, 404, 'not found');
    return undefined;
  }
  const address = clientAddressOf(req, options.proxyTrust);
  const { token } = options;
  // The token is compared only if the address has failures left (see AccessLimits).
  const authenticates = token === undefined ? undefined : () => secretMatches(wsTokenOf(req), token);
  const admission = await options.limits.admit(address, authenticates);
  if (admission === 'limited') {
    refuse(socket, 429, 'too many requests');
    return undefined;
  }
  if (admission === 'unauthorized') {
    options.logger.warn({ remote: address }, 'WebSocket upgrade refused: missing or wrong token');
    refuse(socket, 401, 'missing or wrong token');
    return undefined;
  }
  if (socket.destroyed) return undefined;
  // Every open socket counts against MAX_CALLS, not only those with a call: idle sockets cost
  // memory and descriptors too, and unlimited ones would crowd out real calls.
  const releaseSlot = options.registry.holdSlot();
  if (!releaseSlot) {
    refuse(socket, 503, options.registry.isAccepting ? 'too many calls: try again later' : 'shutting down');
    return undefined;
  }
  return { address, releaseSlot };
}

function refuse(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Sockets Hotline dropped itself for not answering pings: their peer is gone, not reconnecting. */
const deadPeers = new WeakSet<WebSocket>();

/**
 * Each interval is cut into this many slices, each pinging its share of the sockets: thousands pinged
 * in one go would hold every call's speech back for a few milliseconds at once.
 */
const PING_SLICES = 10;

/**
 * One timer for all sockets. A peer that vanished without closing (a dead
 * NAT entry, a crashed host) leaves a socket that would hold its call and its
 * descriptor forever; one that has not answered the previous ping by the next
 * is terminated, which ends its call through the close handler.
 */
function pingPeriodically(wss: WebSocketServer, options: WebSocketTransportOptions): () => void {
  if (options.pingIntervalMs <= 0) return () => undefined;
  const awaitingPong = new WeakSet<WebSocket>();
  const slices = Array.from({ length: PING_SLICES }, () => new Set<WebSocket>());
  let joining = 0;
  wss.on('connection', (ws: WebSocket) => {
    const slice = slices[joining++ % PING_SLICES]!;
    slice.add(ws);
    ws.once('close', () => slice.delete(ws));
  });
  let turn = 0;
  const timer = setInterval(() => {
    for (const ws of slices[turn++ % PING_SLICES]!) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      if (awaitingPong.has(ws)) {
        options.logger.info('voice service did not answer a ping; dropping its socket');
        deadPeers.add(ws);
        ws.terminate();
        continue;
      }
      awaitingPong.add(ws);
      ws.once('pong', () => awaitingPong.delete(ws));
      ws.ping();
    }
  }, options.pingIntervalMs / PING_SLICES);
  // Nothing to watch must not keep the process alive.
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * One voice service socket. While it carries no call it holds one of the
 * MAX_CALLS places and must start a call within startTimeoutMs; its calls end
 * when it closes.
 */
function handleConnection(ws: WebSocket, socket: Duplex, admitted: Admitted, options: WebSocketTransportOptions, carriers: CallCarriers): void {
  const { registry } = options;
  const log = options.logger.child({ remote: admitted.address });
  const sessions = new Set<string>();
  let protocolError = false;
  log.debug('voice service connected');

  let releaseSlot: (() => void) | undefined = admitted.releaseSlot;
  const closeIfNoStart = (): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      log.info({ timeoutMs: options.startTimeoutMs }, 'WebSocket started no call in time; closing it');
      ws.close(CLOSE_NO_SESSION_START, 'no session_start in time');
    }, options.startTimeoutMs);
    timer.unref();
    return timer;
  };
  let startTimer: NodeJS.Timeout | undefined = closeIfNoStart();

  // A socket whose calls have ended is as idle as one that never started, and kept open it would be
  // the same unlimited idle socket: it takes a place and a deadline again, or is closed.
  const becomeIdle = (): void => {
    if (releaseSlot || sessions.size > 0 || ws.readyState !== WebSocket.OPEN) return;
    releaseSlot = registry.holdSlot();
    if (!releaseSlot) {
      const shuttingDown = !registry.isAccepting;
      log.info({ shuttingDown }, 'no place for a WebSocket without a call; closing it');
      ws.close(shuttingDown ? CLOSE_GOING_AWAY : CLOSE_NO_FREE_PLACE, shuttingDown ? 'shutting down' : 'no free place');
      return;
    }
    startTimer ??= closeIfNoStart();
  };
  const callEnded = (id: string): void => {
    sessions.delete(id);
    becomeIdle();
  };

  // Without an extension (the server offers none: no compression), a frame is its bytes: written whole to
  // the socket, it goes out in one write. ws keeps the handshake, the reading, pings and the close; every
  // write of its is a whole frame too, so the two never interleave within one.
  const direct = ws.extensions === '';
  const write = (answer: Action | Action[]): void => {
    if (ws.readyState !== WebSocket.OPEN) return;
    const text = JSON.stringify(answer);
    if (direct) socket.write(textFrame(text));
    else ws.send(text);
  };
  // Actions the core sends in one go (a barge_in and the speak after it) share a frame: one round trip.
  let batch: Action[] | undefined;
  const flush = (): void => {
    const actions = batch;
    batch = undefined;
    if (actions) write(actions.length === 1 ? actions[0]! : actions);
  };

  const sink: ActionSink = {
    send(action: Action) {
      const checked = checkAction(action);
      if (!checked.success) {
        log.error({ type: action.type, problem: describeIssues(checked.error) }, 'invalid action not sent');
        return;
      }
      if (!options.actionArrays) return write(checked.data);
      if (batch) return void batch.push(checked.data);
      batch = [checked.data];
      queueMicrotask(flush);
    },
    get open() {
      return ws.readyState === WebSocket.OPEN;
    },
    close() {
      flush();
      // Queued after the call's last actions: the service receives them before the close frame.
      ws.close(CLOSE_CALL_ENDED, 'call ended');
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
    // The place this socket held becomes its call's: freed just before, so the call can take it (a
    // session_start, or any event of a session this process does not know, which adopts it).
    const starting = event.type !== 'session_end' && !registry.get(id);
    if (starting) {
      releaseSlot?.();
      releaseSlot = undefined;
    }
    let call: Call | undefined;
    try {
      call = registry.dispatch(event, sink);
    } catch (error) {
      // A bug in one event's handling must not take the socket or the other calls down.
      log.error({ err: error, type: event.type, sessionId: id }, 'event handling failed');
    }
    // A call whose start threw may exist all the same: it too must end with this socket.
    call ??= registry.get(id);
    // Refused: another open connection owns this session (logged by the registry), or it is unknown.
    const owned = call !== undefined && call.sink === sink && registry.get(id) === call;
    if (!call) log.warn({ type: event.type, sessionId: id }, 'event for an unknown session dropped');
    if (owned && !sessions.has(id)) {
      // A call started here, or taken over after its connection dropped (a reconnect): it ends with this socket.
      sessions.add(id);
      carriers.set(id, callEnded);
      releaseSlot?.();
      releaseSlot = undefined;
      clearTimeout(startTimer);
      startTimer = undefined;
    } else if (!owned && starting) {
      // Refused (full, shutting down, a session that ended here): still idle, so it needs its place back, or goes.
      becomeIdle();
    }
  });

  ws.on('close', (code: number) => {
    clearTimeout(startTimer);
    releaseSlot?.();
    releaseSlot = undefined;
    log.debug({ code }, 'voice service disconnected');
    // The service closes the socket when the call ends, and a call ends with it. A socket that broke
    // without a close handshake may be followed by the service reconnecting: its calls wait a moment.
    const broken = code === CLOSE_ABNORMAL && !deadPeers.has(ws) && !protocolError;
    const grace = broken ? options.reconnectGraceMs : 0;
    for (const id of [...sessions]) registry.release(id, sink, 'socket_closed', grace);
    sessions.clear();
  });

  ws.on('error', (error: Error) => {
    // ws reports the peer's protocol errors (an oversized frame, bad framing) here and closes the socket:
    // Hotline closed it, so no reconnect is waited for.
    protocolError = true;
    log.warn({ err: error }, 'WebSocket error');
  });
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
