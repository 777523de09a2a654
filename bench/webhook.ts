/**
 * The webhook transport: throughput of the cheapest answer (204) over
 * keep-alive connections, and how soon a user_speak is answered with the
 * first sentence in WEBHOOK_REPLY=sentences mode.
 */
import { Agent, request } from 'node:http';
import { completingTokenIndices } from './baselines.js';
import { now, sleep } from './clock.js';
import type { BenchFixture, ReplyInfo } from './llm-fixture.js';
import { question, tagOf } from './replies.js';
import { differences, seededRandom, summarize, type Summary } from './stats.js';

interface Answer {
  status: number;
  body: string;
}

/**
 * Idle keep-alive sockets are dropped before the server's 5 s keep-alive timeout: a request sent on a
 * socket the server is closing at that moment fails with "socket hang up" (seen once in a full run).
 */
const IDLE_SOCKET_MS = 4_000;

function post(agent: Agent, port: number, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/webhook',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function speakText(answer: Answer): string | undefined {
  if (answer.status !== 200) return undefined;
  const action = JSON.parse(answer.body) as { type?: unknown; text?: unknown };
  return action.type === 'speak' && typeof action.text === 'string' ? action.text : undefined;
}

const event = (type: string, id: string, fields: Record<string, unknown> = {}): string =>
  JSON.stringify({ type, session: { id }, ...fields });

/** Starts a webhook session and plays its greeting, so nothing is pending afterwards. */
async function startSession(agent: Agent, port: number, id: string): Promise<void> {
  const greeting = await post(
    agent,
    port,
    JSON.stringify({ type: 'session_start', session: { id, direction: 'inbound', from_phone_number: '4915112345678' } }),
  );
  const text = speakText(greeting);
  if (text === undefined) throw new Error(`session_start answered ${greeting.status}`);
  await post(agent, port, event('assistant_speak', id, { text, duration_ms: 0 }));
  await post(agent, port, event('assistant_speech_ended', id));
}

export interface WebhookOptions {
  loops: number;
  durationMs: number;
  sessions: number;
  turns: number;
  msPerChar: number;
  thinkMs: number;
  seed: number;
}

export interface WebhookResult {
  /** 204 answers to assistant_speech_ended per second, all loops together. */
  rps: number;
  loops: number;
  durationS: number;
  requests: number;
  /** Answers in the throughput run that were not 204 (should be 0). */
  unexpected: number;
  latencyMs: Summary;
  userSpeak: {
    samples: number;
    /** user_speak sent → the answer with the first sentence received. */
    rawMs: Summary;
    /** user_speak sent → the LLM wrote the token completing that sentence, on the same stream. */
    llmFirstSentenceMs: Summary;
    /** The difference per sample: what the webhook round trip and Hotline add. */
    overheadMs: Summary;
    /** Turns whose first answer was not the reply's first sentence. */
    failed: number;
  };
}

async function throughput(fixture: BenchFixture, options: WebhookOptions): Promise<Omit<WebhookResult, 'userSpeak'>> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.loops, timeout: IDLE_SOCKET_MS });
  const { port } = fixture.hotline;
  try {
    const ids = Array.from({ length: options.loops }, (_, i) => `wh-rps-${i}`);
    await Promise.all(ids.map((id) => startSession(agent, port, id)));
    const latencies: number[] = [];
    let unexpected = 0;
    const started = now();
    const deadline = started + options.durationMs;
    await Promise.all(
      ids.map(async (id) => {
        const body = event('assistant_speech_ended', id);
        while (now() < deadline) {
          const sent = now();
          const answer = await post(agent, port, body);
          latencies.push(now() - sent);
          if (answer.status !== 204) unexpected++;
        }
      }),
    );
    const durationS = (now() - started) / 1000;
    await Promise.all(ids.map((id) => post(agent, port, event('session_end', id))));
    return {
      rps: latencies.length / durationS,
      loops: options.loops,
      durationS,
      requests: latencies.length,
      unexpected,
      latencyMs: summarize(latencies),
    };
  } finally {
    agent.destroy();
  }
}

async function userSpeakLatency(fixture: BenchFixture, options: WebhookOptions): Promise<WebhookResult['userSpeak']> {
  fixture.reset();
  const agent = new Agent({ keepAlive: true, maxSockets: options.sessions * 2, timeout: IDLE_SOCKET_MS });
  const { port } = fixture.hotline;
  const turns: { reply: ReplyInfo; answeredAt: number; firstOk: boolean }[] = [];
  try {
    await Promise.all(
      Array.from({ length: options.sessions }, async (_, i) => {
        const id = `wh-us-${i}`;
        const random = seededRandom(options.seed * 300_007 + i + 1);
        await startSession(agent, port, id);
        for (let turn = 0; turn < options.turns; turn++) {
          await sleep(random() * 2 * options.thinkMs);
          const reply = fixture.newReply();
          reply.sentAt = now();
          const first = await post(agent, port, event('user_speak', id, { text: question(reply.tag), barged_in: false }));
          const answeredAt = now();
          let text = speakText(first);
          const firstOk = text !== undefined && tagOf(text) === reply.tag;
          // Play the reply out the way the service does: each answer to assistant_speech_ended is the next part.
          while (text !== undefined) {
            await post(agent, port, event('assistant_speak', id, { text, duration_ms: text.length * options.msPerChar }));
            await sleep(text.length * options.msPerChar);
            text = speakText(await post(agent, port, event('assistant_speech_ended', id)));
          }
          turns.push({ reply, answeredAt, firstOk });
        }
        await post(agent, port, event('session_end', id));
      }),
    );
  } finally {
    agent.destroy();
  }
  // An LLM server on its own thread reports a stream's tokens when it has ended: give the last reports time to land.
  await sleep(100);
  const raw: number[] = [];
  const llm: number[] = [];
  let failed = 0;
  for (const { reply, answeredAt, firstOk } of turns) {
    const completing = completingTokenIndices(reply.tokens.map((t) => t.text))[0];
    const completedAt = completing === undefined ? undefined : reply.tokens[completing]?.at;
    if (!firstOk || completedAt === undefined) {
      failed++;
      continue;
    }
    raw.push(answeredAt - reply.sentAt);
    llm.push(completedAt - reply.sentAt);
  }
  fixture.reset();
  return {
    samples: raw.length,
    rawMs: summarize(raw),
    llmFirstSentenceMs: summarize(llm),
    overheadMs: summarize(differences(raw, llm)),
    failed,
  };
}

export async function runWebhook(fixture: BenchFixture, options: WebhookOptions): Promise<WebhookResult> {
  const rps = await throughput(fixture, options);
  const userSpeak = await userSpeakLatency(fixture, options);
  return { ...rps, userSpeak };
}
