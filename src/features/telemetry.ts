/**
 * What Hotline tells its operators about itself: Prometheus metrics always, OpenTelemetry traces of
 * every call when an OTLP endpoint is configured (otherwise the SDK is never loaded).
 */
import type { Redact } from '../call/ports/redaction.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { Metrics } from '../telemetry/metrics.js';
import { startTracing } from '../telemetry/start-tracing.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { OpenedStack } from './opened.js';

/** A stop waits at most this long for the last spans to reach the collector. */
const TRACING_CLOSE_MS = 3_000;

export interface Telemetry {
  readonly metrics: Metrics;
  readonly tracing: Tracing;
}

export async function openTelemetry(config: Config, logger: Logger, redact: Redact, llmBaseUrl: string | undefined, opened: OpenedStack): Promise<Telemetry> {
  const tracing = await startTracing(config.tracing, { logger, redact, llmBaseUrl });
  // Pushed early, so closed late: every call, tool run and report delivery has ended its spans by then.
  opened.push('tracing', { close: () => tracing.close(TRACING_CLOSE_MS) });
  return { metrics: new Metrics(), tracing };
}
