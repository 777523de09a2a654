/**
 * A collector that takes OTLP/HTTP exports and throws them away, standing in for the one of a
 * traced Hotline (npm run bench -- --tracing): Hotline pays for making, batching, serialising and
 * sending its spans, as it would in production; what a real collector does with them is its own cost.
 * Runs on the callers' thread, which gives way to Hotline's as another host would.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  /** Exports received, and their bytes. */
  readonly exports: number;
  readonly bytes: number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get exports() {
      return exports;
    },
    get bytes() {
      return bytes;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
