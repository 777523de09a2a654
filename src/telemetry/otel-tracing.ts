/**
 * OpenTelemetry assembled for Hotline: spans batched off the call path (BatchSpanProcessor) and
 * POSTed as OTLP/HTTP JSON to the configured collector. Everything the SDK would otherwise read from
 * process.env on its own — sampler, limits, batching, the exporter's URL and headers — is given
 * here explicitly from Hotline's configuration, so what a test or a .env file says is what happens.
 * Loaded only by startTracing, when tracing is on.
 */
import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { providerNameOf } from './attributes.js';
import { OtelCallTracing } from './call-tracer.js';
import { OtelDeliveryTracing } from './delivery-tracer.js';
import { EndedCalls } from './ended-calls.js';
import { ReportingExporter } from './reporting-exporter.js';
import type { Tracing, TracingContext } from './tracing.js';
import type { TracingSettings } from './tracing-settings.js';

/** One POST to the collector may take this long; a batch that fails is dropped, never the call's time. */
const EXPORT_TIMEOUT_MS = 10_000;
/**
 * Spans waiting for export at most; beyond, new ones are dropped (a collector down must not grow
 * the heap). A busy replica ends a few thousand spans a second: half a second's worth of them.
 */
const MAX_QUEUED_SPANS = 4096;
/**
 * Spans per POST. A batch is serialised to JSON on the event loop in one go, about 5 µs a span:
 * 128 keep that under a millisecond (measured: p50 0.6 ms; 512 took 3.2 ms, enough to show in
 * the first-speak p99 of the calls whose token arrived meanwhile).
 */
const BATCH_SPANS = 128;
/** A batch goes out at least this often, earlier once it is full. */
const EXPORT_EVERY_MS = 2_000;
/** A long caller text or tool result is cut here (with OTEL_INCLUDE_CONTENT=true). */
const ATTRIBUTE_MAX_CHARS = 4096;
const SPAN_LIMIT = 128;
/** service.instance.id, as the resource conventions name it. */
const SERVICE_INSTANCE_ID = 'service.instance.id';

export function openTelemetryTracing(settings: TracingSettings, context: TracingContext): Tracing {
  const exporter = new OTLPTraceExporter({
    url: settings.url,
    // The exporter's own parser, as it reads these variables; the traces' own headers win.
    headers: { ...parseKeyPairsIntoRecord(settings.headers.general), ...parseKeyPairsIntoRecord(settings.headers.traces) },
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const processor = new BatchSpanProcessor(new ReportingExporter(exporter, context.logger.child({ component: 'tracing' }), originOf(settings.url)), {
    maxQueueSize: MAX_QUEUED_SPANS,
    maxExportBatchSize: BATCH_SPANS,
    scheduledDelayMillis: EXPORT_EVERY_MS,
    exportTimeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [SERVICE_INSTANCE_ID]: settings.serviceInstanceId }),
    ),
    // Every call is traced: a sampled-out call is the one somebody asks about.
    sampler: new AlwaysOnSampler(),
    spanLimits: {
      attributeCountLimit: SPAN_LIMIT,
      attributeValueLengthLimit: ATTRIBUTE_MAX_CHARS,
      eventCountLimit: SPAN_LIMIT,
      linkCountLimit: SPAN_LIMIT,
      attributePerEventCountLimit: SPAN_LIMIT,
      attributePerLinkCountLimit: SPAN_LIMIT,
    },
    spanProcessors: [processor],
  });
  // Not registered as the global provider: Hotline passes its tracer where it is used, and no other
  // library in the process starts exporting spans because Hotline does.
  const tracer = provider.getTracer('hotline');
  const ended = new EndedCalls();
  context.logger.info({ target: originOf(settings.url), content: settings.includeContent }, 'tracing calls with OpenTelemetry');
  return {
    calls: new OtelCallTracing(tracer, {
      includeContent: settings.includeContent,
      redact: context.redact,
      provider: providerNameOf(context.llmBaseUrl),
      ended,
    }),
    deliveries: new OtelDeliveryTracing(tracer, ended),
    close: (timeoutMs) => withinTime(provider.shutdown(), timeoutMs, context),
  };
}

/** The spans still queued go out, for `timeoutMs` at most: a collector that does not answer must not hold up a stop. */
async function withinTime(shutdown: Promise<void>, timeoutMs: number, context: TracingContext): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
    timer.unref();
  });
  const outcome = await Promise.race([shutdown.then(() => 'sent' as const), late]).catch((error: unknown) => {
    // The message only: the exporter's stack says nothing an operator can act on.
    context.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'the last spans could not be sent; they are dropped');
    return 'failed' as const;
  });
  clearTimeout(timer);
  if (outcome === 'late') context.logger.warn({ timeoutMs }, 'the last spans were not sent in time; they are dropped');
}

function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : 'invalid URL';
}
