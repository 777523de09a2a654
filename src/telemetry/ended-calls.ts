/**
 * The span contexts of calls that ended in this process, by call id: a report's delivery, which
 * comes after its call, is traced within the call's trace. Bounded: the oldest are forgotten first,
 * and a delivery of a call forgotten (or traced by another process) starts a trace of its own that
 * names the call.
 */
import type { SpanContext } from '@opentelemetry/api';

/** About an hour of calls at the busiest replica's pace; each entry is a few dozen bytes. */
const REMEMBERED = 10_000;

export class EndedCalls {
  private readonly contexts = new Map<string, SpanContext>();

  constructor(private readonly limit = REMEMBERED) {}

  remember(callId: string, context: SpanContext): void {
    this.contexts.delete(callId);
    this.contexts.set(callId, context);
    if (this.contexts.size > this.limit) this.contexts.delete(this.contexts.keys().next().value!);
  }

  get(callId: string): SpanContext | undefined {
    return this.contexts.get(callId);
  }

  /** Its report is delivered (or given up): nothing more will be traced in it. */
  forget(callId: string): void {
    this.contexts.delete(callId);
  }
}
