/**
 * Calls that use business tools, for the tests of what tools may and may not
 * do: a prompts folder with the test's tool files, a scripted model that
 * calls the tool the caller names, and what the call left behind (the
 * transcript, the stored report, the dashboard's page of the call).
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { ChatRequestBody, ScriptedReply } from '../../src/llm/scripted-server.js';
import type { FakeVoiceService } from '../../src/testing/voice-service-client.js';
import type { TestHotline } from './hotline.js';
import { lastUserText } from './scripts.js';

export const HOSTILE_SERVER = path.resolve(import.meta.dirname, '../fixtures/mcp/hostile-server.mjs');

/** The shipped prompts with `tools` as its tools folder (and `files` beside the prompt files); removed by `cleanup`. */
export async function promptsWithTools(
  tools: Record<string, string>,
  files: Record<string, string> = {},
  cleanup: (remove: () => Promise<unknown>) => void,
): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-tools-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  await cp(path.resolve(import.meta.dirname, '../../prompts'), dir, { recursive: true });
  await rm(path.join(dir, 'tools'), { recursive: true, force: true });
  await mkdir(path.join(dir, 'tools'));
  for (const [name, text] of Object.entries(tools)) await writeFile(path.join(dir, 'tools', name), text);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

/**
 * The order lookup the tool tests call: GET `<url>/orders/<number>`, saying a hold line while it
 * runs unless `hold` is false; `extra` adds lines of the tool file (a response path, a timeout).
 */
export function orderTool(url: string, { extra = '', hold = true }: { extra?: string; hold?: boolean } = {}): string {
  return `
description: Looks up an order by its number.
parameters:
  type: object
  properties:
    order_number: { type: string }
  required: [order_number]
request:
  url: "${url}/orders/{{order_number}}"
${hold ? `hold: ["One moment, I'm looking up your order."]\n` : ''}${extra}
`;
}

/** The results of the tool calls the model made last, as the request shows them. */
export function toolResults(request: ChatRequestBody): string[] {
  const results: string[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!;
    if (message.role !== 'tool') break;
    results.unshift(typeof message.content === 'string' ? message.content : JSON.stringify(message.content));
  }
  return results;
}

/**
 * The model of these tests: "tool <name> <json>" calls that tool with those
 * arguments, and once the result is in, says `Result: <result>.`; a report's
 * request gets an empty object of fields.
 */
export function relay(request: ChatRequestBody): ScriptedReply {
  if ('response_format' in request && request.response_format) return { content: '{}' };
  const results = toolResults(request);
  if (results.length > 0) return { content: `Result: ${results.join(' | ')}.` };
  const [, name, args] = /^tool (\S+) ?(.*)$/.exec(lastUserText(request)) ?? [];
  return name ? { toolCalls: [{ name, arguments: args || '{}' }] } : { content: 'Hello.' };
}

/** Asks the model to call `name` with `args` and returns what it said of the result. */
export async function callTool(service: FakeVoiceService, name: string, args: unknown = {}): Promise<string> {
  const seen = service.actions.length;
  service.say(`tool ${name} ${typeof args === 'string' ? args : JSON.stringify(args)}`);
  const told = await service.next((a) => service.actions.indexOf(a) >= seen && (a.text ?? '').startsWith('Result'));
  return told.text ?? '';
}

/** The result of the model's last tool call, as its last request shows it. */
export function lastToolResult(env: TestHotline): string | undefined {
  const request = env.llm.requests.findLast((r) => toolResults(r.body).length > 0);
  return request && toolResults(request.body).at(-1);
}

/** Ends the call and waits until its transcript, its row and its report are stored. */
export async function endCall(env: TestHotline, service: FakeVoiceService): Promise<void> {
  service.end();
  await expect.poll(() => env.hotline.registry.size).toBe(0);
  await env.hotline.registry.endAll('flush');
  await env.hotline.registry.whenRecorded();
  await env.hotline.reports.whenIdle();
}

export async function transcriptText(env: TestHotline, sessionId: string): Promise<string> {
  return readFile(path.join(env.transcriptsDir, `${sessionId}.jsonl`), 'utf8');
}

export async function transcriptLines(env: TestHotline, sessionId: string): Promise<Record<string, unknown>[]> {
  const text = await transcriptText(env, sessionId);
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The dashboard's page of one call, logged in with `adminToken`. */
export async function dashboardCallPage(env: TestHotline, sessionId: string, adminToken: string): Promise<string> {
  const login = await fetch(`${env.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: env.hotline.url },
    body: new URLSearchParams({ token: adminToken }).toString(),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const page = await fetch(`${env.hotline.url}/dashboard/calls/${encodeURIComponent(sessionId)}`, { headers: { cookie, accept: 'text/html' } });
  expect(page.status).toBe(200);
  return page.text();
}
