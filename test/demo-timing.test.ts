/**
 * The demo model answers as fast as a good real one: each reply's first
 * sentence is complete well inside WEBHOOK_HOLD_MS at the default timing, so
 * a webhook caller asking it anything hears the answer, not "Let me think".
 * (test/readme-examples.test.ts runs the same over HTTP against `npm start`.)
 */
import { describe, expect, test } from 'vitest';
import { SentenceChunker } from '../src/call/speech/chunker.js';
import { loadConfig } from '../src/config.js';
import { demoScript } from '../src/demo/demo-script.js';
import type { ChatRequestBody } from '../src/llm/scripted-server.js';
import { tokenize } from '../src/llm/tokenize.js';

/** Every rule of the demo script, and a long line it only echoes. */
const CALLER_LINES = [
  'What are your opening hours?',
  'How much does it cost?',
  'Where are you located?',
  'Tell me more about you',
  'Can I talk to a person?',
  'Thanks, bye!',
  'Where is my order?',
  'Wait',
  'Can someone call me back?',
  'Yes, now is a good time.',
  'I would like to know whether the thing I bought from you last spring can still be repaired under the warranty',
];

/** Tokens streamed until the first sentence is complete (the chunker needs the token after its end, or the stream's end). */
function tokensToFirstSentence(said: string): { tokens: number; sentence: string } {
  const request = { model: 'demo', messages: [{ role: 'system', content: 'You are the demo.' }, { role: 'user', content: said }] } as ChatRequestBody;
  const reply = demoScript(request);
  const speak = reply.toolCalls?.find((call) => call.name === 'speak');
  // The speak tool's text streams inside its JSON arguments: the tokens before the text count too.
  const text = reply.content ?? (speak ? (JSON.parse(speak.arguments) as { text: string }).text : '');
  const before = speak && !reply.content ? tokenize('{"text":"').length : 0;
  const chunker = new SentenceChunker();
  let tokens = before;
  for (const token of tokenize(text)) {
    tokens++;
    const [sentence] = chunker.push(token);
    if (sentence !== undefined) return { tokens, sentence };
  }
  return { tokens, sentence: chunker.flush()[0] ?? '' };
}

describe('the demo model at its default timing', () => {
  const config = loadConfig({});
  const { ttftMs, tokenDelayMs } = config.demo;
  const limit = config.webhookHoldMs * 0.6;

  test.each(CALLER_LINES)('"%s": the first sentence is complete within 60 % of WEBHOOK_HOLD_MS', (said) => {
    const { tokens, sentence } = tokensToFirstSentence(said);
    // Tool calls (an order, a callback) answer with the tool's hold line first: no sentence to time here.
    if (tokens === 0) return;
    const ms = ttftMs + (tokens - 1) * tokenDelayMs;
    expect(ms, `"${sentence}" takes ${tokens} tokens: ${ms} ms`).toBeLessThanOrEqual(limit);
  });
});
