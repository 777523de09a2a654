/**
 * Where the world reaches Hotline: the public port (the HTTP app with every feature's routes, and
 * the voice service's WebSocket on /ws) and, among replicas, the internal listener of their own.
 * Closing the public port is also where the calls end: they arrived through it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import type { CallRegistry } from '../call/call-registry.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { SecretGate } from '../transport/auth.js';
import { createHttpApp, createInternalApp } from '../transport/http-app.js';
import { openInternalListener, type InternalListener } from '../transport/internal-listener.js';
import { keepAliveLongerThanBalancers } from '../transport/keep-alive.js';
import { AccessLimits, RateLimit } from '../transport/rate-limit.js';
import { RequestsInFlight } from '../transport/requests-in-flight.js';
import { attachWebSocketTransport } from '../transport/ws-server.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';

/** A stop waits at most this long for the HTTP requests under way (a forwarded event waits for its answer at most 4.5 s). */
const IN_FLIGHT_WAIT_MS = 5_000;

export interface ListenerParts {
  readonly registry: CallRegistry;
  readonly metrics: Metrics;
  readonly gate: SecretGate;
  readonly stored: StoreFeature;
  readonly routers: readonly Router[];
  /** What the other replicas may ask of this one; none, no internal listener. */
  readonly internalRouters: readonly Router[];
  readonly storeBacklog: () => { pending: number; oldestMs: number; failing: string | undefined };
  /** A worker of WORKERS: the other replicas reach it on a loopback port of its own (not INTERNAL_URL's). */
  readonly worker: boolean;
}

export interface Listening {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  readonly internal: InternalListener | undefined;
  readonly inFlight: RequestsInFlight;
  /** No new connection on the public port (idle kept-alive ones close now); resolves once every one has closed. */
  stopListening(): Promise<void>;
}

export async function openListeners(config: Config, logger: Logger, parts: ListenerParts, opened: OpenedStack): Promise<Listening> {
  const { registry, gate } = parts;
  const inFlight = new RequestsInFlight();
  // Opened before the public port, so closed after it: the others forward this replica's calls'
  // events here until its last call has ended.
  const internal = parts.internalRouters.length > 0 ? await openInternal(config, logger, parts) : undefined;
  if (internal) {
    opened.push('the internal listener', {
      close: () => {
        internal.server.close();
        internal.server.closeAllConnections();
      },
    });
    inFlight.watch(internal.server);
    await parts.stored.replica.setInternalUrl(internal.url);
  }

  const app = createHttpApp({
    registry,
    metrics: parts.metrics,
    logger,
    llm: { mode: config.llm.mode, model: config.llm.model },
    routers: [...parts.routers],
    proxyTrust: gate.proxyTrust,
    metricsToken: config.auth.metricsToken,
    storeBacklog: parts.storeBacklog,
    gate,
  });
  const server = createServer(app);
  keepAliveLongerThanBalancers(server);
  let publicClosed: Promise<void> | undefined;
  const stopListening = (): Promise<void> => (publicClosed ??= new Promise<void>((resolve) => server.close(() => resolve())));
  inFlight.watch(server);
  // Without an upgrade listener Node hands an upgrade request to the app, which answers 404.
  const wss = config.transports.has('websocket')
    ? attachWebSocketTransport(server, {
        registry,
        logger,
        path: '/ws',
        maxPayload: config.maxEventBytes,
        token: config.auth.wsToken,
        limits: new AccessLimits(new RateLimit(config.rateLimit.wsUpgradesPerMinute, parts.stored.replicasAlive), gate.failures),
        proxyTrust: gate.proxyTrust,
        startTimeoutMs: config.websocket.startTimeoutMs,
        pingIntervalMs: config.websocket.pingIntervalMs,
        reconnectGraceMs: config.websocket.reconnectGraceMs,
        actionArrays: config.actionArrays.has('websocket'),
      })
    : undefined;
  opened.push('the public listener', {
    stopTaking: () => void stopListening(),
    close: async () => {
      const closed = stopListening();
      await registry.endAll('shutdown');
      // Requests under way finish first (an event forwarded to the replica that has its call now):
      // cut, the service would see its event fail, and a balancer might send it again.
      await inFlight.settled(IN_FLIGHT_WAIT_MS);
      // Closing the WebSocketServer stops its ping timer; its sockets do not close by themselves.
      wss?.close();
      for (const client of wss?.clients ?? []) client.terminate();
      server.closeAllConnections();
      await closed;
    },
  });
  await listen(server, config.port, config.host);
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return { url: `http://${host}:${port}`, wsUrl: `ws://${host}:${port}/ws`, port, internal, inFlight, stopListening };
}

function openInternal(config: Config, logger: Logger, parts: ListenerParts): Promise<InternalListener> {
  return openInternalListener(
    createInternalApp({ routers: [...parts.internalRouters], logger, registry: parts.registry }),
    // A worker of WORKERS: a loopback port of its own, not shared with the other workers through the primary.
    parts.worker
      ? { host: '127.0.0.1', port: 0, exclusive: true, advertised: undefined }
      : { host: config.host, port: config.replica.internalPort, exclusive: false, advertised: config.replica.internalUrl },
  );
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
