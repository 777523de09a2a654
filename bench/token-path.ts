/**
 * A micro-harness for the path from socket bytes to the speak frame, steady
 * enough to judge a change on a busy machine by counts rather than by time:
 * one call, one process, a recorded stream (or the bench's replies) replayed
 * by a minimal HTTP server one SSE event per turn of the event loop, so each
 * token reaches the reader in a read of its own as it does at 60 tokens/s.
 *
 *   npx tsx bench/token-path.ts [--reader hotline|floor] [--stream bench|<file.sse>] [--turns 200] [--warm 200]
 *                                   [--turns-per-call 6] [--repeat 1] [--alloc] [--heap-profile <file>] [--callgrind]
 *
 * What the README's per-token figures came from (the difference of --repeat 6 and 1, over 7,440 tokens):
 *   node --expose-gc --min-semi-space-size=128 --max-semi-space-size=128 --import tsx bench/token-path.ts \
 *     --turns 24 --warm 96 --turns-per-call 1 --repeat 6 --alloc
 *   valgrind --tool=callgrind --separate-threads=yes --instr-atstart=no node --expose-gc \
 *     --min-semi-space-size=64 --max-semi-space-size=64 --import tsx bench/token-path.ts \
 *     --turns 24 --warm 200 --turns-per-call 1 --repeat 6 --callgrind      (thread 1's total)
 *
 * It prints the tokens and speaks of the measured turns and, with --alloc,
 * the bytes allocated per token (young generation grown over the measured
 * turns; run with --min-semi-space-size=64 --max-semi-space-size=64 so no
 * scavenge falls inside them, and --expose-gc: the harness says if one did). With
 * --heap-profile it writes a sampling heap profile of the measured turns,
 * objects collected since included. With --callgrind, under
 * `valgrind --tool=callgrind --instr-atstart=no`, instrumentation is switched
 * on for the measured turns only (callgrind_control), so the dump's
 * instruction count is theirs: divide by the tokens printed.
 *
 * The floor is raw-reader.ts, as the bench measures it: what any program pays.
 * The replay server, the voice-service client and the harness's own
 * bookkeeping are in every figure alike; set Hotline's against the floor's.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { loadConfig } from '../src/config.js';
import { tokenize } from '../src/llm/tokenize.js';
import { startHotline } from '../src/server.js';
import { textFrame } from '../src/transport/ws-frame.js';
import { planReply, RawReader, type ReplyPlan } from './raw-reader.js';
import { replyText, tagFor, TEMPLATE_COUNT } from './replies.js';

const { values } = parseArgs({
  options: {
    reader: { type: 'string', default: 'hotline' },
    stream: { type: 'string', default: 'bench' },
    turns: { type: 'string', default: '200' },
    warm: { type: 'string', default: '200' },
    'turns-per-call': { type: 'string', default: '6' },
    repeat: { type: 'string', default: '1' },
    alloc: { type: 'boolean', default: false },
    'heap-profile': { type: 'string' },
    callgrind: { type: 'boolean', default: false },
  },
});
const reader = values.reader === 'floor' ? 'floor' : 'hotline';
const turns = Number(values.turns);
const warm = Number(values.warm);
/** Turns before the call ends and the next begins: a conversation's history grows with every turn, and with it each request. */
const turnsPerCall = Number(values['turns-per-call']);
/** Each reply is this many replies' tokens in one: the difference to --repeat 1 is what the tokens cost alone, without the turns. */
const repeat = Number(values.repeat);

/** One reply as the replay server sends it: SSE events, and the content tokens they carry. */
interface Recorded {
  events: string[];
  tokens: string[];
}

