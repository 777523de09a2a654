/**
 * The bench's floor (bench/raw-reader.ts): against the real scripted
 * server, its frames carry Hotline's sentences and leave on the tokens the
 * bench's analysis attributes them to.
 */
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { completingTokenIndices } from '../bench/baselines.js';
import { planReply, RawReader } from '../bench/raw-reader.js';
import { replyText, tagFor } from '../bench/replies.js';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../src/llm/scripted-server.js';
import { tokenize } from '../src/llm/tokenize.js';
import { textFrame } from '../src/transport/ws-frame.js';

let llm: ScriptedLlmServer;

beforeAll(async () => {
  llm = await startScriptedLlmServer({
    host: '127.0.0.1',
    ttftMs: 1,
    tokenDelayMs: 2,
    script: (body) => ({ content: replyText(String(body.messages.at(-1)?.content)) }),
  });
});

afterAll(async () => {
  await llm.close();
});

test('the plan lets each sentence go on the token the analysis attributes it to', () => {
  for (let template = 0; template < 4; template++) {
    const tokens = tokenize(replyText(tagFor(template)));
    const plan = planReply(tokens);
    expect(plan.completing.map((i) => (i < 0 ? tokens.length - 1 : i))).toEqual(completingTokenIndices(tokens));
    expect(plan.texts.every((text) => text.includes(tagFor(template)))).toBe(true);
  }
});

test('each frame is written to the socket as its token arrives, the last at the stream end', async () => {
  const tag = tagFor(2);
  const plan = planReply(tokenize(replyText(tag)));
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  const socket = new Promise<net.Socket>((resolve) => wss.once('connection', (_ws, request) => resolve(request.socket as net.Socket)));
  await new Promise((resolve) => wss.once('listening', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}`);
  const received: string[] = [];
  client.on('message', (data: Buffer) => received.push((JSON.parse(data.toString('utf8')) as { text: string }).text));
  const left: string[] = [];
  const tokensAtLeft: number[] = [];
  const reader = new RawReader(new URL(`${llm.baseURL}/chat/completions`), { 'content-type': 'application/json' }, (text) => {
    left.push(text);
    tokensAtLeft.push(llm.requests.at(-1)?.tokens.length ?? -1);
  }, () => 0);
  const frames = plan.texts.map((text) => textFrame(JSON.stringify({ type: 'speak', session_id: 's', text })));
  await reader.ask(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: tag }], stream: true }), plan, frames, await socket);
  expect(left).toEqual(plan.texts);
  // No sentence leaves before the token that completes it has been written (on a quiet loop, right after it).
  const tokens = tokenize(replyText(tag)).length;
  plan.completing.forEach((i, k) => expect(tokensAtLeft[k]).toBeGreaterThanOrEqual(i < 0 ? tokens : i + 1));
  await expect.poll(() => received).toEqual(plan.texts);
  client.close();
  reader.close();
  await new Promise((resolve) => wss.close(resolve));
});
