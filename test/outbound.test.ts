import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { runCallCli } from '../src/cli/call.js';
import { startFakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';

const ADMIN = 'admin-secret-1';
let env: TestHotline | undefined;
let api: Awaited<ReturnType<typeof startFakeAiFlowApi>> | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  await env?.close();
  await api?.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  env = undefined;
  api = undefined;
});

async function startWithPlatform(extraEnv: Record<string, string> = {}) {
  api = await startFakeAiFlowApi({
    token: 'platform-token',
    flows: { 'flow-1': { phoneNumber: true }, 'flow-nonumber': { phoneNumber: false } },
  });
  env = await startTestHotline(scriptByUserText({ 'Who is this?': { content: 'Rosa from the bakery.' } }), {
    ADMIN_TOKEN: ADMIN,
    AIFLOW_API_URL: api.url,
    AIFLOW_ACCESS_TOKEN: 'platform-token',
    AIFLOW_ID: 'flow-1',
    AIFLOW_BILLING_DEVICE: 'dev-1',
    ...extraEnv,
  });
  return { api, env };
}

async function placeCall(body: unknown, token: string | undefined = ADMIN) {
  const res = await fetch(`${env!.hotline.url}/api/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function ring(to: string, direction = 'outbound'): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env!.hotline.wsUrl);
  cleanups.push(() => service.close());
  service.start({ direction, to_phone_number: to, from_phone_number: '4930123456' });
  return service;
}

describe('outbound follow-up calls', () => {
  test('POST /api/calls places the call; its session_start gets the tailored greeting and system prompt', async () => {
    await startWithPlatform();
    const placed = await placeCall({ toPhoneNumber: '+49 151 1234567', variables: { name: 'Anna', topic: 'your order 42' } });
    expect(placed).toEqual({ status: 201, body: { toPhoneNumber: '491511234567', status: 'initiated' } });
    expect(api!.calls).toHaveLength(1);
    expect(api!.calls[0]).toMatchObject({
      path: '/v3/ai-flows/flow-1/call',
      body: { billingDevice: 'dev-1', toPhoneNumber: '491511234567' },
    });

    const service = await ring('491511234567');
    const greeting = (await service.nextOfType('speak')).text ?? '';
    expect(greeting).toContain('Anna');
    expect(greeting).toContain('your order 42');
    expect(greeting).not.toMatch(/\{\{|\}\}/);

    service.say('Who is this?');
    await service.nextOfType('speak');
    const system = String(env!.llm.requests[0]!.body.messages[0]!.content);
    expect(system).toContain('your order 42');

    // The request was used up: the next call to that number is not greeted as Anna's.
    const again = await ring('491511234567');
    const generic = (await again.nextOfType('speak')).text ?? '';
    expect(generic).not.toContain('Anna');
    expect(generic).not.toMatch(/\{\{|\}\}|\s{2}|\s[,.!?]/);
  });

  test('a number being rung is not requested again; inbound calls are never matched', async () => {
    await startWithPlatform();
    await placeCall({ toPhoneNumber: '491511234567', variables: { name: 'Anna' } });
    expect(await placeCall({ toPhoneNumber: '0049 151 1234567', variables: { name: 'Ben' } })).toMatchObject({
      status: 409,
      body: { error: '491511234567 is already in a call (being rung, or on the line): it is not called again until that call has ended' },
    });
    expect(api!.calls).toHaveLength(1);
    const inbound = await ring('491511234567', 'inbound');
    expect((await inbound.nextOfType('speak')).text).toBe('Hello, thanks for calling! How can I help you today?');
    const first = await ring('491511234567');
    expect((await first.nextOfType('speak')).text).toContain('Anna');
  });

  test('refusals: bad token 401, bad body or number 400 with nothing sent, the service refusal says what to fix', async () => {
    await startWithPlatform();
    expect((await placeCall({ toPhoneNumber: '491511234567' }, '')).status).toBe(401);
    expect((await placeCall({ toPhoneNumber: '491511234567' }, 'wrong')).status).toBe(401);
    expect(await placeCall({ toPhoneNumber: 'call me maybe' })).toMatchObject({ status: 400, body: { error: expect.any(String) } });
    expect(await placeCall({ number: '491511234567' })).toMatchObject({ status: 400 });
    expect(api!.calls).toHaveLength(0);

    const missingFlow = await placeCall({ toPhoneNumber: '491511234567', aiFlowId: 'no-such-flow' });
    expect(missingFlow.status).toBeGreaterThanOrEqual(400);
    expect(String(missingFlow.body.error)).toMatch(/AI flow|AIFLOW_ID/i);
    const noNumber = await placeCall({ toPhoneNumber: '491511234567', aiFlowId: 'flow-nonumber' });
    expect(String(noNumber.body.error)).toMatch(/phone number/i);
    api!.setResponse('flow-1', 403, '{"message":"forbidden"}');
    const denied = await placeCall({ toPhoneNumber: '491511234567' });
    expect(String(denied.body.error)).toMatch(/support/i);
    expect(String(denied.body.error)).not.toContain('platform-token');
    // A refused request leaves nothing behind to be matched.
    const service = await ring('491511234567');
    expect((await service.nextOfType('speak')).text).not.toContain('{{');
  });

  test('the admin API is off without ADMIN_TOKEN', async () => {
    env = await startTestHotline(scriptByUserText({}));
    const res = await fetch(`${env.hotline.url}/api/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: '{"toPhoneNumber":"491511234567"}',
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/ADMIN_TOKEN/) });
  });
});

