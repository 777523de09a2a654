/**
 * An OpenTelemetry collector as small as a test needs: a plain HTTP server on port 0 that takes
 * OTLP/HTTP JSON at /v1/traces (what @opentelemetry/exporter-trace-otlp-http sends), gzipped or
 * not, and keeps every span it decodes, with its resource's attributes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type AttributeValue = string | number | boolean | readonly AttributeValue[] | undefined;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Undefined for a trace's root span. */
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }[];
  /** 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message: string | undefined };
  readonly resource: Readonly<Record<string, AttributeValue>>;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to: the exporter adds /v1/traces. */
  readonly endpoint: string;
  readonly spans: readonly ReceivedSpan[];
  /** Every POST so far, decoded or not. */
  readonly requests: number;
  /** Resolves once a span matching `predicate` has arrived. */
  span(predicate: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}
interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  events?: { name: string; attributes?: JsonKeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface JsonExport {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

function valueOf(value: JsonAnyValue | undefined): AttributeValue {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

function decode(body: JsonExport): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ? span.parentSpanId : undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
        status: { code: span.status?.code ?? 0, message: span.status?.message },
        resource,
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const waiting: { predicate: (span: ReceivedSpan) => boolean; resolve: (span: ReceivedSpan) => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const raw = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      for (const span of decode(JSON.parse(text) as JsonExport)) {
        spans.push(span);
        for (const wait of waiting.slice()) {
          if (!wait.predicate(span)) continue;
          waiting.splice(waiting.indexOf(wait), 1);
          wait.resolve(span);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    get requests() {
      return requests;
    },
    span(predicate) {
      const found = spans.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiting.push({ predicate, resolve }));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
