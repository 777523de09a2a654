import type { Request, Response } from 'express';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../logger.js';

export interface CsvExportLimits {
  /** Exports running at once in this process; beyond it, 503. */
  readonly running: number;
  /** Exports running at once for one client address; beyond it, 429. */
  readonly perAddress: number;
  /** A client that reads nothing for this long is cut off: it would hold its place for good. */
  readonly stallMs: number;
}

export const CSV_EXPORT_LIMITS: CsvExportLimits = { running: 4, perAddress: 2, stallMs: 60_000 };

/**
 * Sends CSV exports (the dashboard's history, a campaign's results) as they
 * are made, a slice at a time: a slice is written only once the client has
 * taken the one before ('drain'), so a client that reads slowly or not at all
 * makes Hotline hold a slice and a socket buffer, never the whole file. Each
 * slice is made on a turn of the event loop of its own, so calls never wait
 * for an export; and only so many exports run at once.
 */
export class CsvExports {
  private running = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    private readonly limits: CsvExportLimits = CSV_EXPORT_LIMITS,
  ) {}

  /**
   * Answers `req` with the CSV `chunks` make, as `fileName`; or with 503/429 and why, when too
   * many exports run. The chunks are asked for one at a time, only once the client has taken
   * the last; a client gone stops them.
   */
  async send(req: Request, res: Response, fileName: string, chunks: AsyncIterable<string>): Promise<void> {
    const address = req.ip ?? 'unknown';
    if (this.running >= this.limits.running) {
      res.status(503).set('Retry-After', '30').json({ error: `${this.running} exports are running, the most at once: try again when one has finished` });
      return;
    }
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.limits.perAddress) {
      res.status(429).set('Retry-After', '30').json({ error: `${mine} exports are running for this address, the most at once: wait for one to finish` });
      return;
    }
    this.running += 1;
    this.byAddress.set(address, mine + 1);
    try {
      res.type('text/csv; charset=utf-8').attachment(fileName);
      for await (const chunk of chunks) {
        if (res.destroyed) break;
        if (!res.write(chunk) && !(await this.drained(res))) break;
        // The next slice on a turn of its own: other work (calls) goes first.
        await nextTurn();
      }
      if (!res.destroyed) res.end();
    } catch (error) {
      this.logger.error({ err: error, file: fileName }, 'CSV export failed');
      // Half a file must not look whole: the connection is cut, never ended cleanly.
      if (res.headersSent) res.destroy();
      else res.status(500).json({ error: 'the export failed' });
    } finally {
      this.running -= 1;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    }
  }

  /** True once the client has taken what was written; false when it went away or read nothing for stallMs (then it is cut off). */
  private drained(res: Response): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        res.off('drain', onDrain);
        res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      const timer = setTimeout(() => {
        this.logger.warn({ stallMs: this.limits.stallMs }, 'CSV export cut off: the client stopped reading');
        res.destroy();
        done(false);
      }, this.limits.stallMs);
      timer.unref();
      res.on('drain', onDrain);
      res.on('close', onClose);
    });
  }
}
