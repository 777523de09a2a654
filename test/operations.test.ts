import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { transcriptFileName } from '../src/transcripts/transcript-store.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { CHILD_TEST_TIMEOUT_MS, spawnHotline } from './helpers/child-process.js';
import { upgradeStatus } from './helpers/upgrade-status.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';

let env: TestHotline | undefined;
const services: FakeVoiceService[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
  await env?.close();
  env = undefined;
});

async function connect(): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env!.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.5 } });
  services.push(service);
  return service;
}

describe('limits', () => {
  test('MAX_CALLS: further WebSocket upgrades and webhook session_starts get 503; /readyz says full', async () => {
    env = await startTestHotline(scriptByUserText({}), { MAX_CALLS: '1' });
    expect((await fetch(`${env.hotline.url}/readyz`)).status).toBe(200);
    const first = await connect();
    first.start();
    await first.nextOfType('speak');
    expect(await upgradeStatus(env.hotline.wsUrl)).toBe(503);
    const hook = await fetch(`${env.hotline.url}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'session_start', session: { id: 'second' } }),
    });
    expect(hook.status).toBe(503);
    expect(await hook.json()).toEqual({ error: expect.stringMatching(/too many calls/) });
    const ready = await fetch(`${env.hotline.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'full', calls: 1 });
  });

  test('the history sent to the LLM is bounded; system prompt, greeting and the newest turn stay; the transcript keeps all', async () => {
    env = await startTestHotline(() => ({ content: `A fairly long answer that takes up room in the history. ${'word '.repeat(40)}` }), {
      LLM_HISTORY_MAX_CHARS: '3500',
    });
    const service = await connect();
    service.start();
    await service.nextOfType('speak');
    for (let i = 1; i <= 8; i++) {
      service.say(`Question number ${i}`);
      await service.next((a) => a.type === 'speak' && (a.text ?? '').includes('word word'));
    }
    const last = env.llm.requests.at(-1)!.body.messages;
    expect(last[0]!.role).toBe('system');
    expect(last[1]).toMatchObject({ role: 'assistant', content: expect.stringMatching(/thanks for calling/) });
    expect(last.at(-1)).toMatchObject({ role: 'user', content: 'Question number 8' });
    const users = last.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users).not.toContain('Question number 1');
    expect(JSON.stringify(last).length).toBeLessThan(3500 + 500);
    service.end();
    await expect.poll(() => env!.hotline.registry.size).toBe(0);
    await env.hotline.registry.endAll('flush');
    const lines = (await readFile(path.join(env.transcriptsDir, transcriptFileName(service.sessionId)), 'utf8')).trim().split('\n');
    expect(lines.filter((l) => l.includes('"role":"user"'))).toHaveLength(8);
  });

  test('a call with no event for CALL_IDLE_TIMEOUT_MS is ended and its transcript closed', async () => {
    env = await startTestHotline(scriptByUserText({}), { CALL_IDLE_TIMEOUT_MS: '300' });
    const service = await connect();
    service.start();
    await service.nextOfType('speak');
    await expect.poll(() => env!.hotline.registry.size, { timeout: 3000 }).toBe(0);
    await env.hotline.registry.endAll('flush');
    const lines = (await readFile(path.join(env.transcriptsDir, transcriptFileName(service.sessionId)), 'utf8')).trim().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ text: 'session_end', reason: 'idle_timeout' });
  });
});

describe('metrics', () => {
  test('GET /metrics: calls, turns, latency histograms, barge-ins, LLM errors and webhook answers', async () => {
    env = await startTestHotline(
      scriptByUserText({ Hi: { content: 'Hello there. How are you today?', tokenDelayMs: 20 }, Fail: { status: 400 } }),
    );
    const service = await connect();
    service.start();
    await service.nextOfType('speak');
    service.say('Hi');
    await service.nextOfType('speak');
    service.say('Fail', { bargedIn: true });
    await service.next((a) => (a.text ?? '').startsWith("I'm sorry"));
    await fetch(`${env.hotline.url}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'session_end', session: { id: 'nobody' } }),
    });
    const res = await fetch(`${env.hotline.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^hotline_active_calls 1$/m);
    expect(text).toMatch(/^hotline_turns_total 2$/m);
    expect(text).toMatch(/^hotline_first_speak_seconds_count 1$/m);
    expect(text).toMatch(/^hotline_llm_first_token_seconds_count 1$/m);
    expect(text).toMatch(/^hotline_barge_ins_total 1$/m);
    expect(text).toMatch(/^hotline_llm_errors_total\{kind="bad_request"\} 1$/m);
    expect(text).toMatch(/^hotline_webhook_answers_total\{status="204"\} 1$/m);
    expect(text).toMatch(/^hotline_process_resident_memory_bytes /m);
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM: readiness 503 and new calls refused at once; the call in progress finishes; exit 0', { timeout: CHILD_TEST_TIMEOUT_MS }, async () => {
    const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-shutdown-'));
    // No environment and no .env of the user's: a WS_TOKEN or OPENAI_API_KEY there would change this call.
    const hotline = spawnHotline({ TRANSCRIPTS_DIR: transcriptsDir, SHUTDOWN_GRACE_MS: '20000' });
    try {
      const [, url] = await hotline.line(/"websocketUrl":"(ws:\/\/[^"]+)"/);
      const httpUrl = url!.replace(/^ws/, 'http').replace(/\/ws$/, '');
      const service = await FakeVoiceService.connect(url!, { playback: { kind: 'auto', msPerChar: 0.5 } });
      services.push(service);
      service.start();
      await service.nextOfType('speak');

      hotline.child.kill('SIGTERM');
      await expect.poll(async () => (await fetch(`${httpUrl}/readyz`)).status).toBe(503);
      expect(await upgradeStatus(url!)).toBe(503);
      // The call in progress still works.
      service.say('What are your opening hours?');
      expect((await service.nextOfType('speak')).text).toMatch(/^We're open/);
      service.end('caller_hangup');
      expect(await hotline.exited).toBe(0);
      const transcript = await readFile(path.join(transcriptsDir, transcriptFileName(service.sessionId)), 'utf8');
      expect(transcript).toMatch(/"reason":"caller_hangup"/);
    } finally {
      hotline.child.kill('SIGKILL');
      await rm(transcriptsDir, { recursive: true, force: true });
    }
  });
});
