import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { HotlineError } from '../src/errors.js';
import { AiFlowClient } from '../src/outbound/aiflow-client.js';
import {
  AiFlowAccessDeniedError,
  AiFlowNetworkError,
  AiFlowNoPhoneNumberError,
  AiFlowNotFoundError,
  AiFlowTimeoutError,
  AiFlowUnexpectedResponseError,
  InvalidCallRequestError,
} from '../src/outbound/errors.js';
import { InvalidPhoneNumberError } from '../src/phone/errors.js';
import { startFakeAiFlowApi, type FakeAiFlowApi } from '../src/testing/fake-aiflow-api.js';

const TOKEN = 'secret-platform-token-42';
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function fakeApi(): Promise<FakeAiFlowApi> {
  const api = await startFakeAiFlowApi({
    token: TOKEN,
    flows: { 'flow-1': { phoneNumber: true }, 'flow no/number': { phoneNumber: false }, 'flow-500': { respond: { status: 500, body: 'upstream exploded' } } },
  });
  cleanups.push(() => api.close());
  return api;
}

function clientFor(api: { url: string }, options: { accessToken?: string; timeoutMs?: number } = {}): AiFlowClient {
  return new AiFlowClient({ baseUrl: `${api.url}/`, accessToken: options.accessToken ?? TOKEN, timeoutMs: options.timeoutMs });
}

async function failure(promise: Promise<unknown>): Promise<HotlineError & { status: number }> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HotlineError);
  const typed = error as HotlineError & { status: number };
  expect(typed.message).not.toContain(TOKEN);
  return typed;
}

