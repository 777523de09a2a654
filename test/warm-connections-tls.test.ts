/**
 * Hotline as a user runs it, against a model over TLS (a self-signed certificate trusted through
 * NODE_EXTRA_CA_CERTS): the connection a turn uses was opened before the caller's words came,
 * and a server closing idle connections early costs no turn a handshake.
 */
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { makeSelfSigned, type SelfSigned } from '../src/testing/self-signed.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { CHILD_TEST_TIMEOUT_MS, spawnHotline, type HotlineProcess } from './helpers/child-process.js';

/** A TCP relay in front of the model that counts the connections made to it, as a network would see them. */
interface Relay {
  readonly port: number;
  readonly opened: number;
  nextConnection(): Promise<void>;
  close(): Promise<void>;
}

async function relayTo(port: number): Promise<Relay> {
  let opened = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    opened += 1;
    const upstream = createConnection({ host: '127.0.0.1', port });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get opened() {
      return opened;
    },
    nextConnection: async () => void (await once(server, 'connection')),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let tls: SelfSigned;
let model: ScriptedLlmServer;
let relay: Relay;
/** For each chat request: how many requests its connection had carried before (0: opened for it). */
const before: number[] = [];

beforeAll(async () => {
  tls = await makeSelfSigned();
  model = await startScriptedLlmServer({
    host: '127.0.0.1',
    tls: { key: tls.key, cert: tls.cert },
    // A server that keeps an idle connection a moment only: every pause of a conversation outlasts it.
    keepAliveTimeoutMs: 200,
    script: (_request, context) => {
      before.push(context.connectionRequests);
      return { content: 'Sure, happy to help.' };
    },
  });
  relay = await relayTo(model.port);
});

afterAll(async () => {
  await relay?.close();
  await model?.close();
  await tls?.remove();
});

test('each turn uses a connection opened before the caller spoke, over TLS, though the server closes idle ones early', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
  let hotline: HotlineProcess | undefined;
  let service: FakeVoiceService | undefined;
  try {
    hotline = spawnHotline({
      OPENAI_API_KEY: 'test-key',
      // By name, as a provider is reached: the certificate is for localhost.
      OPENAI_BASE_URL: `https://localhost:${relay.port}/v1`,
      LLM_MODEL: 'test-model',
      NODE_EXTRA_CA_CERTS: tls.certFile,
      // Its one request at start would be a connection of its own: here only the calls' are counted.
      LLM_CHECK_AT_START: 'false',
    });
    const [, url] = await hotline.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
    service = await FakeVoiceService.connect(url!);

    // The call starts: a connection to the model is opened while the greeting plays.
    const ahead = relay.nextConnection();
    service.start();
    await service.nextOfType('speak');
    await ahead;

    for (const words of ['Can you help me?', 'And one more thing.']) {
      const openedBefore = relay.opened;
      service.say(words);
      expect((await service.nextOfType('speak')).text).toBe('Sure, happy to help.');
      // No connection was opened for the turn, and the one it used had carried no request before:
      // it was opened ahead, and not a kept one (the server closes those after 200 ms).
      expect(relay.opened).toBe(openedBefore);
      expect(before.at(-1)).toBe(0);

      // The reply plays; the server meanwhile closes the idle connection. The reply's end says the
      // caller may speak next: another connection is opened then, before their words.
      const next = relay.nextConnection();
      service.finishSpeech();
      await next;
    }
    expect(before).toHaveLength(2);
  } finally {
    await service?.close();
    hotline?.child.kill('SIGKILL');
  }
});
