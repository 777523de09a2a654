/**
 * One Hotline (on its own thread, see hotline-worker.ts, or as a process of
 * its own, see hotline-process.ts) and one scripted OpenAI-compatible server,
 * with traced replies (see replies.ts). The LLM server runs on this thread
 * with the callers by default; with `llmThread` it gets a worker thread too.
 * Times taken on other threads are moved onto this thread's clock (clock.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startScriptedLlmServer, type RecordedRequest, type RecordedToken, type RequestOutcome } from '../src/llm/scripted-server.js';
import { clockOffset, now } from './clock.js';
import type { HotlineUnderTest } from './hotline-probes.js';
import { HotlineThread } from './hotline-thread.js';
import type { RawReaderWorkerData } from './raw-reader-worker.js';
import type { LlmWorkerCommand, LlmWorkerData, LlmWorkerMessage } from './llm-worker.js';
import { EXPECTED_SPEAKS, replyText, requestedTag, tagFor, tagOf, templateOf, UNTRACED_REPLY } from './replies.js';
import { startingNice, takeNice, yieldCpuToHotline } from './priority.js';
import { DASHBOARD_TOKEN, seedCalls } from './dashboard-load.js';
import { spawnWorker } from './spawn-worker.js';
import { ThreadProcess, type WorkerLike } from './thread-process.js';

/** A speak as its caller heard it. */
export interface HeardSpeak {
  readonly text: string;
  /** The caller's call id. */
  readonly caller: string;
  /** The speak's voice, as the prompts in use set it (a language folder's system.md); undefined: the service's default. */
  readonly tts: { readonly language?: unknown } | undefined;
}

/** A reply the bench asked for, and what happened to it. */
export interface ReplyInfo {
  readonly tag: string;
  readonly template: number;
  readonly expected: number;
  /** When the client sent the user_speak that asked for it. */
  sentAt: number;
  /** The LLM request arrived for it. */
  requested: boolean;
  /** When the LLM server began to receive that request (its headers read). */
  requestedAt: number | undefined;
  /** Token texts and write times: filled as they are written (own thread), or when the stream ended (LLM thread). */
  tokens: readonly RecordedToken[];
  firstTokenAt: number | undefined;
  /** When the LLM server saw the client close the stream (undefined if it never did). */
  closedAt: number | undefined;
  /** How the LLM stream ended, once it has. */
  outcome: RequestOutcome | undefined;
  /** Arrival time at the client of each speak of this reply, in order. */
  readonly arrivals: number[];
  /** When each speak left Hotline (its transport's send returned), in order; filled from a probe's records. */
  readonly left: number[];
  /** For each speak, when the LLM socket's data last read before it reached Hotline's code (NaN where not known). */
  readonly read: number[];
  /** Resolved once `expected` speaks have arrived. */
  complete: (() => void) | undefined;
}

export interface FixtureOptions {
  ttftMs: number;
  tokenDelayMs: number;
  /** Run the scripted LLM server on a worker thread instead of the callers' thread. */
  llmThread: boolean;
  /** The callers' and the LLM server's threads drop to the lowest CPU priority once Hotline runs (see priority.ts). */
  yieldCpu: boolean;
  /**
   * Instead, the callers' thread runs at this nice value once Hotline runs: below Hotline's (ahead
   * of it) takes each speak's arrival and each send's moment on time however busy Hotline is, as
   * the voice service's own hosts would (the outside phase).
   */
  callersNice?: number;
  /**
   * With `llmThread`, the LLM server's thread runs at this nice value instead: below Hotline's (a
   * higher priority) keeps its tokens on time however busy Hotline is, as a remote provider's are.
   */
  llmNice?: number;
  /** Ended calls written to Hotline's database before it starts, and the dashboard turned on (0: neither). */
  storedCalls?: number;
  /** More of Hotline's environment, over the bench's own: DATABASE_FILE or DATABASE_URL, to run it on another store. */
  env?: Readonly<Record<string, string>>;
  /** Starts Hotline (default: on a thread of its own, HotlineThread). */
  launch?: HotlineLauncher;
  /** Also start the floor of first-speak overhead (raw-reader.ts) on a thread of its own, at Hotline's priority. */
  floor?: boolean;
  /**
   * The LLM server and the floor each on a thread of a process of its own (thread-process.ts)
   * instead of the callers' process: the outside phase's three processes. Implies `llmThread`.
   */
  apart?: boolean;
}

