/**
 * Webhook requests that would wait for the model: the hold lines a slow turn
 * brings (varied, spaced, few, and never past the service's time limit), and
 * requests with nothing to wait for, answered at once.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';
import { scriptByUserText } from './helpers/scripts.js';

const THINKING = 'Let me think about that for a moment.';
const THINKING_AGAIN = "Thanks for waiting, I'm still working on it.";
/** The service gives up on a webhook answer after about this long. */
const SERVICE_LIMIT_MS = 5000;
/** A request after a hold line waits this long before the next line (src/transport/webhook-calls.ts). */
const ANSWER_LIMIT_MS = 4000;
/** The most hold lines of one turn. */
const MAX_HOLD_LINES = 3;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hotline(...args: Parameters<typeof startTestHotline>): Promise<TestHotline> {
  const env = await startTestHotline(...args);
  cleanups.push(() => env.close());
  return env;
}

interface Answer {
  status: number;
  body: { type?: string; text?: string } | undefined;
  ms: number;
}

async function post(env: TestHotline, event: unknown, timeoutMs = 30_000): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${env.hotline.url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Answer['body']) : undefined, ms: performance.now() - started };
}

describe('hold lines over the webhook', () => {
  test('a model thinking 16 s: a few varied hold lines, spaced, then 204s; no answer waits past the service limit; the reply comes', { timeout: 60_000 }, async () => {
    const env = await hotline(scriptByUserText({ 'Check everything': { content: 'Here is the answer.', ttftMs: 16_000 } }), {
      LLM_TIMEOUT_MS: '20000',
    });
    const session = { id: 'slow-thinker' };
    await post(env, { type: 'session_start', session });
    await post(env, { type: 'assistant_speech_ended', session });
    const answers: Answer[] = [await post(env, { type: 'user_speak', session, text: 'Check everything' })];
    // The service plays each hold line at once (the worst case for repetition) and reports it played.
    while (answers.at(-1)!.body?.text !== 'Here is the answer.' && answers.length < 20) {
      answers.push(await post(env, { type: 'assistant_speech_ended', session }));
    }
    expect(answers.at(-1)!.body).toMatchObject({ type: 'speak', text: 'Here is the answer.' });
    const said = answers.slice(0, -1).map((a) => (a.status === 204 ? 204 : a.body?.text));
    const lines = said.filter((s) => s !== 204);
    expect(lines[0], `answers: ${JSON.stringify(said)}`).toBe(THINKING);
    expect(lines.length, `answers: ${JSON.stringify(said)}`).toBeLessThanOrEqual(MAX_HOLD_LINES);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < lines.length; i++) expect(lines[i], `answers: ${JSON.stringify(said)}`).not.toBe(lines[i - 1]);
    expect(lines).toContain(THINKING_AGAIN);
    // Once the lines are used up, the requests wait out their time and get "nothing to say".
    expect(said.indexOf(204)).toBeGreaterThan(said.lastIndexOf(lines.at(-1)!));
    // A line after the first comes only when the request has waited near the limit: spaced, not one a second.
    for (const answer of answers.slice(1, lines.length)) expect(answer.ms).toBeGreaterThanOrEqual(ANSWER_LIMIT_MS - 50);
    for (const answer of answers) expect(answer.ms).toBeLessThan(SERVICE_LIMIT_MS);
    // Every hold line is in the history as heard, the model asked once.
    expect(env.llm.requests).toHaveLength(1);
  });

  test('an event of an unknown session with nothing to say is answered 204 at once, not after the hold wait', { timeout: 20_000 }, async () => {
    // A hold wait longer than the fetch may take: an answer that waited for it fails the test.
    const env = await hotline(scriptByUserText({}), { WEBHOOK_HOLD_MS: '20000' });
    const answer = await post(env, { type: 'assistant_speech_ended', session: { id: 'from-another-instance' } }, 5000);
    expect(answer.status).toBe(204);
    // A later event of that call is answered at once too: the call was adopted, nothing is pending.
    expect((await post(env, { type: 'assistant_speech_ended', session: { id: 'from-another-instance' } }, 5000)).status).toBe(204);
    expect(env.llm.requests).toHaveLength(0);
  });
});
