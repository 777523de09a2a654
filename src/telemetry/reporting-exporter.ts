/**
 * An exporter that says in Hotline's log when the collector cannot be reached: once as exports
 * start failing, once again when they succeed again. OpenTelemetry's own diagnostics stay off, so
 * an unreachable collector costs a line, never a line (or a stack) per batch or per span.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../logger.js';

export class ReportingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly log: Logger,
    /** Where the spans go, as the log names it: the origin only (the path is the standard one). */
    private readonly target: string,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.failing) this.log.info({ target: this.target }, 'traces reach the collector again');
        this.failing = false;
      } else if (!this.failing) {
        this.failing = true;
        // The message only: the error's stack and cause say nothing an operator can act on.
        this.log.warn(
          { target: this.target, reason: result.error?.message ?? 'unknown', spans: spans.length },
          'traces cannot be sent to the collector; calls go on untouched, and spans are dropped until it answers',
        );
      }
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
