import { afterEach } from 'vitest';
import type { Script } from '../../src/llm/scripted-server.js';
import { FakeVoiceService } from '../../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './hotline.js';

export type ConnectOptions = Parameters<typeof FakeVoiceService.connect>[1];

export interface TestCalls {
  /** A real Hotline for this test (see startTestHotline); closed after it. */
  start(script: Script, env?: Record<string, string>): Promise<TestHotline>;
  /** A fake voice service connected to this test's Hotline; closed after the test. */
  connect(options?: ConnectOptions): Promise<FakeVoiceService>;
}

/** One Hotline per test and the fake voice services talking to it, all closed after each test. */
export function testCalls(defaults: ConnectOptions = {}): TestCalls {
  let env: TestHotline | undefined;
  let clients: FakeVoiceService[] = [];
  afterEach(async () => {
    await Promise.all(clients.map((c) => c.close()));
    clients = [];
    await env?.close();
    env = undefined;
  });
  return {
    async start(script, vars = {}) {
      env = await startTestHotline(script, vars);
      return env;
    },
    async connect(options = {}) {
      if (!env) throw new Error('start a Hotline first');
      const client = await FakeVoiceService.connect(env.hotline.wsUrl, { ...defaults, ...options });
      clients.push(client);
      return client;
    },
  };
}
