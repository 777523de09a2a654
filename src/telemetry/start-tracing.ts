/**
 * Tracing, when the configuration asks for it. OpenTelemetry is loaded here, by a dynamic import,
 * and only then: a Hotline that traces nothing holds the no-op ports and never loads the SDK, so
 * its calls pay nothing for tracing being possible.
 */
import { NO_CALL_TRACING } from '../call/ports/tracing.js';
import { NO_DELIVERY_TRACING } from '../reports/delivery-tracing.js';
import type { Tracing, TracingContext } from './tracing.js';
import type { TracingSettings } from './tracing-settings.js';

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
