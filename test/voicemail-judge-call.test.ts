/**
 * An outbound call whose first words the phrases cannot place: the model
 * judges them while the answer is already being made, and nothing of the
 * answer is heard before its verdict. A person never waits for the judge's
 * round trip; a mailbox never hears a reply.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { ChatRequestBody, RecordedRequest, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';
import { startTestHotline, type TestHotline } from './helpers/hotline.js';

/** Neither a mailbox phrase nor a person's: the phrases are unsure, the model judges. */
const UNSURE = 'Thanks for calling Acme Corporation, our office hours are Monday to Friday from nine to five.';
const REPLY = 'Hello, this is the assistant of the bakery, calling about your order.';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const isJudge = (body: ChatRequestBody): boolean =>
  (body as { response_format?: { json_schema?: { name?: string } } }).response_format?.json_schema?.name === 'answered_by';

async function outboundCall(judgeSays: 'human' | 'voicemail', judgeMs: number, reply: ScriptedReply) {
  const env: TestHotline = await startTestHotline(
    (request) => (isJudge(request) ? { content: JSON.stringify({ answered_by: judgeSays }), ttftMs: judgeMs } : reply),
    { VOICEMAIL_JUDGE_MS: '10000', VOICEMAIL_QUIET_MS: '200' },
  );
  cleanups.push(() => env.close());
  const service = await FakeVoiceService.connect(env.hotline.wsUrl);
  cleanups.push(async () => void (await service.close()));
  service.start({ direction: 'outbound', from_phone_number: '4930123456', to_phone_number: '491511234567' });
  await service.nextOfType('speak');
  service.say(UNSURE);
  const first = await env.llm.nextRequest();
  const second = await env.llm.nextRequest();
  const [judge, chat] = isJudge(first.body) ? [first, second] : [second, first];
  return { env, service, judge: judge!, chat: chat! };
}

/** Whether the request's answer has been sent in full yet. */
async function answered(request: RecordedRequest): Promise<boolean> {
  return Promise.race([request.ended.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

async function transcriptOf(env: TestHotline, sessionId: string): Promise<Record<string, unknown>[]> {
  await expect.poll(() => env.hotline.registry.size).toBe(0);
  await env.hotline.registry.endAll('flush');
  const text = await readFile(path.join(env.transcriptsDir, `${sessionId}.jsonl`), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the voicemail judge and the first reply of an outbound call', () => {
  test('a person: the reply is made while the model judges, and heard the moment it says "a person"', async () => {
    const { env, service, judge, chat } = await outboundCall('human', 1500, { content: REPLY });
    expect(isJudge(judge.body)).toBe(true);
    expect(chat.body.messages.at(-1)).toMatchObject({ role: 'user', content: UNSURE });
    // The answer was asked for before the judge had answered: no round trip waited.
    expect(await answered(judge)).toBe(false);
    // Ready, but held: nothing of it has gone out while the judge is still at it.
    expect(await chat.ended).toBe('completed');
    expect(await answered(judge)).toBe(false);
    expect(service.actions.filter((a) => a.type === 'speak')).toHaveLength(1);
    const spoken = await service.next((a) => a.type === 'speak' && a.text === REPLY);
    expect(await answered(judge)).toBe(true);
    expect(spoken).toMatchObject({ user_input_timeout_seconds: 8 });
    service.end();
    const lines = await transcriptOf(env, service.sessionId);
    expect(lines.filter((l) => l.role === 'user')).toEqual([expect.objectContaining({ text: UNSURE })]);
    expect(lines.find((l) => l.role === 'user')).not.toHaveProperty('mailbox');
    expect(lines.find((l) => l.role === 'assistant' && l.text === REPLY)).toBeDefined();
    expect(lines.some((l) => l.text === 'voicemail_detected')).toBe(false);
  });

  test('over the WebSocket, a reply held while the model judged goes out as it would have streamed: a speak per sentence', async () => {
    const { service, judge, chat } = await outboundCall('human', 1500, { content: 'We open at nine. We close at six.' });
    expect(await chat.ended).toBe('completed');
    expect(await answered(judge)).toBe(false);
    const first = await service.next((a) => a.type === 'speak' && a.text !== undefined && a.text.startsWith('We open'));
    expect(first.text).toBe('We open at nine.');
    const second = await service.next((a) => a.type === 'speak');
    expect(second).toMatchObject({ text: 'We close at six.', user_input_timeout_seconds: 8 });
  });

  test('a mailbox: the reply in the making is dropped unheard and its LLM request aborted; the message follows the tone', async () => {
    const long = 'This reply is long and slow. '.repeat(12).trim();
    const { env, service, chat } = await outboundCall('voicemail', 800, { content: long, tokenDelayMs: 100 });
    expect(await chat.ended).toBe('aborted');
    const message = await service.next((a) => a.type === 'speak' && /call us back/i.test(a.text ?? ''));
    expect(message.text).toMatch(/^Hi /);
    await service.nextOfType('hangup');
    // Nothing of the reply was ever sent.
    expect(service.actions.some((a) => (a.text ?? '').includes('long and slow'))).toBe(false);
    service.end();
    const lines = await transcriptOf(env, service.sessionId);
    expect(lines.filter((l) => l.role === 'user')).toEqual([expect.objectContaining({ text: UNSURE, mailbox: true })]);
    expect(lines.find((l) => l.text === 'voicemail_detected')).toMatchObject({ role: 'event', by: 'model' });
    expect(lines.some((l) => l.role === 'assistant' && String(l.text).includes('long and slow'))).toBe(false);
  });

  test('over the webhook: the caller\'s request is answered with the reply once the model says "a person" — no hold line to a machine, no 204', async () => {
    const env = await startTestHotline(
      (request) => (isJudge(request) ? { content: '{"answered_by":"human"}', ttftMs: 1500 } : { content: REPLY }),
      { VOICEMAIL_JUDGE_MS: '10000' },
    );
    cleanups.push(() => env.close());
    const session = { id: 'outbound-webhook', direction: 'outbound', from_phone_number: '4930123456', to_phone_number: '491511234567' };
    const post = async (event: unknown) => {
      const res = await fetch(`${env.hotline.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as { text?: string }) : undefined };
    };
    await post({ type: 'session_start', session });
    await post({ type: 'assistant_speech_ended', session: { id: session.id } });
    const answer = await post({ type: 'user_speak', session: { id: session.id }, text: UNSURE });
    expect(answer).toMatchObject({ status: 200, body: { type: 'speak', text: REPLY } });
  });
});
