/**
 * The report webhook's attempts as spans: each a child of its call's span when this process traced
 * the call (the call has ended by then; the trace is still the call's), else the first span of a
 * trace of its own, naming the call. Only the receiver's host is traced: its URL's path and query
 * may carry a token.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import type { DeliveryAttemptEnd, DeliveryAttemptStart, DeliveryAttemptTrace, DeliveryTracing } from '../reports/delivery-tracing.js';
import * as A from './attributes.js';
import type { EndedCalls } from './ended-calls.js';
import { traceHeaders } from './propagation.js';

export class OtelDeliveryTracing implements DeliveryTracing {
  constructor(
    private readonly tracer: Tracer,
    private readonly ended: EndedCalls,
  ) {}

  attempt(start: DeliveryAttemptStart): DeliveryAttemptTrace {
    const call = this.ended.get(start.callId);
    const parent = call ? trace.setSpanContext(ROOT_CONTEXT, call) : ROOT_CONTEXT;
    const attributes: Attributes = {
      [A.DELIVERY_ID]: start.deliveryId,
      [A.DELIVERY_ATTEMPT]: start.attempt,
      [A.CALL_ID]: start.callId,
      [A.SESSION_ID]: start.sessionId,
      [ATTR_HTTP_REQUEST_METHOD]: 'POST',
      ...serverOf(start.url),
    };
    const span = this.tracer.startSpan('report delivery', { kind: SpanKind.CLIENT, attributes }, parent);
    return new OtelDeliveryAttempt(span, () => this.ended.forget(start.callId));
  }
}

class OtelDeliveryAttempt implements DeliveryAttemptTrace {
  readonly propagation: Readonly<Record<string, string>>;
  private done = false;

  constructor(
    private readonly span: Span,
    /** Nothing more of the call will be traced: its report went, or was given up. */
    private readonly settled: () => void,
  ) {
    this.propagation = traceHeaders(span);
  }

  end(end: DeliveryAttemptEnd): void {
    if (this.done) return;
    this.done = true;
    this.span.setAttribute(A.DELIVERY_STATUS, end.status);
    if (end.httpStatus !== undefined) this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, end.httpStatus);
    if (end.status === 'retrying' || end.status === 'failed') {
      // "HTTP 503", "ECONNREFUSED", "no answer within 10000 ms": Hotline's own words, never the receiver's body.
      this.span.setAttribute(ATTR_ERROR_TYPE, end.httpStatus !== undefined ? String(end.httpStatus) : (end.error ?? 'failed'));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
    if (end.status === 'delivered' || end.status === 'failed') this.settled();
  }
}

function serverOf(url: string): Attributes {
  if (!URL.canParse(url)) return {};
  const parsed = new URL(url);
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { [ATTR_SERVER_ADDRESS]: parsed.hostname, [ATTR_SERVER_PORT]: port };
}