/** The bench's reply for `tag`, framed as the scripted server frames it (a chunk per token, usage asked for). */
function benchReply(tag: string): Recorded {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-tokenpathtokenpathtokenpath1',
      object: 'chat.completion.chunk',
      created: 1_782_955_818,
      model: 'bench-model',
      system_fingerprint: 'fp_hotline',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    })}\n\n`;
  const tokens = Array.from({ length: repeat }, (_, i) => tokenize(`${i > 0 ? ' ' : ''}${replyText(tag)}`)).flat();
  const usage = { prompt_tokens: 900, completion_tokens: tokens.length, total_tokens: 900 + tokens.length };
  const events = [
    chunk({ role: 'assistant', content: '', refusal: null }),
    ...tokens.map((text) => chunk({ content: text })),
    chunk({}, 'stop'),
    `data: ${JSON.stringify({ id: 'chatcmpl-tokenpathtokenpathtokenpath1', object: 'chat.completion.chunk', created: 1_782_955_818, model: 'bench-model', system_fingerprint: 'fp_hotline', choices: [], usage })}\n\n`,
    'data: [DONE]\n\n',
  ];
  return { events, tokens };
}

/** A recorded stream as it was sent: its events, and the string contents the floor's scan counts. */
function recordedReply(file: string): Recorded {
  const events = readFileSync(file, 'utf8')
    .split(/\r?\n\r?\n/u)
    .filter((e) => e.trim() !== '')
    .map((e) => `${e}\n\n`);
  const first = events.findIndex((e) => /"content":"[^"]/u.test(e));
  const last = events.findLastIndex((e) => /"content":"[^"]/u.test(e));
  if (first >= 0 && repeat > 1) events.splice(first, last + 1 - first, ...Array.from({ length: repeat }, () => events.slice(first, last + 1)).flat());
  const tokens: string[] = [];
  for (const event of events) {
    const data = /^data: ?(.*)$/mu.exec(event)?.[1];
    if (!data || data === '[DONE]') continue;
    const content = (JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content;
    if (typeof content === 'string' && content !== '') tokens.push(content);
  }
  return { events, tokens };
}

const replies: Recorded[] =
  values.stream === 'bench' ? Array.from({ length: TEMPLATE_COUNT }, (_, i) => benchReply(tagFor(i + 36 * 36))) : [recordedReply(values.stream)];
const plans: ReplyPlan[] = replies.map((r) => planReply(r.tokens));
const chunked = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
};
const encoded: Buffer[][] = replies.map((r) => r.events.map(chunked));
const HEAD = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n');
const END = Buffer.from('0\r\n\r\n');

let turnIndex = 0;

/** A minimal keep-alive HTTP/1.1 server that answers every request with the next turn's reply, an event a loop turn. */
function startReplayServer(): Promise<net.Server> {
  const server = net.createServer((socket) => {
    let pending = Buffer.alloc(0);
    socket.on('data', (bytes: Buffer) => {
      pending = Buffer.concat([pending, bytes]);
      for (;;) {
        const head = pending.indexOf('\r\n\r\n');
        if (head < 0) return;
        const length = Number(/content-length: *(\d+)/iu.exec(pending.subarray(0, head).toString('latin1'))?.[1] ?? 0);
        if (pending.length < head + 4 + length) return;
        const post = pending.subarray(0, 5).toString('latin1') === 'POST ';
        pending = pending.subarray(head + 4 + length);
        if (!post) {
          socket.write('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: keep-alive\r\n\r\n');
          continue;
        }
        const events = encoded[turnIndex++ % encoded.length] ?? [];
        socket.write(HEAD);
        let next = 0;
        const step = (): void => {
          if (socket.destroyed) return;
          if (next < events.length) {
            socket.write(events[next++] as Buffer);
            setImmediate(step);
          } else socket.write(END);
        };
        step();
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The voice service's side: counts speaks, and says when the turn's last one has come. */
class VoiceClient {
  private waiting: { count: number; resolve: () => void } | undefined;
  private seen = 0;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      // The type alone: parsing every speak would put the client's work into the figures.
      if (data.indexOf('"speak"') < 0) return;
      this.seen++;
      if (this.waiting && this.seen >= this.waiting.count) {
        const { resolve } = this.waiting;
        this.waiting = undefined;
        resolve();
      }
    });
  }

  /** Resolves once `count` more speaks have arrived. */
  expect(count: number): Promise<void> {
    this.seen = 0;
    return new Promise((resolve) => (this.waiting = { count, resolve }));
  }
}

async function connect(url: string): Promise<VoiceClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return new VoiceClient(ws);
}

const startEvent = (session: string): string =>
  JSON.stringify({
    type: 'session_start',
    session: { id: session, direction: 'inbound', from_phone_number: '4915112345678', to_phone_number: '4930123456' },
  });
const userSpeak = (session: string, n: number): string =>
  JSON.stringify({ type: 'user_speak', session: { id: session }, text: `Question ${n}: can you help me with my appointment?`, barged_in: false });
const speechEnded = (session: string): string => JSON.stringify({ type: 'assistant_speech_ended', session: { id: session } });
const sessionEnd = (session: string): string => JSON.stringify({ type: 'session_end', session: { id: session }, reason: 'hangup' });

interface Target {
  wsUrl: string;
  close(): Promise<void>;
}

async function startHotlineTarget(llmUrl: string): Promise<Target> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hotline-token-path-'));
  const env: Record<string, string> = {
    NODE_ENV: 'bench',
    HOST: '127.0.0.1',
    PORT: '0',
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: llmUrl,
    LLM_MODEL: 'bench-model',
    TRANSCRIPTS_DIR: dir,
    RATE_LIMIT_WEBHOOK_PER_MINUTE: '0',
    RATE_LIMIT_WS_PER_MINUTE: '0',
    REPORT_FIELDS: 'false',
    REPLY_MAX_CHARS: '20000',
    THINKING_FILLER_MS: '0',
    LLM_TIMEOUT_MS: '600000',
    LLM_TOTAL_TIMEOUT_MS: '1200000',
  };
  const hotline = await startHotline(loadConfig(env), pino({ level: 'silent' }), { watchPrompts: false, env });
  return {
    wsUrl: hotline.wsUrl,
    close: async () => {
      await hotline.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The floor, as raw-reader-worker serves it, in this thread. */
async function startFloorTarget(llmUrl: string): Promise<Target> {
  const http = await import('node:http');
  const { WebSocketServer } = await import('ws');
  const raw = new RawReader(new URL('chat/completions', `${llmUrl}/`), { 'content-type': 'application/json' }, () => undefined, () => 0);
  const server = http.createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  let turn = 0;
  wss.on('connection', (ws, request) => {
    const socket = request.socket;
    ws.on('message', (message: Buffer) => {
      const event = JSON.parse(message.toString('utf8')) as { type?: string; text?: string; session: { id: string } };
      const session = event.session.id;
      if (event.type === 'session_start') socket.write(textFrame(JSON.stringify({ type: 'speak', session_id: session, text: 'Hello.' })));
      if (event.type !== 'user_speak') return;
      const plan = plans[turn++ % plans.length] as ReplyPlan;
      const frames = plan.texts.map((text) => textFrame(JSON.stringify({ type: 'speak', session_id: session, text })));
      const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: event.text }], stream: true });
      void raw.ask(body, plan, frames, socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${address.port}/ws`,
    close: async () => {
      raw.close();
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function callgrind(on: boolean): Promise<void> {
  return new Promise((resolve) => {
    const control = spawn('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)], { stdio: 'ignore' });
    control.once('exit', () => resolve());
    control.once('error', () => resolve());
  });
}

let client: VoiceClient | undefined;
let session = '';

/** Turns `from` to `from + count`, each call `turnsPerCall` turns long. */
async function talk(url: string, from: number, count: number): Promise<void> {
  for (let n = from; n < from + count; n++) {
    if (n % turnsPerCall === 0 || !client) {
      await hangUp();
      session = `token-path-${n}`;
      client = await connect(url);
      const greeted = client.expect(1);
      client.ws.send(startEvent(session));
      await greeted;
    }
    const plan = plans[n % plans.length] as ReplyPlan;
    const done = client.expect(plan.texts.length);
    client.ws.send(userSpeak(session, n));
    await done;
    client.ws.send(speechEnded(session));
  }
}

async function hangUp(): Promise<void> {
  if (!client) return;
  const { ws } = client;
  client = undefined;
  ws.send(sessionEnd(session));
  ws.close();
  await new Promise((resolve) => ws.once('close', resolve));
}

const llm = await startReplayServer();
const llmUrl = `http://127.0.0.1:${(llm.address() as net.AddressInfo).port}/v1`;
const target = reader === 'floor' ? await startFloorTarget(llmUrl) : await startHotlineTarget(llmUrl);
await talk(target.wsUrl, 0, warm);
// Two quiet loop turns, so the last warm-up reply's socket work is behind us.
await new Promise((resolve) => setImmediate(resolve));
await new Promise((resolve) => setImmediate(resolve));

const tokens = Array.from({ length: turns }, (_, n) => replies[(warm + n) % replies.length]?.tokens.length ?? 0).reduce((a, b) => a + b, 0);
let scavenges = 0;
const gcs = new PerformanceObserver((list) => (scavenges += list.getEntries().length));
const inspector = values['heap-profile'] ? new Session() : undefined;
if (inspector) {
  inspector.connect();
  await inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
const youngUsed = (): number =>
  v8
    .getHeapSpaceStatistics()
    .filter((s) => s.space_name === 'new_space' || s.space_name === 'new_large_object_space')
    .reduce((sum, s) => sum + s.space_used_size, 0);
// A full collection first (with --expose-gc): no marking the warm-up started may finish inside the measured turns.
(globalThis as { gc?: () => void }).gc?.();
// Its performance entry comes a loop turn later: it must not be counted as one of the measured turns'.
await new Promise((resolve) => setImmediate(resolve));
await new Promise((resolve) => setImmediate(resolve));
if (values.alloc) gcs.observe({ entryTypes: ['gc'] });
const before = youngUsed();
if (values.callgrind) await callgrind(true);
await talk(target.wsUrl, warm, turns);
if (values.callgrind) await callgrind(false);
const allocated = youngUsed() - before;
gcs.disconnect();
if (inspector) {
  const { profile } = await inspector.post('HeapProfiler.stopSampling');
  await writeFile(values['heap-profile'] as string, JSON.stringify(profile));
  inspector.disconnect();
}

const speaks = Array.from({ length: turns }, (_, n) => plans[(warm + n) % plans.length]?.texts.length ?? 0).reduce((a, b) => a + b, 0);
const lines = [`reader ${reader}, stream ${path.basename(values.stream)}: ${turns} turns, ${tokens} tokens, ${speaks} speaks`];
if (values.alloc) {
  lines.push(
    scavenges > 0
      ? `  ${scavenges} GCs in the measured turns: run with --expose-gc --min-semi-space-size=64 --max-semi-space-size=64 (or fewer --turns)`
      : `  allocated ${(allocated / tokens).toFixed(0)} bytes per token (${(allocated / 1024).toFixed(0)} KB over the measured turns)`,
  );
}
console.log(lines.join('\n'));
await hangUp();
await target.close();
await new Promise((resolve) => llm.close(resolve));
process.exit(0);
