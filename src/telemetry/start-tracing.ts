/**
 * Tracing, when the configuration asks for it. OpenTelemetry is loaded here, by a dynamic import,
 * and only then: a Hotline that traces nothing holds the no-op ports and never loads the SDK, so
 * its calls pay nothing for tracing being possible.
 */
import { NO_CALL_TRACING, type CallTracing } from '../call/ports/tracing.js';
import type { Redact } from '../call/ports/redaction.js';
import type { Logger } from '../logger.js';
import { NO_DELIVERY_TRACING, type DeliveryTracing } from '../reports/delivery-tracing.js';
import type { TracingSettings } from './tracing-settings.js';

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

export const NO_TRACING: Tracing = Object.freeze({
  calls: NO_CALL_TRACING,
  deliveries: NO_DELIVERY_TRACING,
  close: () => Promise.resolve(),
});

export async function startTracing(settings: TracingSettings | undefined, context: TracingContext): Promise<Tracing> {
  if (!settings) return NO_TRACING;
  const { openTelemetryTracing } = await import('./otel-tracing.js');
  return openTelemetryTracing(settings, context);
}