describe('AiFlowClient.startCall', () => {
  test('201: posts the normalised number with the Bearer token and resolves as initiated', async () => {
    const api = await fakeApi();
    const result = await clientFor(api).startCall({ aiFlowId: 'flow-1', billingDevice: 'dev-1', toPhoneNumber: '+49 151 1234567' });

    expect(result).toEqual({
      toPhoneNumber: '491511234567',
      status: 'initiated',
      body: { id: 'call-1', status: 'initiated', toPhoneNumber: '491511234567' },
    });
    expect(api.calls).toHaveLength(1);
    const [call] = api.calls;
    expect(call).toMatchObject({
      method: 'POST',
      path: '/v3/ai-flows/flow-1/call',
      aiFlowId: 'flow-1',
      body: { billingDevice: 'dev-1', toPhoneNumber: '491511234567' },
      status: 201,
    });
    expect(call?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json',
    });
  });

  test('the AI flow id is URL-encoded in the path', async () => {
    const api = await fakeApi();
    const error = await failure(clientFor(api).startCall({ aiFlowId: 'flow no/number', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(api.calls[0]).toMatchObject({ path: '/v3/ai-flows/flow%20no%2Fnumber/call', aiFlowId: 'flow no/number' });
    expect(error).toBeInstanceOf(AiFlowNoPhoneNumberError);
  });

  test('a 201 without a body, or with text, still counts as initiated', async () => {
    const api = await fakeApi();
    api.setResponse('flow-1', 201);
    expect((await clientFor(api).startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '491511234567' })).body).toBeUndefined();
    api.setResponse('flow-1', 202, 'queued');
    expect(await clientFor(api).startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '491511234567' })).toEqual({
      toPhoneNumber: '491511234567',
      status: 'initiated',
      body: 'queued',
    });
  });

  test('400: the AI flow has no phone number → configure one in the dashboard', async () => {
    const api = await fakeApi();
    const error = await failure(clientFor(api).startCall({ aiFlowId: 'flow no/number', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(error).toBeInstanceOf(AiFlowNoPhoneNumberError);
    expect(error).toMatchObject({ code: 'aiflow_no_phone_number', name: 'AiFlowNoPhoneNumberError', status: 502, upstreamStatus: 400 });
    expect(error.message).toMatch(/no phone number configured.*dashboard/);
    expect(error.message).toContain('HTTP 400');
  });

  test('404: unknown AI flow → check AIFLOW_ID', async () => {
    const api = await fakeApi();
    const error = await failure(clientFor(api).startCall({ aiFlowId: 'nope', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(error).toBeInstanceOf(AiFlowNotFoundError);
    expect(error).toMatchObject({ code: 'aiflow_not_found', status: 502, upstreamStatus: 404, aiFlowId: 'nope' });
    expect(error.message).toMatch(/"nope" does not exist.*AIFLOW_ID/);
  });

  test('401: a wrong token → check AIFLOW_ACCESS_TOKEN, and the token is named nowhere', async () => {
    const api = await fakeApi();
    const wrong = 'wrong-token-123';
    const error = await failure(clientFor(api, { accessToken: wrong }).startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(error).toBeInstanceOf(AiFlowAccessDeniedError);
    expect(error).toMatchObject({ code: 'aiflow_access_denied', status: 502, upstreamStatus: 401 });
    expect(error.message).toMatch(/AIFLOW_ACCESS_TOKEN/);
    expect(error.message).not.toContain(wrong);
  });

  test("403: outbound calls not enabled → the provider's support must enable them; an echoed token is redacted", async () => {
    const api = await fakeApi();
    api.setResponse('flow-1', 403, JSON.stringify({ message: `outbound calling disabled for token ${TOKEN}` }));
    const error = await failure(clientFor(api).startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(error).toBeInstanceOf(AiFlowAccessDeniedError);
    expect(error).toMatchObject({ status: 502, upstreamStatus: 403 });
    expect(error.message).toMatch(/support must enable outbound calls/);
    expect(error.message).toContain('outbound calling disabled');
    expect((error as AiFlowAccessDeniedError).body).not.toContain(TOKEN);
  });

  test('500: an unexpected answer keeps the status and the start of the body', async () => {
    const api = await fakeApi();
    const error = await failure(clientFor(api).startCall({ aiFlowId: 'flow-500', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(error).toBeInstanceOf(AiFlowUnexpectedResponseError);
    expect(error).toMatchObject({ code: 'aiflow_unexpected_response', status: 502, upstreamStatus: 500, body: 'upstream exploded' });
    expect(error.message).toContain('upstream exploded');

    api.setResponse('flow-500', 503, 'x'.repeat(2000));
    const long = (await failure(clientFor(api).startCall({ aiFlowId: 'flow-500', billingDevice: 'd', toPhoneNumber: '491511234567' }))) as AiFlowUnexpectedResponseError;
    expect(long.body).toHaveLength(500);
    expect(long.message.length).toBeLessThan(400);
  });

  test('an invalid number or a missing field sends nothing', async () => {
    const api = await fakeApi();
    const client = clientFor(api);
    await expect(client.startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: 'call me' })).rejects.toBeInstanceOf(InvalidPhoneNumberError);
    await expect(client.startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '0151 1234567' })).rejects.toThrow(/international format/);
    await expect(client.startCall({ aiFlowId: ' ', billingDevice: 'd', toPhoneNumber: '491511234567' })).rejects.toBeInstanceOf(InvalidCallRequestError);
    await expect(client.startCall({ aiFlowId: 'flow-1', billingDevice: '', toPhoneNumber: '491511234567' })).rejects.toThrow(/AIFLOW_BILLING_DEVICE/);
    expect(api.calls).toHaveLength(0);
  });

  test('a service that never answers → AiFlowTimeoutError after timeoutMs', async () => {
    const arrived: IncomingMessage[] = [];
    const silent = await listen(createServer((req) => void arrived.push(req)));
    const error = await failure(
      clientFor(silent, { timeoutMs: 100 }).startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '491511234567' }),
    );
    expect(error).toBeInstanceOf(AiFlowTimeoutError);
    expect(error).toMatchObject({ code: 'aiflow_timeout', status: 504, timeoutMs: 100 });
    expect(error.message).toContain('100 ms');
    expect(arrived).toHaveLength(1);
  });

  test('connection refused → AiFlowNetworkError carrying the cause', async () => {
    const closed = await listen(createServer());
    await closed.close();
    const error = await failure(clientFor(closed).startCall({ aiFlowId: 'flow-1', billingDevice: 'd', toPhoneNumber: '491511234567' }));
    expect(error).toBeInstanceOf(AiFlowNetworkError);
    expect(error).toMatchObject({ code: 'aiflow_network', status: 502 });
    expect(error.message).toContain(closed.url);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  test('an injected fetch is used', async () => {
    const seen: string[] = [];
    const client = new AiFlowClient({
      baseUrl: 'https://api.example.test//',
      accessToken: TOKEN,
      fetch: async (input) => {
        seen.push(String(input));
        return new Response('{"ok":true}', { status: 201 });
      },
    });
    await client.startCall({ aiFlowId: 'f', billingDevice: 'd', toPhoneNumber: '491511234567' });
    expect(seen).toEqual(['https://api.example.test/v3/ai-flows/f/call']);
  });

  test('a bad base URL or a token no header can carry is refused up front', () => {
    expect(() => new AiFlowClient({ baseUrl: 'not a url', accessToken: TOKEN })).toThrow(/AIFLOW_API_URL/);
    expect(() => new AiFlowClient({ baseUrl: 'ftp://x', accessToken: TOKEN })).toThrow(/http/);
    expect(() => new AiFlowClient({ baseUrl: 'http://x', accessToken: 'a\nb' })).toThrow(/AIFLOW_ACCESS_TOKEN/);
    expect(() => new AiFlowClient({ baseUrl: 'http://x', accessToken: '' })).toThrow(/AIFLOW_ACCESS_TOKEN/);
  });
});

async function listen(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${port}`, close };
}
