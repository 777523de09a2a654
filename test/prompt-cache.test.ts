/**
 * Prompts a provider can cache (issue 24): every call of a prompt version sends the same bytes up to
 * the call's first value, each turn repeats the one before it byte for byte, the tokens the model
 * counts as cached reach the turn's record (the store, the story, the report), and cache marks go
 * out only where configured. Real Hotline, real ws clients as the voice service, the real openai SDK
 * against the scripted OpenAI-compatible server, whose prompt cache counts the prefix it has seen.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { TurnSummary } from '../src/call/ports/call-summary.js';
import type { ChatRequestBody, RecordedRequest, ScriptedReply } from '../src/llm/scripted-server.js';
import { ScriptedPromptCache } from '../src/llm/scripted-prompt-cache.js';
import { checkPrompts } from '../src/prompts-check.js';
import { CallReportSchema } from '../src/reports/report-builder.js';
import type { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';
import { dollars } from '../src/dashboard/pages/story.js';
import { testCalls } from './helpers/test-calls.js';

const ADMIN = 'prompt-cache-admin-token';

/** About 6 KB of instructions the same on every call: past OpenAI's first cache step of 1,024 tokens. */
const RULES = Array.from(
  { length: 60 },
  (_, i) => `- Rule ${i + 1}: answer the caller's question about topic ${i + 1} in one short, friendly spoken sentence.`,
).join('\n');
const STATIC = `You are the phone assistant of a small test business.\n\n${RULES}\n\nThis call:\n`;
const SYSTEM = `${STATIC}- Calling number: {{caller_number|unknown}}. Called number: {{called_number|unknown}}.\n- Today is {{date}}.\n`;

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function promptsFolder(system = SYSTEM): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prompt-cache-'));
  folders.push(dir);
  await writeFile(path.join(dir, 'system.md'), system);
  await writeFile(path.join(dir, 'greeting.md'), 'Hello, how can I help?\n');
  return dir;
}

/** A first line long enough that the turn after it shares a cache step more than another call does. */
const LONG = `Hello, I have a question. ${'Please listen carefully to what I need from you today. '.repeat(12)}`.trim();

const REPLIES: Record<string, ScriptedReply> = {
  Hello: { content: 'Hello there, nice to hear from you.' },
  [LONG]: { content: 'I am listening.' },
  'And then?': { content: 'Then we are done for today.' },
  'Tell me a story': { content: 'Once upon a time there was a phone agent. It listened to every caller. It never forgot a word.', tokenDelayMs: 15 },
  Stop: { content: 'Of course, I will stop.' },
  Thanks: { content: 'You are welcome.' },
};

function script(request: ChatRequestBody): ScriptedReply {
  return REPLIES[lastUserText(request)] ?? { content: 'I see.' };
}

const calls = testCalls({ playback: { kind: 'auto', msPerChar: 0.5 } });

async function start(env: Record<string, string> = {}, system = SYSTEM): Promise<TestHotline> {
  return calls.start(script, { PROMPTS_DIR: await promptsFolder(system), ADMIN_TOKEN: ADMIN, ...env });
}

/** A call from `from` to `to`: greeted, then each line said once the answer to the one before has played. */
async function talk(env: TestHotline, from: string, to: string, lines: readonly string[]): Promise<FakeVoiceService> {
  const service = await calls.connect();
  service.start({ from_phone_number: from, to_phone_number: to });
  await service.nextOfType('speak');
  for (const line of lines) {
    await service.whenQuiet();
    service.say(line);
    await service.next((a) => a.type === 'speak' && a.text === REPLIES[line]?.content);
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating ?? false).toBe(false);
  }
  await service.whenQuiet();
  return service;
}

/** The requests that were answered, in order (a refused one is left out). */
function answered(env: TestHotline): RecordedRequest[] {
  return env.llm.requests.filter((r) => r.status === 200);
}

/** The request body up to the end of its messages: what the next turn's request must start with. */
function messagesPart(request: RecordedRequest): string {
  const end = request.rawText.indexOf('],"tools":');
  expect(end).toBeGreaterThan(0);
  return request.rawText.slice(0, end);
}

