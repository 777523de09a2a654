/**
 * One Hotline and one scripted OpenAI-compatible server, with traced replies
 * (see replies.ts). The LLM server runs on this thread by default, sharing
 * the event loop with Hotline and the callers; with `llmThread` it runs on a
 * worker thread of the same process, and its times are moved onto this
 * thread's clock through hrtime, which both threads read alike.
 */
import diagnostics from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { startScriptedLlmServer, type RecordedRequest, type RecordedToken, type RequestOutcome } from '../llm/scripted-server.js';
import { startHotline, type RunningHotline } from '../server.js';
import { clockOffset, type LlmWorkerCommand, type LlmWorkerData, type LlmWorkerMessage } from './llm-worker.js';
import { EXPECTED_SPEAKS, replyText, requestedTag, tagFor, tagOf, templateOf, UNTRACED_REPLY } from './replies.js';

/** One clock for everything, the one the scripted server stamps tokens with. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A reply the bench asked for, and what happened to it. */
export interface ReplyInfo {
  readonly tag: string;
  readonly template: number;
  readonly expected: number;
  /** When the client sent the user_speak that asked for it. */
  sentAt: number;
  /** The LLM request arrived for it. */
  requested: boolean;
  /** Token texts and write times: filled as they are written (own thread), or when the stream ended (LLM thread). */
  tokens: readonly RecordedToken[];
  firstTokenAt: number | undefined;
  /** When the LLM server saw the client close the stream (undefined if it never did). */
  closedAt: number | undefined;
  /** How the LLM stream ended, once it has. */
  outcome: RequestOutcome | undefined;
  /** Arrival time at the client of each speak of this reply, in order. */
  readonly arrivals: number[];
  /** When each speak left Hotline's call core, in order (only while a core probe is installed). */
  readonly coreSent: number[];
  /** Resolved once `expected` speaks have arrived. */
  complete: (() => void) | undefined;
}

export interface FixtureOptions {
  ttftMs: number;
  tokenDelayMs: number;
  /** Run the scripted LLM server on a worker thread instead of Hotline's event loop. */
  llmThread: boolean;
}

interface LlmSide {
  readonly baseURL: string;
  setFast(on: boolean): void;
  reset(): void;
  close(): Promise<void>;
}

export class BenchFixture {
  readonly replies = new Map<string, ReplyInfo>();
  /** Called when the first token of a traced reply has been written. */
  onFirstToken: ((reply: ReplyInfo) => void) | undefined;
  /** Called when any client socket of this thread is destroyed (Hotline's LLM connections among them). */
  onSocketDestroy: (() => void) | undefined;
  private nextId = 0;
  private llm: LlmSide | undefined;
  private hotlineRef: RunningHotline | undefined;
  private transcriptsDir = '';

  static async start(options: FixtureOptions): Promise<BenchFixture> {
    const fixture = new BenchFixture();
    // Watch every client socket from the start: Hotline's HTTP client keeps its LLM connections alive across phases.
    diagnostics.subscribe('net.client.socket', fixture.watchSocket);
    fixture.llm = options.llmThread ? await fixture.startWorkerLlm(options) : await fixture.startLocalLlm(options);
    fixture.transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-'));
    const config = loadConfig({
      NODE_ENV: 'bench',
      HOST: '127.0.0.1',
      PORT: '0',
      OPENAI_API_KEY: 'bench',
      OPENAI_BASE_URL: fixture.llm.baseURL,
      LLM_MODEL: 'bench-model',
      TRANSCRIPTS_DIR: fixture.transcriptsDir,
      RATE_LIMIT_WEBHOOK_PER_MINUTE: '0',
      RATE_LIMIT_WS_PER_MINUTE: '0',
      WEBHOOK_REPLY: 'sentences',
      // An overloaded step of the capacity ladder must show up as latency, not as apologies or refusals.
      LLM_TIMEOUT_MS: '60000',
      LLM_TOTAL_TIMEOUT_MS: '120000',
      MAX_CALLS: '100000',
    });
    fixture.hotlineRef = await startHotline(config, pino({ level: 'silent' }), { watchPrompts: false });
    return fixture;
  }

  get hotline(): RunningHotline {
    if (!this.hotlineRef) throw new Error('fixture not started');
    return this.hotlineRef;
  }

  /** While on, replies stream as fast as possible: for warming up the JIT. */
  set fast(on: boolean) {
    this.llm?.setFast(on);
  }

  /** A new traced reply; a user_speak with `question(reply.tag)` asks for it. */
  newReply(): ReplyInfo {
    const tag = tagFor(this.nextId++);
    const template = templateOf(tag);
    const reply: ReplyInfo = {
      tag,
      template,
      expected: EXPECTED_SPEAKS[template] ?? 0,
      sentAt: 0,
      requested: false,
      tokens: [],
      firstTokenAt: undefined,
      closedAt: undefined,
      outcome: undefined,
      arrivals: [],
      coreSent: [],
      complete: undefined,
    };
    this.replies.set(tag, reply);
    return reply;
  }

  /** Records a speak's arrival against its reply; undefined for untraced speech (the greeting). */
  noteSpeak(text: string, at: number): ReplyInfo | undefined {
    const tag = tagOf(text);
    const reply = tag === undefined ? undefined : this.replies.get(tag);
    if (!reply) return undefined;
    reply.arrivals.push(at);
    if (reply.arrivals.length === reply.expected) reply.complete?.();
    return reply;
  }

