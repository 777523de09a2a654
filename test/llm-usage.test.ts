/**
 * The tokens each LLM request used, as real servers report them, recorded per turn: the recorded
 * streams of test/fixtures/llm-streams replayed through the real SDK path into a real call, each
 * server's usage chunk where it sends it (a last chunk without choices, the finishing chunk, every
 * chunk, Groq's x_groq, none at all). And asking for usage never breaks a server that refuses it.
 */
import { readFileSync } from 'node:fs';
import type { TurnSummary } from '../src/call/ports/call-summary.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { ScriptedPromptCache } from '../src/llm/scripted-prompt-cache.js';
import type { TokenUsage } from '../src/llm/usage.js';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { CallReportSchema } from '../src/reports/report-builder.js';
import type { FakeVoiceService } from '../src/testing/voice-service-client.js';
import type { TestHotline } from './helpers/hotline.js';
import { startReportReceiver } from './helpers/report-receiver.js';
import { lastUserText } from './helpers/scripts.js';
import { testCalls } from './helpers/test-calls.js';
import { dashboardCallPage, endCall } from './helpers/tool-calls.js';

const DIR = path.join(import.meta.dirname, 'fixtures', 'llm-streams');

/** What each server counted, read off its recording by hand. */
const RECORDED: [file: string, tokens: TokenUsage | undefined][] = [
  // A last chunk with empty choices, as asked for with stream_options.
  ['openai-gpt4omini-text.sse', { prompt: 78, completion: 9, cached: 0, reasoning: 0 }],
  // ... followed by a moderation chunk whose usage is null.
  ['openai-gpt5-text.sse', { prompt: 13, completion: 11, cached: 0, reasoning: 0 }],
  ['xai-grok3mini-text.sse', { prompt: 12, completion: 2, cached: 11, reasoning: 340 }],
  ['alibaba-qwen3max-reasoning.sse', { prompt: 24, completion: 1355, cached: 0, reasoning: 1084 }],
  ['openrouter-gemini-native-options.sse', { prompt: 687, completion: 187, cached: 679, reasoning: 118 }],
  // prompt_tokens_details null, reasoning_tokens beside the counts.
  ['azure-deepseek-v4pro-reasoning.sse', { prompt: 19, completion: 1720, reasoning: 0 }],
  // On the chunk that finishes the reply, with DeepSeek's own names beside OpenAI's.
  ['deepseek-reasoner-reasoning.sse', { prompt: 18, completion: 219, cached: 0, reasoning: 205 }],
  ['mistral-small-text.sse', { prompt: 13, completion: 8 }],
  ['zai-glm47-thinking.sse', { prompt: 13, completion: 564, cached: 0, reasoning: 561 }],
  ['hf-deepseek-r1-think-tags.sse', { prompt: 10, completion: 955, cached: 0 }],
  // Groq: under usage and x_groq.usage, or only under x_groq.usage.
  ['groq-llama33-text.sse', { prompt: 45, completion: 662 }],
  ['groq-compound-websearch.sse', { prompt: 5003, completion: 359 }],
  // On every chunk, growing: the last one counts.
  ['perplexity-sonar-text.sse', { prompt: 11, completion: 434 }],
  // Anthropic's names behind a gateway, the first count without the completion.
  ['neon-claude-haiku45-text.sse', { prompt: 16, completion: 13, cached: 0 }],
  // No usage at all.
  ['ollama-qwen25coder-text.sse', undefined],
];

const END = 'That is all.';
const ADMIN = 'usage-admin-token-0123456789';
const REPORT_SECRET = 'usage-report-secret-0123456789';

function script(request: ChatRequestBody): ScriptedReply {
  const words = lastUserText(request);
  if (words === END) return { content: 'Goodbye for now.' };
  // The report's own request (report.md): its fields, none of them asked for here.
  if (request.response_format) return { content: '{}' };
  if (words.endsWith('.sse')) return { sse: readFileSync(path.join(DIR, words), 'utf8'), ttftMs: 0, tokenDelayMs: 0 };
  if (words === 'refuse' && request.stream_options) return { status: 422 };
  // A tool Hotline does not have: the model is told so and asked again, within the turn.
  if (words === 'Look it up') return request.messages.at(-1)?.role === 'tool' ? { content: 'It is not there.' } : { toolCalls: [{ name: 'lookup', arguments: '{}' }] };
  return { content: 'Fine, thank you.' };
}

