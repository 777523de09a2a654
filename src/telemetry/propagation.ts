/**
 * W3C Trace Context headers of a span, for a system Hotline calls (a business tool's HTTP request
 * or MCP request, the report webhook): its own spans then join the call's trace.
 */
import { defaultTextMapSetter, ROOT_CONTEXT, trace, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

const propagator = new W3CTraceContextPropagator();

/** `traceparent`, and `tracestate` when the span has one. */
export function traceHeaders(span: Span): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
  return headers;
}
