import { APIConnectionError, APIError } from 'openai';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LlmEmptyReplyError, LlmThinkingTimeoutError, LlmTimeoutError, LlmTotalTimeoutError } from '../errors.js';
import type { CallMetrics } from '../call/ports/call-metrics.js';
import type { TokenUsage } from '../llm/usage.js';
import { LlmStreamError } from '../llm/sse-chunks.js';

// Seconds; voice latency matters from tens of milliseconds to a few seconds.
const LATENCY_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8];

export type LlmErrorKind = 'timeout' | 'thinking_timeout' | 'total_timeout' | 'stream' | 'rate_limit' | 'server' | 'connection' | 'bad_request' | 'empty' | 'other';

/** What operators see at GET /metrics, in Prometheus text format. */
export class Metrics implements CallMetrics {
  readonly registry = new Registry();
  private readonly turns: Counter;
  private readonly firstSpeak: Histogram;
  private readonly llmFirstToken: Histogram;
  private readonly bargeIns: Counter;
  private readonly llmErrors: Counter<'kind'>;
  private readonly webhookAnswers: Counter<'status'>;
  private readonly toolLatency: Histogram<'tool' | 'outcome'>;
  private readonly toolFailures: Counter<'tool' | 'outcome'>;
  private readonly llmTokens: Counter<'model' | 'kind'>;
  private readonly llmCost: Counter<'model'>;

  private activeCalls: () => number = () => 0;

  constructor() {
    const registers = [this.registry];
    const calls = (): number => this.activeCalls();
    collectDefaultMetrics({ register: this.registry, prefix: 'hotline_' });
    new Gauge({
      name: 'hotline_active_calls',
      help: 'Calls in progress',
      registers,
      collect() {
        this.set(calls());
      },
    });
    this.turns = new Counter({ name: 'hotline_turns_total', help: 'LLM turns started', registers });
    this.llmTokens = new Counter({
      name: 'hotline_llm_tokens_total',
      help: 'LLM tokens as the servers counted them: prompt (cached among them), completion (reasoning among them)',
      labelNames: ['model', 'kind'],
      registers,
    });
    this.llmCost = new Counter({ name: 'hotline_llm_cost_usd_total', help: 'What the LLM tokens cost, in USD, at the price table\'s prices', labelNames: ['model'], registers });
    this.firstSpeak = new Histogram({
      name: 'hotline_first_speak_seconds',
      help: "From the caller's words arriving to the first sentence of the reply leaving Hotline",
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.llmFirstToken = new Histogram({
      name: 'hotline_llm_first_token_seconds',
      help: 'From the LLM request to its first token',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.bargeIns = new Counter({ name: 'hotline_barge_ins_total', help: 'Callers interrupting Hotline', registers });
    this.llmErrors = new Counter({
      name: 'hotline_llm_errors_total',
      help: 'Failed LLM turns by kind',
      labelNames: ['kind'],
      registers,
    });
    this.toolLatency = new Histogram({
      name: 'hotline_tool_seconds',
      help: "From the model's call of a business tool (HTTP or MCP) to its result, by tool and outcome",
      labelNames: ['tool', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20],
      registers,
    });
    this.toolFailures = new Counter({
      name: 'hotline_tool_failures_total',
      help: 'Business tool runs that did not succeed, by tool and outcome (error, timeout, invalid, unavailable)',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.webhookAnswers = new Counter({
      name: 'hotline_webhook_answers_total',
      help: 'Webhook answers by HTTP status',
      labelNames: ['status'],
      registers,
    });
  }

  /** The calls in progress, read at each scrape. */
  countCalls(activeCalls: () => number): void {
    this.activeCalls = activeCalls;
  }

  turnStarted(): void {
    this.turns.inc();
  }

  firstSpeakSent(ms: number): void {
    this.firstSpeak.observe(ms / 1000);
  }

  /** One request's tokens, and their cost when the model has a price. */
  llmUsed(model: string, usage: TokenUsage, costUsd: number | undefined): void {
    this.llmTokens.inc({ model, kind: 'prompt' }, usage.prompt);
    this.llmTokens.inc({ model, kind: 'completion' }, usage.completion);
    if (usage.cached !== undefined) this.llmTokens.inc({ model, kind: 'cached' }, usage.cached);
    if (usage.reasoning !== undefined) this.llmTokens.inc({ model, kind: 'reasoning' }, usage.reasoning);
    if (costUsd !== undefined) this.llmCost.inc({ model }, costUsd);
  }

  llmFirstTokenArrived(ms: number): void {
    this.llmFirstToken.observe(ms / 1000);
  }

  bargedIn(): void {
    this.bargeIns.inc();
  }

  llmFailed(error: unknown): void {
    this.llmErrors.inc({ kind: llmErrorKind(error) });
  }

  /** A business tool ran; an interrupted run (`aborted`) is not the tool's failure. */
  toolRan(tool: string, ms: number, outcome: string): void {
    this.toolLatency.observe({ tool, outcome }, ms / 1000);
    if (outcome !== 'ok' && outcome !== 'aborted') this.toolFailures.inc({ tool, outcome });
  }

  webhookAnswered(status: number): void {
    this.webhookAnswers.inc({ status: String(status) });
  }

  /** The store's write queue, read at scrape time: how far behind the database the record is. */
  watchStore(backlog: () => { pending: number; oldestMs: number }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'hotline_store_pending_writes',
      help: 'Calls whose latest record waits for the database (journalled, written when it takes writes again)',
      registers,
      collect() {
        this.set(backlog().pending);
      },
    });
    new Gauge({
      name: 'hotline_store_oldest_pending_seconds',
      help: 'How long the oldest record waiting for the database has waited',
      registers,
      collect() {
        this.set(backlog().oldestMs / 1000);
      },
    });
    this.storeWriteFailures = new Counter({ name: 'hotline_store_write_failures_total', help: 'Writes the database refused (each is tried again)', registers });
  }

  private storeWriteFailures: Counter | undefined;

  storeWriteFailed(): void {
    this.storeWriteFailures?.inc();
  }
}

export function llmErrorKind(error: unknown): LlmErrorKind {
  if (error instanceof LlmTimeoutError) return 'timeout';
  if (error instanceof LlmThinkingTimeoutError) return 'thinking_timeout';
  if (error instanceof LlmTotalTimeoutError) return 'total_timeout';
  if (error instanceof LlmStreamError) return 'stream';
  if (error instanceof LlmEmptyReplyError) return 'empty';
  if (error instanceof APIConnectionError) return 'connection';
  if (error instanceof APIError) {
    if (error.status === 429) return 'rate_limit';
    if ((error.status ?? 0) >= 500) return 'server';
    if ((error.status ?? 0) >= 400) return 'bad_request';
  }
  return 'other';
}