/** Starts Hotline with `env`, running at the nice value `nice` (the bench's before its callers gave way; see takeNice). */
export type HotlineLauncher = (env: Record<string, string>, nice: number | undefined) => Promise<HotlineUnderTest>;

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
  /** Called with each speak of a traced reply as it arrives at its caller (after it is noted on the reply). */
  onSpeak: ((reply: ReplyInfo, speak: HeardSpeak) => void) | undefined;
  private nextId = 0;
  private llm: LlmSide | undefined;
  private hotlineRef: HotlineUnderTest | undefined;
  /** The raw reader the first-speak figures are set against, when asked for (FixtureOptions.floor). */
  floor: HotlineUnderTest | undefined;
  private transcriptsDir = '';
  /** The nice value the callers' thread runs at, if it gave way to Hotline. */
  callersNice: number | undefined;
  /** The nice value the LLM server's thread runs at, when it has a thread of its own and set one. */
  llmNice: number | undefined;

  static async start(options: FixtureOptions): Promise<BenchFixture> {
    const fixture = new BenchFixture();
    fixture.llm = options.llmThread || options.apart ? await fixture.startWorkerLlm(options) : await fixture.startLocalLlm(options);
    fixture.transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-bench-'));
    const storedCalls = options.storedCalls ?? 0;
    if (storedCalls > 0) await seedCalls(path.join(fixture.transcriptsDir, 'hotline.db'), storedCalls);
    const launch = options.launch ?? ((env, nice) => HotlineThread.start(env, nice));
    fixture.hotlineRef = await launch({
      ...(storedCalls > 0 ? { ADMIN_TOKEN: DASHBOARD_TOKEN } : {}),
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
      // The bench measures the call path; reports are asked for after a call, of another LLM in production.
      REPORT_FIELDS: 'false',
      // An overloaded step of the capacity ladder must show up as latency, not as apologies or refusals.
      LLM_TIMEOUT_MS: '60000',
      LLM_TOTAL_TIMEOUT_MS: '120000',
      MAX_CALLS: '100000',
      // The idle callers' process exits without closing its sockets: their calls must end then, not wait
      // for a reconnect and all end at once in the middle of the next phase.
      WS_RECONNECT_GRACE_MS: '0',
      ...options.env,
    }, startingNice());
    if (options.floor) {
      const data: RawReaderWorkerData = { role: 'hotline-bench-floor', llmBaseUrl: fixture.llm.baseURL, nice: startingNice() };
      fixture.floor = await HotlineThread.spawn('raw-reader-worker', data, options.apart ? ThreadProcess.spawn : spawnWorker);
    }
    // After Hotline's (and the floor's) thread has started: a thread is born with its creator's priority.
    if (options.callersNice !== undefined) fixture.callersNice = takeNice(options.callersNice);
    else if (options.yieldCpu) fixture.callersNice = yieldCpuToHotline();
    return fixture;
  }

  get hotline(): HotlineUnderTest {
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
      requestedAt: undefined,
      tokens: [],
      firstTokenAt: undefined,
      closedAt: undefined,
      outcome: undefined,
      arrivals: [],
      left: [],
      read: [],
      complete: undefined,
    };
    this.replies.set(tag, reply);
    return reply;
  }

  /** Records a speak's arrival against its reply; undefined for untraced speech (the greeting). `heard`: who heard it, for onSpeak. */
  noteSpeak(text: string, at: number, heard?: Omit<HeardSpeak, 'text'>): ReplyInfo | undefined {
    const tag = tagOf(text);
    const reply = tag === undefined ? undefined : this.replies.get(tag);
    if (!reply) return undefined;
    reply.arrivals.push(at);
    if (heard) this.onSpeak?.(reply, { text, ...heard });
    if (reply.arrivals.length === reply.expected) reply.complete?.();
    return reply;
  }

  /** Records the speaks a probe saw leave Hotline against their replies. */
  noteLeft(speaks: readonly { text: string; at: number; readAt?: number | undefined }[]): void {
    for (const { text, at, readAt } of speaks) {
      const tag = tagOf(text);
      const reply = tag === undefined ? undefined : this.replies.get(tag);
      reply?.left.push(at);
      reply?.read.push(readAt ?? Number.NaN);
    }
  }

  /** Forgets traced replies, so a long phase does not keep every token of the previous one alive. */
  reset(): void {
    this.replies.clear();
    this.llm?.reset();
  }

  async close(): Promise<void> {
    await this.hotlineRef?.close();
    await this.floor?.close();
    await this.llm?.close();
    if (this.transcriptsDir) await rm(this.transcriptsDir, { recursive: true, force: true });
  }

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
          reply.requestedAt = record.receivedAt;
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
    const data: LlmWorkerData = {
      role: 'hotline-bench-llm',
      ttftMs: options.ttftMs,
      tokenDelayMs: options.tokenDelayMs,
      yieldCpu: options.yieldCpu,
      nice: options.llmNice,
    };
    const worker: WorkerLike = options.apart ? ThreadProcess.spawn('llm-worker', data) : spawnWorker('llm-worker', data);
    const ready = await new Promise<Extract<LlmWorkerMessage, { kind: 'ready' }>>((resolve, reject) => {
      worker.once('error', reject);
      worker.on('message', function awaitReady(message: LlmWorkerMessage) {
        if (message.kind !== 'ready') return;
        worker.off('message', awaitReady);
        worker.off('error', reject);
        resolve(message);
      });
    });
    this.llmNice = ready.nice;
    // Worker times + shift = this thread's clock.
    const shift = clockOffset() - ready.clockOffset;
    worker.on('message', (message: LlmWorkerMessage) => {
      if (message.kind === 'ready') return;
      const reply = this.replies.get(message.tag);
      if (!reply) return;
      switch (message.kind) {
        case 'request':
          reply.requested = true;
          reply.requestedAt = message.at + shift;
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
