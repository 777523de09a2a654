import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The POST requests being answered (webhook events, forwarded events, operators' actions), for a
 * stop that lets them finish. GETs are left out: a dashboard's live stream never finishes, and a
 * balancer's health checks go on to the end. Once stopping, each answer closes its connection, so
 * a balancer's pooled connection is never cut under a request it is sending.
 */
export class RequestsInFlight {
  private active = 0;
  private stopping = false;
  private waiters: (() => void)[] = [];

  watch(server: Server): void {
    // Before the app's own listener, which may answer at once.
    server.prependListener('request', (req, res) => {
      if (this.stopping && !res.headersSent) res.setHeader('connection', 'close');
      if (req.method !== 'POST') return;
      this.active += 1;
      res.once('close', () => {
        this.active -= 1;
        if (this.active > 0) return;
        const done = this.waiters;
        this.waiters = [];
        for (const resolve of done) resolve();
      });
    });
  }

  /** From now on every answer closes its connection. */
  stop(): void {
    this.stopping = true;
  }

  /** Resolves once no request is under way, or after `ms`. */
  async settled(ms: number): Promise<void> {
    if (this.active === 0) return;
    const bound = new AbortController();
    await Promise.race([
      new Promise<void>((resolve) => this.waiters.push(resolve)),
      sleep(ms, undefined, { signal: bound.signal, ref: false }).catch(() => undefined),
    ]);
    bound.abort();
  }
}
