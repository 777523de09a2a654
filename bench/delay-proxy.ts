/**
 * A TCP proxy on 127.0.0.1 that stands in for a network with a round-trip time, where the
 * network phase cannot build a real one (network-link.ts): every byte takes half the round trip
 * in each direction, in order, and a new connection's first bytes from the client leave only
 * one round trip after it connected, as a real client's wait for the TCP handshake before it
 * can send. So a new TLS connection costs TCP's round trip and TLS's before the request, and a
 * kept one only the request's own: what a caller pays for each, as over a real network. Not
 * modelled: bandwidth, loss, and TCP's slow start after an idle spell.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { now } from './clock.js';

interface Due {
  at: number;
  chunk?: Buffer;
  /** The source ended (FIN) or failed (reset): passed on after the bytes before it. */
  end?: 'end' | 'destroy';
}

/** One direction of one connection: each chunk handed on `delayMs` after it came, never before `heldUntil`. */
class DelayedDirection {
  private readonly queue: Due[] = [];
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  constructor(
    from: Socket,
    private readonly to: Socket,
    private readonly delayMs: number,
    private readonly heldUntil: number,
  ) {
    from.on('data', (chunk: Buffer) => this.push({ at: this.dueAt(), chunk }));
    from.on('end', () => this.push({ at: this.dueAt(), end: 'end' }));
    from.on('close', (hadError) => {
      if (hadError) this.push({ at: this.dueAt(), end: 'destroy' });
    });
    from.on('error', () => undefined);
  }

  /** The moment a byte that came now reaches the other end: in order, so never before the last one. */
  private dueAt(): number {
    this.last = Math.max(Math.max(now(), this.heldUntil) + this.delayMs, this.last);
    return this.last;
  }

  private push(due: Due): void {
    this.queue.push(due);
    if (this.timer === undefined) this.schedule();
  }

  private schedule(): void {
    const head = this.queue[0];
    if (!head) return;
    this.timer = setTimeout(() => this.flush(), Math.max(0, head.at - now()));
  }

  private flush(): void {
    this.timer = undefined;
    const at = now();
    while (this.queue[0] && this.queue[0].at <= at) {
      const due = this.queue.shift()!;
      if (this.to.destroyed) continue;
      if (due.chunk) this.to.write(due.chunk);
      else if (due.end === 'end') this.to.end();
      else this.to.destroy();
    }
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

export class DelayProxy {
  private readonly sockets = new Set<Socket>();
  private readonly directions = new Set<DelayedDirection>();
  private readonly server: Server;

  private constructor(
    private readonly target: { host: string; port: number },
    private readonly rttMs: number,
  ) {
    // Half-open allowed: each end's FIN is passed on in its turn, after the bytes before it, not at once.
    this.server = createServer({ noDelay: true, allowHalfOpen: true }, (client) => this.forward(client));
  }

  /** Listens on 127.0.0.1 and forwards each connection to `target` over a link of `rttMs`. */
  static async start(target: { host: string; port: number }, rttMs: number): Promise<DelayProxy> {
    const proxy = new DelayProxy(target, rttMs);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private forward(client: Socket): void {
    const connectedAt = now();
    const upstream = connect({ host: this.target.host, port: this.target.port, noDelay: true, allowHalfOpen: true });
    const half = this.rttMs / 2;
    const directions = [new DelayedDirection(client, upstream, half, connectedAt + this.rttMs), new DelayedDirection(upstream, client, half, 0)];
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    }
    for (const direction of directions) this.directions.add(direction);
    upstream.once('close', () => {
      for (const direction of directions) this.directions.delete(direction);
    });
  }

  async close(): Promise<void> {
    for (const direction of this.directions) direction.stop();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
