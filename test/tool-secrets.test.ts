/**
 * A tool's secrets never leave Hotline through what the tool returns: a
 * business system or an MCP server that echoes the credentials it was sent
 * (exactly, URL-encoded, inside a Basic credential) or one of Hotline's own
 * secrets. Checked where a tool's answer goes: the model's next request, the
 * transcript, the stored report and the dashboard's page of the call.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { json, startBusinessServer } from './helpers/business-server.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import {
  callTool,
  dashboardCallPage,
  endCall,
  HOSTILE_SERVER,
  promptsWithTools,
  relay,
  toolResults,
  transcriptLines,
  transcriptText,
} from './helpers/tool-calls.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';

vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const cleanup = (remove: () => Promise<unknown>): void => void cleanups.push(remove);

const ADMIN = 'admin-token-of-this-hotline-7f3a';
/** With characters that URL-encoding changes, so the encoded form differs from the plain one. */
const SHOP_TOKEN = 'shop/token+secret=4711 of the shop';
const MCP_SECRET = 'mcp-server-own-secret/9d2e+x';
/** Too short to be a secret worth the name: it must not blank the word wherever it stands. */
const SHORT = 'abc';

/** Every form of `secret` that must not be seen: as it is, URL-encoded, and base64'd in a Basic credential after a user name. */
function forms(secret: string, user: string): string[] {
  const basic = Buffer.from(`${user}:${secret}`).toString('base64');
  return [secret, encodeURIComponent(secret), basic, basic.slice(8, 24)];
}

async function hotline(vars: Record<string, string>): Promise<TestHotline> {
  const env = await startTestHotline(relay, { ADMIN_TOKEN: ADMIN, ...vars });
  cleanups.push(() => env.close());
  return env;
}

async function connect(env: TestHotline): Promise<FakeVoiceService> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0 } });
  cleanups.push(() => service.close());
  service.start();
  await service.nextOfType('speak');
  return service;
}

/** Everything the call left behind where a person or the model could read it. */
async function everywhere(env: TestHotline, service: FakeVoiceService): Promise<Record<string, string>> {
  const requests = env.llm.requests.filter((r) => toolResults(r.body).length > 0);
  const model = requests.map((r) => JSON.stringify(r.body.messages)).join('\n');
  const spoken = service.actions.map((a) => a.text ?? '').join('\n');
  await endCall(env, service);
  const report = JSON.stringify((await env.hotline.reports.getCall(service.sessionId))?.report?.body ?? null);
  return {
    model,
    spoken,
    transcript: await transcriptText(env, service.sessionId),
    report,
    dashboard: await dashboardCallPage(env, service.sessionId, ADMIN),
  };
}

function expectNoneOf(places: Record<string, string>, secrets: readonly string[]): void {
  for (const [place, text] of Object.entries(places)) {
    for (const secret of secrets) expect(text.includes(secret), `${place} shows ${secret}`).toBe(false);
  }
}

describe('an HTTP tool whose business system echoes what it was sent', () => {
  test("its ${ENV} values and Hotline's own secrets are gone from the answer before anyone reads it; short values stay", async () => {
    const shop = await startBusinessServer((req, res) => {
      const authorization = String(req.headers.authorization ?? '');
      if (req.url.startsWith('/orders/')) {
        res.writeHead(401, { 'content-type': 'text/plain' });
        res.end(`401 invalid credentials: ${authorization}`);
        return;
      }
      const token = authorization.replace(/^Bearer /, '');
      json(res, {
        profile: {
          region: `warehouse ${new URL(req.url, 'http://x').searchParams.get('region')}`,
          debug: `GET ${req.url}?token=${encodeURIComponent(token)} Authorization: Basic ${Buffer.from(`shop:${token}`).toString('base64')}`,
          config: `admin_token=${ADMIN}`,
        },
      });
    });
    cleanups.push(() => shop.close());
    const request = (path: string) =>
      `request:\n  url: "\${SHOP_URL}${path}"\n  headers: { Authorization: "Bearer \${SHOP_TOKEN}" }\n  query: { region: "\${SHOP_REGION}" }\n`;
    const prompts = await promptsWithTools(
      {
        'order_status.yaml': `description: Looks up an order.\nparameters: { type: object, properties: { n: { type: string } } }\n${request('/orders/{{n}}')}`,
        'profile.yaml': `description: The caller's profile.\n${request('/profile')}response: { path: profile }\n`,
      },
      {},
      cleanup,
    );
    const env = await hotline({ PROMPTS_DIR: prompts, SHOP_URL: shop.url, SHOP_TOKEN, SHOP_REGION: SHORT });
    const service = await connect(env);

    const refused = await callTool(service, 'order_status', { n: '4711' });
    expect(refused).toMatch(/^Result: error: order_status answered HTTP 401 \(the answer: 401 invalid credentials: Bearer \[redacted\]\)\.$/);
    const profile = await callTool(service, 'profile');
    expect(profile).toContain(`warehouse ${SHORT}`);
    expect(profile).toContain('admin_token=[redacted]');
    // The business system did get the real credentials: only what came back is cleaned.
    expect((await shop.request(0)).headers.authorization).toBe(`Bearer ${SHOP_TOKEN}`);

    const places = await everywhere(env, service);
    expectNoneOf(places, [...forms(SHOP_TOKEN, 'shop'), ADMIN]);
    for (const place of ['model', 'transcript', 'report', 'dashboard']) expect(places[place], place).toContain('[redacted]');
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.filter((l) => l.role === 'tool').map((l) => l.outcome)).toEqual(['error', 'ok']);
  });
});

describe('an MCP server that tells its own secret', () => {
  test('in a result, an isError result and a thrown error: scrubbed before the model, the transcript, the report and the dashboard', async () => {
    const mcp = `servers:\n  - name: upstream\n    command: node\n    args: ["${HOSTILE_SERVER}"]\n    env: { API_SECRET: "\${UPSTREAM_SECRET}", TOOLS: "echo_secret,fail_secret,throw_secret" }\n`;
    const prompts = await promptsWithTools({ 'mcp.yaml': mcp }, {}, cleanup);
    const env = await hotline({ PROMPTS_DIR: prompts, UPSTREAM_SECRET: MCP_SECRET });
    await env.hotline.tools.mcp.whenUp('upstream');
    const service = await connect(env);

    const echoed = await callTool(service, 'echo_secret');
    expect(echoed).toMatch(/^Result: upstream saw token=\[redacted\]; Authorization: Basic .*\[redacted\].*; raw \[redacted\]\.$/);
    expect(await callTool(service, 'fail_secret')).toBe('Result: error: 401 invalid credentials: Bearer [redacted].');
    expect(await callTool(service, 'throw_secret')).toBe('Result: error: upstream refused the key [redacted].');

    const places = await everywhere(env, service);
    expectNoneOf(places, forms(MCP_SECRET, 'api'));
    for (const place of ['model', 'transcript', 'report', 'dashboard']) expect(places[place], place).toContain('[redacted]');
    const lines = await transcriptLines(env, service.sessionId);
    expect(lines.filter((l) => l.role === 'tool').map((l) => l.outcome)).toEqual(['ok', 'error', 'error']);
  });
});
