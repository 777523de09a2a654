import type { CallTracing } from '../call/ports/tracing.js';
import type { Redact } from '../call/ports/redaction.js';
import type { Logger } from '../logger.js';
import type { DeliveryTracing } from '../reports/delivery-tracing.js';

/** Tracing as the rest of Hotline holds it: off (start-tracing.ts' NO_TRACING) or OpenTelemetry's (otel-tracing.ts). */
export interface Tracing {
  /** Where the calls are traced. */
  readonly calls: CallTracing;
  /** Where the report webhook's attempts are traced. */
  readonly deliveries: DeliveryTracing;
  /** Sends the spans still queued and stops, waiting `timeoutMs` at most; never rejects. */
  close(timeoutMs: number): Promise<void>;
}

export interface TracingContext {
  readonly logger: Logger;
  /** Applied to every word that reaches a span (with OTEL_INCLUDE_CONTENT=true). */
  readonly redact: Redact;
  /** The LLM's OPENAI_BASE_URL, which names its provider (gen_ai.provider.name). */
  readonly llmBaseUrl: string | undefined;
}
