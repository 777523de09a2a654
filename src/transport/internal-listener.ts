import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { keepAliveLongerThanBalancers } from './keep-alive.js';

export interface InternalListener {
  readonly server: Server;
  /** Where the other replicas reach it: INTERNAL_URL, or this host and the port it got. */
  readonly url: string;
}

/**
 * The replicas' own listener, apart from the public port: what they ask of each other is served
 * here alone, and it stays open while a stopping replica's public port is already closed, until
 * its last call is handed over.
 */
export async function openInternalListener(
  app: Express,
  where: {
    /** HOST, or loopback for a worker of WORKERS. */
    host: string;
    port: number;
    /** A worker's own port, not shared with the other workers through the primary. */
    exclusive: boolean;
    /** INTERNAL_URL, when set: what the others are told, whatever this listens on. */
    advertised: string | undefined;
  },
): Promise<InternalListener> {
  const server = createServer(app);
  keepAliveLongerThanBalancers(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: where.port, host: where.host, exclusive: where.exclusive }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (where.advertised) return { server, url: where.advertised };
  const { port } = server.address() as AddressInfo;
  // On one address, that is where the others reach it; on all, by the host name (set INTERNAL_URL where that does not resolve).
  const host = where.host === '0.0.0.0' || where.host === '::' ? hostname() : where.host;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` };
}
