/**
 * The far side of the network phase's link, run as a process of its own (inside the network
 * namespace when the link is one, see network-link.ts): the scripted model and the business system
 * the bench's tool calls, both over HTTPS with the bench's self-signed certificate. It tells the
 * bench about every request over the IPC channel (far-side-messages.ts), and ends when the bench
 * stops it or goes away.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { getPriority } from 'node:os';
import type { AddressInfo, Socket } from 'node:net';
import { startScriptedLlmServer } from '../src/llm/scripted-server.js';
import { completingTokenIndices } from './baselines.js';
import { clockOffset, now } from './clock.js';
import { FAR_SIDE_CONFIG_VARIABLE, type FarSideConfig, type FarSideMessage } from './far-side-messages.js';
import { businessAnswer, decide } from './network-script.js';

const send = (message: FarSideMessage): void => {
  process.send?.(message);
};

async function startModel(config: FarSideConfig, tls: { key: string; cert: string }) {
  const server = await startScriptedLlmServer({
    host: config.host,
    tls,
    keepAliveTimeoutMs: config.keepAliveMs,
    keepAliveHint: config.keepAliveHint,
    ttftMs: config.ttftMs,
    tokenDelayMs: config.tokenDelayMs,
    script: (body, { index, connectionRequests }) => {
      const decision = decide(body);
      // The server publishes the record and calls the script in the same tick: it is the newest one.
      const record = server.requests.at(-1);
      if (record?.index === index) {
        void record.ended.then((outcome) => {
          const content = record.tokens.filter((token) => token.toolCallIndex === undefined);
          send({
            kind: 'model',
            role: decision.role,
            tag: decision.tag,
            toolOffered: decision.toolOffered,
            connectionRequests,
            receivedAt: record.receivedAt,
            firstTokenAt: content[0]?.at,
            firstSentenceAt: content[completingTokenIndices(content.map((token) => token.text))[0] ?? -1]?.at,
            endedAt: now(),
            outcome,
          });
          // Nothing else reads the record: the phase must not keep every token of every request.
          server.requests.length = 0;
        });
      }
      return decision.reply;
    },
  });
  return server;
}

/** The business system: answers an order lookup at once, so what is measured is the way there and back. */
async function startBusiness(config: FarSideConfig, tls: { key: string; cert: string }) {
  const served = new WeakMap<Socket, number>();
  const server = createServer(tls, (req, res) => {
    const receivedAt = now();
    const connectionRequests = served.get(req.socket) ?? 0;
    served.set(req.socket, connectionRequests + 1);
    req.resume();
    req.on('end', () => {
      const match = /^\/orders\/([^/?]+)/.exec(req.url ?? '');
      const orderNumber = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
      const body = orderNumber === undefined ? '{"error":"no such path"}' : businessAnswer(orderNumber);
      res.writeHead(orderNumber === undefined ? 404 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body, () => send({ kind: 'business', tag: orderNumber, connectionRequests, receivedAt, answeredAt: now() }));
    });
    req.on('error', () => undefined);
    res.on('error', () => undefined);
  });
  if (config.keepAliveHint) server.keepAliveTimeout = config.keepAliveMs;
  else {
    // As the scripted model does: Node sends the hint whenever its keep-alive timeout is on.
    server.keepAliveTimeout = 0;
    server.timeout = config.keepAliveMs;
  }
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, config.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function niceValue(): number | undefined {
  try {
    return getPriority();
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env[FAR_SIDE_CONFIG_VARIABLE] ?? 'null') as FarSideConfig | null;
  if (!config || !process.send) throw new TypeError(`far-side-main runs as the bench's child, with ${FAR_SIDE_CONFIG_VARIABLE} and an IPC channel`);
  const tls = { key: await readFile(config.keyFile, 'utf8'), cert: await readFile(config.certFile, 'utf8') };
  const model = await startModel(config, tls);
  const business = await startBusiness(config, tls);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void Promise.all([model.close(), business.close()]).finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The bench is gone (even killed): nobody is left to stop this process.
  process.once('disconnect', stop);
  send({ kind: 'ready', modelPort: model.port, businessPort: business.port, clockOffset: clockOffset(), nice: niceValue() });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
