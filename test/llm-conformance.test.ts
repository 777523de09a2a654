/**
 * Replays streams recorded from real LLM servers (OpenAI, Azure, Alibaba,
 * DeepSeek, Groq, Mistral, xAI, Cerebras, Perplexity, OpenRouter, vLLM,
 * Ollama, …; see test/fixtures/llm-streams/README.md) through the real SDK
 * path into a real call: every text is spoken with its content, every speak
 * and hangup in every provider's shape is carried out, and nothing is ever
 * silent or "[object Object]".
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { FakeVoiceService, type ReceivedAction } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { lastUserText } from './helpers/scripts.js';

interface Recording {
  file: string;
  provider: string;
  kind: 'content' | 'tool_calls' | 'mixed';
  expected_content: string;
  expected_tool_calls: { name: string; arguments: string }[];
  stream_errors: unknown[];
  shapes: string[];
}

const DIR = path.join(import.meta.dirname, 'fixtures', 'llm-streams');
const load = (index: string, prefix: string): (Recording & { path: string })[] =>
  (JSON.parse(readFileSync(path.join(DIR, index), 'utf8')) as Recording[]).map((r) => ({ ...r, path: path.join(DIR, prefix, r.file) }));
const recordings = [...load('index.json', ''), ...load('derived/index.json', 'derived')];
const byFile = new Map(recordings.map((r) => [r.file, r]));

const APOLOGY = "I'm sorry, I'm having a little trouble right now. Could you say that again?";
const AFTER_TOOL = 'Done, thank you.';
const OWN_TOOLS = new Set(['speak', 'transfer', 'hangup']);

/** The words of a text, in order. */
function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** What the speech rules leave of a model's text for a listener: no thoughts, code fences or citation marks. */
function speakableWords(text: string): string[] {
  return words(
    text
      .replace(/<think>[\s\S]*?<\/think>/g, ' ')
      .replace(/^\s*`{3,}.*$/gm, ' ')
      .replace(/\[\^?\d+(?:\s*[,–-]\s*\d+)*\]/g, ' '),
  );
}

/** A refusal is streamed in its own field; the index records only content. */
function refusalOf(recording: Recording & { path: string }): string {
  let text = '';
  for (const line of readFileSync(recording.path, 'utf8').split('\n')) {
    const match = /"refusal":"((?:[^"\\]|\\.)*)"/.exec(line);
    if (match) text += JSON.parse(`"${match[1]}"`) as string;
  }
  return text;
}

function script(request: ChatRequestBody) {
  // A round after a tool Hotline does not have: the model carries on once told so.
  if (request.messages.at(-1)?.role === 'tool') return { content: AFTER_TOOL };
  if (lastUserText(request) === END) return { content: END_REPLY };
  const recording = byFile.get(lastUserText(request));
  if (!recording) return { status: 404 };
  return { sse: readFileSync(recording.path, 'utf8'), ttftMs: 0, tokenDelayMs: 0 };
}

let env: TestHotline;

beforeAll(async () => {
  // Long recorded answers are spoken whole here; the length limit has its own tests.
  env = await startTestHotline(script, { REPLY_MAX_CHARS: '20000', THINKING_FILLER_MS: '0' });
});

afterAll(async () => {
  await env.close();
});

const END = 'That is all.';
const END_REPLY = 'Goodbye for now.';

/**
 * Plays one recording as the reply to a caller, and returns what Hotline sent until it was done: its
 * hangup, for a recording that hangs up (sent once the goodbye has played, which may be after the
 * generation ended), or else whatever came before the answer to a next line.
 */
async function replay(file: string, hangsUp: boolean): Promise<ReceivedAction[]> {
  const service = await FakeVoiceService.connect(env.hotline.wsUrl, { playback: { kind: 'auto', msPerChar: 0.01 } });
  try {
    service.start();
    await service.nextOfType('speak');
    const from = service.actions.length;
    service.say(file);
    // Silence would time out here: every reply has at least one action.
    await service.next();
    if (hangsUp) {
      const hangup = service.actions.slice(from).find((a) => a.type === 'hangup') ?? (await service.nextOfType('hangup'));
      return service.actions.slice(from, service.actions.indexOf(hangup) + 1);
    }
    await expect.poll(() => env.hotline.registry.get(service.sessionId)?.generating ?? false, { timeout: 10_000 }).toBe(false);
    // The turn is over; the socket keeps the order, so everything it sent arrives before this answer.
    service.say(END);
    await service.next((a) => a.text === END_REPLY);
    const actions = service.actions.slice(from);
    return actions.slice(0, actions.findIndex((a) => a.text === END_REPLY));
  } finally {
    await service.close();
  }
}

describe.each(recordings.map((r) => [r.file, r] as const))('%s', (file, recording) => {
  test(`${recording.provider}: spoken or carried out, never silent`, async () => {
    const hangsUp = recording.stream_errors.length === 0 && recording.expected_tool_calls.some((t) => t.name === 'hangup');
    const actions = await replay(file, hangsUp);
    const speaks = actions.filter((a) => a.type === 'speak').map((a) => a.text ?? '');
    expect(speaks.join(' ')).not.toContain('[object Object]');
    expect(actions.length).toBeGreaterThan(0);

    if (recording.stream_errors.length > 0) {
      // The server broke off with an error: the caller hears the apology, never silence.
      expect(speaks.at(-1)).toBe(APOLOGY);
      return;
    }
    const speech = recording.expected_tool_calls.filter((t) => t.name === 'speak').map((t) => (JSON.parse(t.arguments) as { text: string }).text);
    const content = recording.shapes.includes('refusal') ? refusalOf(recording) : recording.expected_content;
    const foreign = recording.expected_tool_calls.some((t) => !OWN_TOOLS.has(t.name));
    const expected = [...speakableWords(content), ...speech.flatMap(speakableWords), ...(foreign ? words(AFTER_TOOL) : [])];
    expect(words(speaks.join(' '))).toEqual(expected);
    expect(speaks).not.toContain(APOLOGY);
    if (recording.expected_tool_calls.some((t) => t.name === 'hangup')) expect(actions.at(-1)?.type).toBe('hangup');
    else expect(actions.some((a) => a.type === 'hangup')).toBe(false);
  });
});
