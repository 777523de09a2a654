/**
 * A business system (an order API, a CRM) as a real HTTP server on port 0:
 * it records every request, body included, before the test's handler
 * answers it (or never does).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** performance.now() when the request was complete. */
  readonly at: number;
}

export type BusinessHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface BusinessServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request so far, in order of arrival. */
  readonly requests: readonly RecordedRequest[];
  /** The `index`-th request (from 0), waiting for it if it has not come yet. */
  request(index: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export async function startBusinessServer(handler: BusinessHandler): Promise<BusinessServer> {
  const requests: RecordedRequest[] = [];
  const waiting = new Map<number, ((request: RecordedRequest) => void)[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      requests.push(recorded);
      for (const resolve of waiting.get(requests.length - 1) ?? []) resolve(recorded);
      waiting.delete(requests.length - 1);
      // A handler that throws is a broken answer, as a real system's would be.
      Promise.resolve()
        .then(() => handler(recorded, res))
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    request(index) {
      const arrived = requests[index];
      if (arrived) return Promise.resolve(arrived);
      return new Promise((resolve) => waiting.set(index, [...(waiting.get(index) ?? []), resolve]));
    },
    close() {
      // Requests a test left hanging (a system that never answers) must not keep close() waiting.
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers with `body` as JSON. */
export function json(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
