import type { TokenUsage } from '../../llm/usage.js';

/**
 * What a call counts, as the call core reports it. telemetry/metrics.ts turns it into Prometheus'
 * counters and histograms; a test or a tool may count nothing.
 */
export interface CallMetrics {
  turnStarted(): void;
  firstSpeakSent(ms: number): void;
  llmUsed(model: string, usage: TokenUsage, costUsd: number | undefined): void;
  llmFirstTokenArrived(ms: number): void;
  bargedIn(): void;
  llmFailed(error: unknown): void;
  toolRan(tool: string, ms: number, outcome: string): void;
}