const calls = testCalls({ playback: { kind: 'auto', msPerChar: 0.01 } });

async function start(env: Record<string, string> = {}): Promise<TestHotline> {
  // Long recorded answers are spoken whole, and a thinking model gets no hold line: one request per turn.
  return calls.start(script, { REPLY_MAX_CHARS: '20000', THINKING_FILLER_MS: '0', ...env });
}

/** The caller says `words`; the turn's record once its tokens (and their cost) are on it, or the reply has played. */
async function turnOf(env: TestHotline, words: string): Promise<TurnSummary> {
  return (await callWith(env, words)).turn;
}

async function callWith(env: TestHotline, words: string): Promise<{ turn: TurnSummary; service: FakeVoiceService }> {
  const service = await calls.connect();
  service.start();
  await service.nextOfType('speak');
  await service.whenQuiet();
  service.say(words);
  await service.next((a) => a.type === 'speak');
  const call = env.hotline.registry.get(service.sessionId)!;
  await expect.poll(() => call.quietRecord()?.turns.length, { timeout: 10_000 }).toBe(1);
  return { turn: call.quietRecord()!.turns[0]!, service };
}

async function turnTokens(env: TestHotline, words: string): Promise<TokenUsage | undefined> {
  return (await turnOf(env, words)).tokens;
}

describe('usage as each server reports it', () => {
  test.each(RECORDED)('%s', async (file, expected) => {
    const env = await start();
    expect(await turnTokens(env, file)).toEqual(expected);
  });
});

describe('what the tokens cost', () => {
  test('a recorded OpenAI stream at gpt-4o-mini’s list price: on the turn and in the metrics', async () => {
    const env = await start({ LLM_MODEL: 'gpt-4o-mini' });
    const turn = await turnOf(env, 'openai-gpt4omini-text.sse');
    // 78 prompt tokens at $0.15 and 9 completion tokens at $0.60 per million.
    expect(turn).toMatchObject({ model: 'gpt-4o-mini', tokens: { prompt: 78, completion: 9 } });
    expect(turn.costUsd).toBeCloseTo((78 * 0.15 + 9 * 0.6) / 1e6, 12);
    const metrics = await (await fetch(`${env.hotline.url}/metrics`)).text();
    expect(metrics).toMatch(/hotline_llm_tokens_total\{model="gpt-4o-mini",kind="prompt"\} 78/);
    expect(metrics).toMatch(/hotline_llm_tokens_total\{model="gpt-4o-mini",kind="completion"\} 9/);
    expect(metrics).toMatch(/hotline_llm_cost_usd_total\{model="gpt-4o-mini"\} 0\.0000171/);
  });

  test('the same stream on the call\'s story page and in its report: the tokens and the cost', async () => {
    const reports = await startReportReceiver(REPORT_SECRET);
    onTestFinished(() => reports.close());
    const env = await start({ LLM_MODEL: 'gpt-4o-mini', ADMIN_TOKEN: ADMIN, REPORT_WEBHOOK_URL: reports.url, REPORT_WEBHOOK_SECRET: REPORT_SECRET });
    const { service } = await callWith(env, 'openai-gpt4omini-text.sse');
    const cost = (78 * 0.15 + 9 * 0.6) / 1e6;
    await endCall(env, service);

    const report = CallReportSchema.parse(JSON.parse((await reports.request(0)).body));
    expect(report.turns.tokens).toEqual({ prompt: 78, cached: 0, completion: 9, reasoning: 0 });
    expect(report.turns.cost_usd).toBeCloseTo(cost, 12);
    expect(report.turns.each.map((turn) => [turn.model, turn.cost_usd])).toEqual([['gpt-4o-mini', expect.closeTo(cost, 12)]]);

    const story = await dashboardCallPage(env, service.sessionId, ADMIN);
    expect(story).toContain('<dd class="tokens">78 prompt, 0 of them cached; 9 completion</dd>');
    expect(story).toContain('<dd class="cost" id="call-cost">$0.000017</dd>');
  });

  test('LLM_PRICES_FILE prices a model the defaults do not know, cached prompt tokens at their own price', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hotline-prices-'));
    const file = path.join(dir, 'prices.json');
    await writeFile(file, JSON.stringify({ 'gemini-flash-house': { input: 1, cached_input: 0.1, output: 2 } }));
    const env = await start({ LLM_MODEL: 'gemini-flash-house', LLM_PRICES_FILE: file });
    // 687 prompt tokens, 679 of them cached; 187 completion.
    expect((await turnOf(env, 'openrouter-gemini-native-options.sse')).costUsd).toBeCloseTo((8 * 1 + 679 * 0.1 + 187 * 2) / 1e6, 12);
    await rm(dir, { recursive: true, force: true });
  });

  test('a model without a price: tokens counted, no cost made up', async () => {
    const env = await start();
    const turn = await turnOf(env, 'openai-gpt4omini-text.sse');
    expect(turn.tokens).toBeDefined();
    expect(turn.costUsd).toBeUndefined();
    expect(await (await fetch(`${env.hotline.url}/metrics`)).text()).not.toContain('hotline_llm_cost_usd_total{');
  });
});