/** The request body after its messages: the tools and the settings. */
function afterMessages(request: RecordedRequest): string {
  return request.rawText.slice(messagesPart(request).length);
}

async function ended(env: TestHotline, service: FakeVoiceService): Promise<readonly TurnSummary[]> {
  service.end();
  await expect.poll(() => env.hotline.registry.size).toBe(0);
  await env.hotline.registry.whenRecorded();
  const stored = await env.hotline.reports.getCall(service.sessionId);
  expect(stored).toBeDefined();
  return stored!.call.turns;
}

async function story(env: TestHotline, sessionId: string): Promise<string> {
  const login = await fetch(`${env.hotline.url}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: env.hotline.url },
    body: new URLSearchParams({ token: ADMIN }).toString(),
  });
  expect(login.status).toBe(303);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const page = await fetch(`${env.hotline.url}/dashboard/calls/${encodeURIComponent(sessionId)}`, { headers: { cookie, accept: 'text/html' } });
  expect(page.status).toBe(200);
  return page.text();
}

describe('a prefix the provider can cache', () => {
  test('two calls send the same bytes up to the first value; turn 2 starts with turn 1 byte for byte; the cached tokens are on record, and what they cost', async () => {
    const prices = path.join(await promptsFolder(SYSTEM), 'prices.json');
    await writeFile(prices, JSON.stringify({ 'test-model': { input: 1, cached_input: 0.1, output: 4 } }));
    const env = await start({ LLM_PRICES_FILE: prices });
    const first = await talk(env, '4915100000001', '4930100000001', [LONG, 'And then?']);
    const firstTurns = await ended(env, first);
    const second = await talk(env, '4917700000002', '4930200000002', ['Hello']);
    const secondTurns = await ended(env, second);

    const [turn1, turn2, other] = answered(env);
    expect(answered(env)).toHaveLength(3);
    // Both calls send the static part of system.md, and every byte before the first number, alike.
    const cut = turn1!.rawText.indexOf('4915100000001');
    expect(cut).toBeGreaterThan(0);
    expect(other!.rawText.indexOf('4917700000002')).toBe(cut);
    expect(other!.rawText.slice(0, cut)).toBe(turn1!.rawText.slice(0, cut));
    expect(turn1!.rawText.slice(0, cut)).toContain(JSON.stringify(STATIC).slice(1, -1));
    // The tools and the settings after the messages are the same bytes in every request.
    expect(afterMessages(turn2!)).toBe(afterMessages(turn1!));
    expect(afterMessages(other!)).toBe(afterMessages(turn1!));
    expect(turn1!.rawText).toContain('"stream_options":{"include_usage":true}');
    // Turn 2 is turn 1 with the reply and the new words added: nothing before them changed.
    expect(turn2!.rawText.startsWith(messagesPart(turn1!))).toBe(true);
    expect(turn2!.rawText).not.toContain('cache_control');

    // What the scripted server reported, by its prompt cache replayed over the same requests.
    const cache = new ScriptedPromptCache();
    const [count1, count2, countOther] = [turn1, turn2, other].map((r) => cache.count(r!.rawBody));
    expect(count1!.cachedTokens).toBe(0);
    // The second call shares the tools and the static text with the first: past the first step.
    expect(countOther!.cachedTokens).toBeGreaterThanOrEqual(1024);
    // Turn 2 shares all of turn 1, the caller's number and date included.
    expect(count2!.cachedTokens).toBeGreaterThan(countOther!.cachedTokens);
    expect(count2!.cachedTokens % 128).toBe(0);

    // The store has each turn's tokens as the model counted them.
    expect(firstTurns.map((t) => t.tokens)).toEqual([
      { prompt: count1!.promptTokens, cached: 0, completion: expect.any(Number), reasoning: 0 },
      { prompt: count2!.promptTokens, cached: count2!.cachedTokens, completion: expect.any(Number), reasoning: 0 },
    ]);
    expect(secondTurns[0]!.tokens).toMatchObject({ prompt: countOther!.promptTokens, cached: countOther!.cachedTokens });

    // And the story page shows cached / prompt tokens for each turn, and the call's total.
    const page = await story(env, first.sessionId);
    const n = (value: number) => value.toLocaleString('en-US');
    expect(page).toContain(`0 / ${n(count1!.promptTokens)} tokens cached`);
    expect(page).toContain(`${n(count2!.cachedTokens)} / ${n(count2!.promptTokens)} tokens cached`);
    expect(page).toContain(`${n(count1!.promptTokens + count2!.promptTokens)} prompt, ${n(count2!.cachedTokens)} of them cached`);
    // What they cost at the price file's prices: cached prompt tokens at a tenth.
    const cost = firstTurns.reduce((sum, t) => sum + ((t.tokens!.prompt - t.tokens!.cached!) * 1 + t.tokens!.cached! * 0.1 + t.tokens!.completion * 4) / 1e6, 0);
    expect(firstTurns[0]!.costUsd! + firstTurns[1]!.costUsd!).toBeCloseTo(cost, 12);
    expect(page).toContain(`<dd class="cost" id="call-cost">${dollars(cost)}</dd>`);

    // The report carries them too.
    await env.hotline.reports.whenIdle();
    const report = CallReportSchema.parse(JSON.parse((await env.hotline.reports.getCall(first.sessionId))!.report!.body));
    expect(report.turns.each.map((t) => t.tokens?.cached)).toEqual([0, count2!.cachedTokens]);
    expect(report.turns.tokens).toMatchObject({ prompt: count1!.promptTokens + count2!.promptTokens, cached: count2!.cachedTokens });
    expect(report.turns.cost_usd).toBeCloseTo(cost, 12);
  });

  test('a reply cut by a barge-in is cut once: the requests after it repeat it byte for byte', async () => {
    const env = await start();
    const service = await calls.connect();
    service.start();
    await service.nextOfType('speak');
    await service.whenQuiet();
    service.say('Tell me a story');
    // The first sentence has played by the time the second is sent: the caller cuts the story there.
    await service.next((a) => a.type === 'speak' && a.text === 'It listened to every caller.');
    service.say('Stop', { bargedIn: true });
    await service.next((a) => a.type === 'speak' && a.text === REPLIES['Stop']!.content);
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating ?? false).toBe(false);
    await service.whenQuiet();
    service.say('Thanks');
    await service.next((a) => a.type === 'speak' && a.text === REPLIES['Thanks']!.content);

    const [story, stop, thanks] = answered(env);
    expect((stop!.rawBody as { messages: unknown[] }).messages).toContainEqual({
      role: 'assistant',
      content: expect.stringMatching(/^Once upon a time .*\[interrupted by the caller\]$/),
    });
    expect(stop!.rawText.startsWith(messagesPart(story!))).toBe(true);
    expect(thanks!.rawText.startsWith(messagesPart(stop!))).toBe(true);
  });

  test('beyond the history budget the oldest turns go in one cut that stays: the requests after it share their start again', async () => {
    // Room for the greeting and about five turns besides the system prompt.
    const env = await start({ LLM_HISTORY_MAX_CHARS: String(SYSTEM.length + 700) });
    const lines = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? 'Hello' : 'And then?'));
    const service = await talk(env, '4915100000001', '4930100000001', lines);
    const requests = answered(env);
    expect(requests).toHaveLength(12);
    const bodies = requests.map((r) => r.rawBody as { messages: unknown[] });
    // Turns were left out, yet most requests start with the one before: a turn at a time would break all after the first cut.
    expect(bodies.at(-1)!.messages.length).toBeLessThan(1 + 2 * 12);
    const breaks = requests.slice(1).filter((r, i) => !r.rawText.startsWith(messagesPart(requests[i]!))).length;
    expect(breaks).toBeGreaterThan(0);
    expect(breaks).toBeLessThanOrEqual(3);
    await ended(env, service);
  });

  test("with the business's documents on, turn 2 repeats turn 1 byte for byte up to turn 1's note: the note is the only byte not served from the cache", async () => {
    const knowledge = await mkdtemp(path.join(tmpdir(), 'hotline-prompt-cache-knowledge-'));
    folders.push(knowledge);
    await writeFile(path.join(knowledge, 'listening.md'), '## Listening\nWe listen carefully to every question callers have.\n');
    const env = await start({ KNOWLEDGE: 'true', KNOWLEDGE_DIR: knowledge });
    const service = await talk(env, '4915100000001', '4930100000001', [LONG, 'And then?']);
    const turns = await ended(env, service);
    const [turn1, turn2] = answered(env);
    // JSON of the request: the note begins after the caller's words and a blank line.
    const note = turn1!.rawText.indexOf('\\n\\n[From the business');
    expect(note).toBeGreaterThan(0);
    expect(turn1!.rawText.slice(note)).toContain('listening.md › Listening');
    expect(turn2!.rawText.slice(0, note)).toBe(turn1!.rawText.slice(0, note));
    // Turn 2 has the words without the note: the content ends where turn 1's note began.
    expect(turn2!.rawText.slice(note, note + 2)).toBe('"}');
    expect(turns[1]!.tokens?.cached).toBeGreaterThan(0);
  });
});

describe('cache marks', () => {
  test('LLM_CACHE_MARKS=anthropic: the static part of system.md and the last tool are marked; the text is the same', async () => {
    const env = await start({ LLM_CACHE_MARKS: 'anthropic' });
    await talk(env, '4915100000001', '4930100000001', ['Hello']);
    const [request] = answered(env);
    const body = request!.rawBody as { messages: { role: string; content: unknown }[]; tools: Record<string, unknown>[] };
    expect(body.messages[0]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: STATIC, cache_control: { type: 'ephemeral' } },
        { type: 'text', text: expect.stringMatching(/^- Calling number: 4915100000001\. Called number: 4930100000001\.\n- Today is /) },
      ],
    });
    expect(body.tools.at(-1)).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(request!.rawText.match(/"cache_control"/g)).toHaveLength(2);
  });

  test('without LLM_CACHE_MARKS nothing is marked and system.md is one string', async () => {
    const env = await start();
    await talk(env, '4915100000001', '4930100000001', ['Hello']);
    const [request] = answered(env);
    expect(request!.rawText).not.toContain('cache_control');
    const body = request!.rawBody as { messages: { content: unknown }[] };
    expect(body.messages[0]!.content).toEqual(expect.stringMatching(new RegExp(`^${escape(STATIC)}- Calling number: 4915100000001`)));
  });
});

describe('npm run prompts:check', () => {
  test('warns when a placeholder comes before much text the same on every call, with what it costs', async () => {
    const late = await checkPrompts(await promptsFolder(), {});
    expect(late.files.find((f) => f.file === 'system.md')!.problems).toEqual([]);
    const early = await checkPrompts(await promptsFolder(`Today is {{date}}.\n${STATIC}- Calling number: {{caller_number|unknown}}.\n`), {});
    // The lines after the date's, blank ones aside.
    const bytes = Buffer.byteLength(STATIC) - 2;
    expect(early.files.find((f) => f.file === 'system.md')!.problems).toEqual([
      {
        severity: 'warning',
        message:
          `line 1, column 10: {{date}} differs from call to call and comes before ${bytes.toLocaleString('en-US')} bytes of text that does not: ` +
          `a provider caches a prompt only up to its first difference, so 0 bytes can be cached instead of ${bytes.toLocaleString('en-US')} bytes; ` +
          'move the lines with placeholders to the end of system.md',
      },
    ]);
  });

  test('the shipped prompts keep their placeholders at the end', async () => {
    for (const dir of ['prompts', 'prompts/de']) {
      const check = await checkPrompts(path.join(import.meta.dirname, '..', dir), {});
      expect(check.files.find((f) => f.file === 'system.md')!.problems).toEqual([]);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
