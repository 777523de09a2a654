/**
 * The keep-alive agents of one kind of outgoing request (the model's, or the
 * business systems'): connections are kept as long as the server allows, and
 * opened ahead of need (spare-connections.ts).
 */
import http, { type ClientRequestArgs } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { SpareConnections } from './spare-connections.js';

/**
 * An idle connection is kept this long unless the server's Keep-Alive hint says less (Node's agent
 * honours it, a second early). Longer would outlive what NAT gateways and balancers keep (AWS's
 * 350 s); TCP keep-alive probes, on for every kept connection, keep their state meanwhile.
 */
export const KEEP_IDLE_MS = 120_000;

// noDelay as Node's agent sets it for its own connections: a spare must not hold a small write back (Nagle).
const AGENT_OPTIONS: http.AgentOptions & { noDelay: boolean } = { keepAlive: true, timeout: KEEP_IDLE_MS, noDelay: true };

/** A spare if one is open, else a connection the agent opens itself (watched by the spares). */
function connectionFor(spares: SpareConnections, options: ClientRequestArgs, open: () => Duplex | null | undefined): Duplex | null | undefined {
  const spare = spares.take(options);
  if (spare) return spare;
  const socket = open();
  if (socket) spares.named(socket, options);
  return socket;
}

/** Node reads keepSocketAlive's answer (typed void): false destroys the connection, as with a server hint too short to reuse it. */
function keptAlive(spares: SpareConnections, socket: Duplex, kept: unknown): void {
  if (kept !== false) spares.freed(socket);
  return kept as void;
}

class HttpAgent extends http.Agent {
  readonly spares: SpareConnections = new SpareConnections({ agent: this, agentOptions: AGENT_OPTIONS, open: (options) => super.createConnection(options) as Socket });

  constructor() {
    super(AGENT_OPTIONS);
  }

  override createConnection(options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    return connectionFor(this.spares, options, () => super.createConnection(options, callback));
  }

  override keepSocketAlive(socket: Duplex): void {
    return keptAlive(this.spares, socket, super.keepSocketAlive(socket));
  }
}

class HttpsAgent extends https.Agent {
  readonly spares: SpareConnections = new SpareConnections({ agent: this, agentOptions: AGENT_OPTIONS, open: (options) => super.createConnection(options) as Socket });

  constructor() {
    super(AGENT_OPTIONS);
  }

  override createConnection(options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    return connectionFor(this.spares, options, () => super.createConnection(options, callback));
  }

  override keepSocketAlive(socket: Duplex): void {
    return keptAlive(this.spares, socket, super.keepSocketAlive(socket));
  }
}

export class WarmAgents {
  readonly http = new HttpAgent();
  readonly https = new HttpsAgent();

  agentFor(url: URL): http.Agent | undefined {
    return url.protocol === 'https:' ? this.https : url.protocol === 'http:' ? this.http : undefined;
  }

  /** `holder` (a call) will soon send a request to `url`'s origin: a connection is made ready unless one is idle. */
  expect(holder: object, url: URL): void {
    if (url.protocol === 'https:') this.https.spares.expect(holder, url);
    else if (url.protocol === 'http:') this.http.spares.expect(holder, url);
  }

  /** `holder`'s request has gone out, or it needs none any more (its call ended). */
  spent(holder: object): void {
    this.http.spares.spent(holder);
    this.https.spares.spent(holder);
  }

  /** Whether `socket` was opened ahead of the request it served. */
  wasSpare(socket: Duplex | null | undefined): boolean {
    return this.http.spares.wasSpare(socket) || this.https.spares.wasSpare(socket);
  }

  /** Connections opened ahead of need, and how many of them a request took. */
  get spareCounts(): { opened: number; taken: number } {
    const a = this.http.spares.counts;
    const b = this.https.spares.counts;
    return { opened: a.opened + b.opened, taken: a.taken + b.taken };
  }

  /** Destroys every connection, idle, spare or busy. */
  close(): void {
    this.http.spares.close();
    this.https.spares.close();
    this.http.destroy();
    this.https.destroy();
  }
}
