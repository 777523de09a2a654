/**
 * First-speak overhead: the time from the LLM token that completes a sentence
 * being written by the (scripted, in-process) LLM server to the matching
 * `speak` action arriving at the (in-process) voice service client. Both ends
 * live in this process, so one clock measures both; loopback transit is
 * included, which makes the figure an upper bound of Hotline's own share.
 *
 *   npm run bench -- [--calls 1,100] [--turns 5] [--ttft 200] [--token-delay 20]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { loadConfig } from '../config.js';
import { startScriptedLlmServer } from '../llm/scripted-server.js';
import { startHotline } from '../server.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1,100' },
    turns: { type: 'string', default: '5' },
    ttft: { type: 'string', default: '200' },
    'token-delay': { type: 'string', default: '20' },
  },
});

const REPLY =
  'Sure, I can help with that. We are open from 9 a.m. to 6 p.m. on weekdays. ' +
  'A standard appointment costs $49.50. Is there anything else I can do for you?';

// Concurrent calls' requests arrive in any order: the question text says which call a request belongs to.
const requestByQuestion = new Map<string, number>();
const llm = await startScriptedLlmServer({
  script: (request, { index }) => {
    const last = request.messages.at(-1);
    if (typeof last?.content === 'string') requestByQuestion.set(last.content, index);
    return { content: REPLY };
  },
  host: '127.0.0.1',
  ttftMs: Number(values.ttft),
  tokenDelayMs: Number(values['token-delay']),
});
const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-'));
const hotline = await startHotline(
  loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: llm.baseURL,
    TRANSCRIPTS_DIR: transcriptsDir,
  }),
  pino({ level: 'silent' }),
);

async function runCall(index: number, turns: number): Promise<number[]> {
  const ws = new WebSocket(hotline.wsUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const id = `bench-${index}-${Date.now()}`;
  const send = (event: object) => ws.send(JSON.stringify(event));
  const overheads: number[] = [];
  let pendingSpeaks = 0;
  let turnDone: (() => void) | undefined;
  let question = '';
  ws.on('message', (data) => {
    const at = performance.timeOrigin + performance.now();
    const action = JSON.parse(String(data)) as { type: string };
    if (action.type !== 'speak' || !question) return;
    const tokens = llm.requests[requestByQuestion.get(question) ?? -1]?.tokens ?? [];
    // The completing token is the last one written before the speak arrived.
    const completing = tokens.at(-1);
    if (completing) overheads.push(at - completing.at);
    if (--pendingSpeaks === 0) turnDone?.();
  });
  send({ type: 'session_start', session: { id, direction: 'inbound' } });
  for (let turn = 0; turn < turns; turn++) {
    // Turns start at random moments, as callers do, not in lockstep.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
    pendingSpeaks = 4;
    const done = new Promise<void>((resolve) => (turnDone = resolve));
    question = `question ${turn} of ${id}`;
    send({ type: 'user_speak', session: { id }, text: question });
    await done;
  }
  send({ type: 'session_end', session: { id }, reason: 'bench' });
  ws.close();
  return overheads;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

console.log('calls  speaks  overhead p50 ms  p99 ms  max ms');
for (const calls of values.calls.split(',').map(Number)) {
  const all = (await Promise.all(Array.from({ length: calls }, (_, i) => runCall(i, Number(values.turns))))).flat();
  all.sort((a, b) => a - b);
  console.log(
    `${String(calls).padStart(5)}  ${String(all.length).padStart(6)}  ${percentile(all, 50).toFixed(3).padStart(15)}  ${percentile(all, 99).toFixed(3).padStart(6)}  ${(all.at(-1) ?? 0).toFixed(3).padStart(6)}`,
  );
}
await hotline.close();
await llm.close();
await rm(transcriptsDir, { recursive: true, force: true });
