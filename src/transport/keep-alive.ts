import type { Server } from 'node:http';

/**
 * How long an idle kept-alive connection stays open here: longer than the balancers in front keep
 * theirs (nginx's upstream `keepalive_timeout` and the clouds' load balancers: 60 s), so that they
 * always close an idle connection first. The other way round (Node's default is 5 s), a balancer may
 * send a request on a connection in the moment this end closes it, and a POST so lost is not sent again.
 */
export const KEEP_ALIVE_MS = 65_000;

export function keepAliveLongerThanBalancers(server: Server): void {
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // Counted from a request's first byte; kept above the idle time, as Node advises.
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
}
