/**
 * A report webhook's receiver as a real HTTP server: it checks each request's
 * signature the way a receiver should (verifySignature) and answers with the
 * status the test sets.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/reports/delivery.js';
import { freePort } from './ports.js';

export interface ReceivedReport {
  readonly id: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly verified: boolean;
  /** What the receiver answered. */
  readonly status: number;
}

export interface ReportReceiver {
  readonly url: string;
  readonly port: number;
  readonly received: readonly ReceivedReport[];
  /** The status the next requests are answered with; 200 at first, 0 for no answer at all. */
  status: number;
  /** The `index`-th request (from 0), waiting for it if need be. */
  request(index: number): Promise<ReceivedReport>;
  /** How often the delivery `id` was answered 2xx: a receiver that dedupes by id would have taken it this often. */
  accepted(id: string): number;
  close(): Promise<void>;
}

export async function startReportReceiver(secret: string, port = 0): Promise<ReportReceiver> {
  const received: ReceivedReport[] = [];
  const waiting = new Map<number, (report: ReceivedReport) => void>();
  const state = { status: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = (name: string): string | undefined => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      const verified = verifySignature(secret, header('x-hotline-timestamp') ?? '', body, header('x-hotline-signature'));
      const status = verified ? state.status : 401;
      const report: ReceivedReport = { id: header('x-hotline-delivery'), headers: req.headers, body, verified, status };
      received.push(report);
      waiting.get(received.length - 1)?.(report);
      waiting.delete(received.length - 1);
      // 0: hold the request open, as a receiver that hangs does.
      if (status !== 0) res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/hooks/hotline`,
    port: bound,
    received,
    get status() {
      return state.status;
    },
    set status(status: number) {
      state.status = status;
    },
    request(index) {
      const arrived = received[index];
      if (arrived) return Promise.resolve(arrived);
      return new Promise((resolve) => waiting.set(index, resolve));
    },
    accepted(id) {
      return received.filter((r) => r.id === id && r.status >= 200 && r.status < 300).length;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (for now): connections to it are refused. */
export const closedPort = freePort;