  /** Records a speak leaving Hotline's call core against its reply. */
  noteCoreSpeak(text: string, at: number): void {
    const tag = tagOf(text);
    if (tag !== undefined) this.replies.get(tag)?.coreSent.push(at);
  }

  /** Forgets traced replies, so a long phase does not keep every token of the previous one alive. */
  reset(): void {
    this.replies.clear();
    this.llm?.reset();
  }

  async close(): Promise<void> {
    diagnostics.unsubscribe('net.client.socket', this.watchSocket);
    await this.hotlineRef?.close();
    await this.llm?.close();
    if (this.transcriptsDir) await rm(this.transcriptsDir, { recursive: true, force: true });
  }

  private readonly watchSocket = (message: unknown): void => {
    const { socket } = message as { socket: Socket };
    const destroy = socket.destroy;
    const observe = (): void => this.onSocketDestroy?.();
    socket.destroy = function destroyObserved(this: Socket, error?: Error) {
      observe();
      return destroy.call(this, error);
    };
  };

  private startLocalLlm(options: FixtureOptions): Promise<LlmSide> {
    let fast = false;
    let server: Awaited<ReturnType<typeof startScriptedLlmServer>> | undefined;
    const byRecord = new WeakMap<RecordedRequest, ReplyInfo>();
    return startScriptedLlmServer({
      host: '127.0.0.1',
      ttftMs: options.ttftMs,
      tokenDelayMs: options.tokenDelayMs,
      script: (body, { index, signal }) => {
        const tag = requestedTag(body);
        const reply = tag === undefined ? undefined : this.replies.get(tag);
        if (!reply || !server) return { content: UNTRACED_REPLY };
        reply.requested = true;
        // The server publishes the record and calls the script in the same tick, so it is the newest one.
        const record = server.requests.at(-1);
        if (record?.index === index) {
          reply.tokens = record.tokens;
          byRecord.set(record, reply);
          void record.ended.then((outcome) => (reply.outcome = outcome));
        }
        // The abort signal fires synchronously in the response's 'close' handler: the stream's closing moment.
        signal.addEventListener('abort', () => (reply.closedAt = now()), { once: true });
        const content = replyText(reply.tag);
        return fast ? { content, ttftMs: 1, tokenDelayMs: 1 } : { content };
      },
      onToken: (request, _token, at) => {
        if (request.tokens.length !== 1) return;
        const reply = byRecord.get(request);
        if (!reply) return;
        reply.firstTokenAt = at;
        this.onFirstToken?.(reply);
      },
    }).then((started) => {
      server = started;
      return {
        baseURL: started.baseURL,
        setFast: (on: boolean) => (fast = on),
        reset: () => (started.requests.length = 0),
        close: () => started.close(),
      };
    });
  }

  private async startWorkerLlm(options: FixtureOptions): Promise<LlmSide> {
    const data: LlmWorkerData = { role: 'hotline-bench-llm', ttftMs: options.ttftMs, tokenDelayMs: options.tokenDelayMs };
    const worker = spawnWorker(data);
    const ready = await new Promise<Extract<LlmWorkerMessage, { kind: 'ready' }>>((resolve, reject) => {
      worker.once('error', reject);
      worker.on('message', function awaitReady(message: LlmWorkerMessage) {
        if (message.kind !== 'ready') return;
        worker.off('message', awaitReady);
        worker.off('error', reject);
        resolve(message);
      });
    });
    // Worker times + shift = this thread's clock.
    const shift = clockOffset() - ready.clockOffset;
    worker.on('message', (message: LlmWorkerMessage) => {
      if (message.kind === 'ready') return;
      const reply = this.replies.get(message.tag);
      if (!reply) return;
      switch (message.kind) {
        case 'request':
          reply.requested = true;
          return;
        case 'first':
          reply.firstTokenAt = message.at + shift;
          this.onFirstToken?.(reply);
          return;
        case 'closed':
          reply.closedAt = message.at + shift;
          return;
        case 'ended':
          reply.tokens = message.texts.map((text, i) => ({ text, at: (message.ats[i] ?? Number.NaN) + shift }));
          reply.outcome = message.outcome as RequestOutcome;
          return;
      }
    });
    worker.on('error', (error) => {
      console.error('LLM worker failed:', error);
    });
    const command = (message: LlmWorkerCommand): void => worker.postMessage(message);
    return {
      baseURL: ready.baseURL,
      setFast: (on) => command({ kind: 'fast', on }),
      reset: () => command({ kind: 'reset' }),
      close: async () => {
        await worker.terminate();
      },
    };
  }
}

/**
 * Starts llm-worker on a thread. Under tsx the loader hooks of this thread do
 * not reach a worker, so a small bootstrap registers tsx there first.
 */
function spawnWorker(data: LlmWorkerData): Worker {
  const typescript = import.meta.url.endsWith('.ts');
  const entry = new URL(`./llm-worker.${typescript ? 'ts' : 'js'}`, import.meta.url);
  if (!typescript) return new Worker(fileURLToPath(entry), { workerData: data });
  const tsxApi = pathToFileURL(fileURLToPath(import.meta.resolve('tsx/esm/api'))).href;
  const bootstrap =
    `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })` +
    `.catch((error) => { setImmediate(() => { throw error; }); });`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}
