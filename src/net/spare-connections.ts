/**
 * Connections opened ahead of need. A keep-alive agent reuses a connection a
 * request left behind, but a phone conversation's requests are seconds apart
 * and servers close idle connections (Node's own after 5 s): the next turn
 * would pay a TCP and a TLS handshake — two round trips — on the caller's time.
 * Whoever will soon send a request says so (`expect`), and when no idle
 * connection to that origin is left for it, one is opened now and handed to
 * the agent when the request comes (`take`, from the agent's createConnection).
 *
 * Bounded: one wish per holder (a call) and origin, each dropped by `spent`
 * or after WISH_MS; a spare nobody takes closes after SPARE_IDLE_MS.
 * So idle calls hold no connection each.
 */
import type { Agent, AgentOptions, ClientRequestArgs } from 'node:http';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { urlToHttpOptions } from 'node:url';

/** How long a wish stands: longer than a caller usually speaks before their words are final. */
export const WISH_MS = 20_000;
/** A spare unused this long closes: the wish it was for has passed. */
export const SPARE_IDLE_MS = 25_000;

/** What the spares need of their agent: its own way of opening a connection and naming an origin. */
export interface SpareHost {
  readonly agent: Agent;
  /** What the agent was made with: they are part of a connection's options, and of its name. */
  readonly agentOptions: AgentOptions;
  /** The agent's createConnection as the base class has it (TLS sessions resumed for https). */
  open(options: ClientRequestArgs): Socket;
}

export class SpareConnections {
  /** Origin name → holder → when its wish lapses, oldest first (a wish said again moves to the end). */
  private readonly wishes = new Map<string, Map<object, number>>();
  /** Holder → the origins it wishes a connection to. */
  private readonly wishing = new Map<object, Set<string>>();
  private readonly spares = new Map<string, Socket[]>();
  /** Connections whose close may leave a wish without one: checked again then. */
  private readonly watched = new WeakSet<Duplex>();
  private readonly names = new WeakMap<Duplex, string>();
  /** Spares handed to a request: like a kept connection, one may have been closed by the server meanwhile. */
  private readonly handedOut = new WeakSet<Duplex>();
  private readonly origins = new Map<string, ClientRequestArgs>();
  private opened = 0;
  private taken = 0;

  constructor(private readonly host: SpareHost) {}

  /** `holder` will soon send a request to `url`'s origin: have a connection ready for it. */
  expect(holder: object, url: URL): void {
    const options = this.optionsOf(url);
    const name = this.host.agent.getName(options);
    this.origins.set(name, options);
    let wishes = this.wishes.get(name);
    if (!wishes) this.wishes.set(name, (wishes = new Map()));
    wishes.delete(holder);
    wishes.set(holder, Date.now() + WISH_MS);
    let mine = this.wishing.get(holder);
    if (!mine) this.wishing.set(holder, (mine = new Set()));
    mine.add(name);
    this.fill(name);
  }

  /** `holder`'s request went out (it found a connection, idle or spare): its wishes are spent. */
  spent(holder: object): void {
    const mine = this.wishing.get(holder);
    if (!mine) return;
    this.wishing.delete(holder);
    for (const name of mine) this.wishes.get(name)?.delete(holder);
  }

  /** The agent needs a new connection for `options`: a spare, if one is open. */
  take(options: ClientRequestArgs): Socket | undefined {
    const name = this.host.agent.getName(options);
    const spares = this.spares.get(name);
    while (spares && spares.length > 0) {
      const spare = spares.shift()!;
      if (spare.destroyed) continue;
      spare.removeListener('timeout', onSpareIdle);
      // The agent sets its own idle timeout once the request is done; until then the request's.
      spare.setTimeout(0);
      spare.ref();
      this.taken += 1;
      this.handedOut.add(spare);
      return spare;
    }
    return undefined;
  }

  /** Whether `socket` was opened ahead of its request (so it may have gone stale before it). */
  wasSpare(socket: Duplex | null | undefined): boolean {
    return socket ? this.handedOut.has(socket) : false;
  }

  /** A connection the agent opened itself, so that its closing is noticed (see `freed`). */
  named(socket: Duplex, options: ClientRequestArgs): void {
    this.names.set(socket, this.host.agent.getName(options));
  }

  /** A connection went back to the agent's idle pool: if the server closes it, a wish may need another. */
  freed(socket: Duplex): void {
    if (this.watched.has(socket)) return;
    this.watched.add(socket);
    socket.once('close', () => {
      const name = this.names.get(socket);
      if (name !== undefined) this.fill(name);
    });
  }

  /** Spares opened and taken so far, for tests and the bench. */
  get counts(): { opened: number; taken: number } {
    return { opened: this.opened, taken: this.taken };
  }

  close(): void {
    for (const spares of this.spares.values()) for (const spare of spares) spare.destroy();
    this.spares.clear();
    this.wishes.clear();
    this.wishing.clear();
  }

  /** Opens spares until every standing wish for `name` has an idle connection or a spare. */
  private fill(name: string): void {
    const options = this.origins.get(name);
    if (!options) return;
    const wanted = this.standingWishes(name);
    const spares = (this.spares.get(name) ?? []).filter((s) => !s.destroyed);
    this.spares.set(name, spares);
    let have = (this.host.agent.freeSockets[name]?.length ?? 0) + spares.length;
    while (have < wanted) {
      spares.push(this.openSpare(name, options));
      have += 1;
    }
  }

  private standingWishes(name: string): number {
    const wishes = this.wishes.get(name);
    if (!wishes) return 0;
    const now = Date.now();
    for (const [holder, lapses] of wishes) {
      if (lapses > now) break;
      wishes.delete(holder);
      const mine = this.wishing.get(holder);
      mine?.delete(name);
      if (mine?.size === 0) this.wishing.delete(holder);
    }
    return wishes.size;
  }

  private openSpare(name: string, options: ClientRequestArgs): Socket {
    const spare = this.host.open({ ...options, _agentKey: name } as ClientRequestArgs);
    this.opened += 1;
    this.names.set(spare, name);
    // A spare must never keep the process alive, nor fail it: an error simply closes it.
    spare.unref();
    spare.on('error', ignore);
    spare.setTimeout(SPARE_IDLE_MS);
    spare.on('timeout', onSpareIdle);
    spare.once('close', () => {
      const spares = this.spares.get(name);
      const at = spares?.indexOf(spare) ?? -1;
      if (spares && at >= 0) spares.splice(at, 1);
    });
    return spare;
  }

  /** The options the agent itself would open a connection to `url` with, so the names match. */
  private optionsOf(url: URL): ClientRequestArgs {
    const base = urlToHttpOptions(url);
    const hostname = base.hostname ?? 'localhost';
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const options: ClientRequestArgs & { servername?: string; keepAlive?: boolean; keepAliveInitialDelay?: number } = {
      ...this.host.agentOptions,
      path: null,
      protocol: url.protocol,
      host: hostname,
      hostname,
      port,
      // As the agent names a TLS connection: by the host's name, never an address.
      servername: isIP(hostname) ? '' : hostname,
      keepAlive: true,
      keepAliveInitialDelay: this.host.agentOptions.keepAliveMsecs ?? 1000,
    };
    return options;
  }
}

function onSpareIdle(this: Socket): void {
  this.destroy();
}

function ignore(): void {}