describe('asking for usage', () => {
  test('each request asks for its usage; the turn adds up the counts of its requests', async () => {
    const env = await start();
    const tokens = await turnTokens(env, 'Look it up');
    expect(env.llm.requests).toHaveLength(2);
    expect(env.llm.requests.map((r) => r.body.stream_options)).toEqual([{ include_usage: true }, { include_usage: true }]);
    // What the scripted server counted for each, by its prompt cache replayed over the same requests.
    const cache = new ScriptedPromptCache();
    const [first, second] = env.llm.requests.map((r) => cache.count(r.rawBody));
    expect(tokens).toEqual({
      prompt: first!.promptTokens + second!.promptTokens,
      cached: first!.cachedTokens + second!.cachedTokens,
      completion: expect.any(Number),
      reasoning: 0,
    });
    expect(tokens!.completion).toBeGreaterThan(0);
  });

  test('LLM_STREAM_USAGE=false asks for none', async () => {
    const env = await start({ LLM_STREAM_USAGE: 'false' });
    expect(await turnTokens(env, 'How are you?')).toBeUndefined();
    expect(env.llm.requests[0]!.rawText).not.toContain('stream_options');
  });

  test('a server that refuses stream_options (422, as Mistral does) is asked again at once without it, and never again with it', async () => {
    const env = await start();
    const service = await calls.connect();
    service.start();
    await service.nextOfType('speak');
    await service.whenQuiet();
    service.say('refuse');
    // The caller hears the answer, not the apology.
    expect((await service.nextOfType('speak')).text).toBe('Fine, thank you.');
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating ?? true).toBe(false);
    await service.whenQuiet();
    service.say('How are you?');
    expect((await service.nextOfType('speak')).text).toBe('Fine, thank you.');
    expect(env.llm.requests.map((r) => [r.status, r.body.stream_options ?? null])).toEqual([
      [422, { include_usage: true }],
      [200, null],
      [200, null],
    ]);
  });

  test('LLM_STREAM_USAGE=true keeps asking: a server that refuses it fails the turn, as it says', async () => {
    const env = await start({ LLM_STREAM_USAGE: 'true' });
    const service = await calls.connect();
    service.start();
    await service.nextOfType('speak');
    await service.whenQuiet();
    service.say('refuse');
    expect((await service.nextOfType('speak')).text).toMatch(/^I'm sorry/);
    expect(env.llm.requests.every((r) => r.body.stream_options?.include_usage === true)).toBe(true);
  });
});