describe('prompts are edited without a restart', () => {
  test('a changed greeting.md greets the next call; a broken system.md keeps the last good version', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prompts-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await cp(path.resolve('prompts'), dir, { recursive: true });
    env = await startTestHotline(scriptByUserText({ Hi: { content: 'Hello!' } }), { PROMPTS_DIR: dir });

    await writeFile(path.join(dir, 'greeting.md'), 'Welcome to the edited greeting!\n');
    await expect
      .poll(async () => {
        const service = await ring('4930123456', 'inbound');
        const text = (await service.nextOfType('speak')).text;
        await service.close();
        return text;
      })
      .toBe('Welcome to the edited greeting!');

    const system = await readFile(path.join(dir, 'system.md'), 'utf8');
    await writeFile(path.join(dir, 'system.md'), `---\ntemperature: [not a number\n---\n${system}`);
    await writeFile(path.join(dir, 'greeting.md'), 'A second edit.\n');
    expect(await env.hotline.prompts.reload()).toMatchObject({ ok: false });
    // The broken system.md keeps the whole last good version, greeting included.
    const service = await ring('4930123456', 'inbound');
    expect((await service.nextOfType('speak')).text).toBe('Welcome to the edited greeting!');
  });
});

describe('npm run call against a running Hotline', () => {
  test('places a call with variables, reports refusals with a non-zero exit code', async () => {
    await startWithPlatform();
    const lines: string[] = [];
    const env_ = { BOT_URL: env!.hotline.url, ADMIN_TOKEN: ADMIN };
    const ok = await runCallCli(['+49 151 1234567', '--var', 'name=Anna', '--var', 'topic=your order 42'], env_, (l) => lines.push(l));
    expect(ok).toBe(0);
    expect(lines.join('\n')).toMatch(/491511234567 initiated/);
    const service = await ring('491511234567');
    expect((await service.nextOfType('speak')).text).toContain('Anna');

    lines.length = 0;
    const refused = await runCallCli(['491517654321', '--flow', 'no-such-flow'], env_, (l) => lines.push(l));
    expect(refused).toBe(1);
    expect(lines.join('\n')).toMatch(/AIFLOW_ID|does not exist/i);
  });
});

describe('front matter', () => {
  test('model, temperature and named transfer targets in system.md reach the LLM request and the transfer', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prompts-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await cp(path.resolve('prompts'), dir, { recursive: true });
    const body = await readFile(path.join(dir, 'system.md'), 'utf8');
    await writeFile(
      path.join(dir, 'system.md'),
      `---\nmodel: front-matter-model\ntemperature: 0.2\ntransfer_targets:\n  billing: "4930555555"\n---\n${body.replace(/^---[\s\S]*?---\n/, '')}`,
    );
    env = await startTestHotline(
      scriptByUserText({ Billing: { content: 'Connecting you.', toolCalls: [{ name: 'transfer', arguments: '{"target":"billing"}' }] } }),
      { PROMPTS_DIR: dir },
    );
    const service = await ring('4930123456', 'inbound');
    await service.nextOfType('speak');
    service.say('Billing');
    expect(await service.nextOfType('transfer')).toMatchObject({ target: '4930555555' });
    const request = env.llm.requests[0]!.body;
    expect(request.model).toBe('front-matter-model');
    expect(request['temperature']).toBe(0.2);
    const transfer = (request.tools ?? []).find((t) => t.function.name === 'transfer');
    expect(JSON.stringify(transfer)).toContain('billing');
  });
});
