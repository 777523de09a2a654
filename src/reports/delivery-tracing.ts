/**
 * What the report webhook tells whoever traces it: one span per attempt to deliver a call's report,
 * in the call's trace when this process traced the call. The reports own the shape; `src/telemetry`
 * implements it and `server.ts` wires it in. Without it the no-op below is held, which does nothing.
 */

export interface DeliveryAttemptStart {
  readonly deliveryId: string;
  readonly callId: string;
  readonly sessionId: string;
  /** 1 for the first. */
  readonly attempt: number;
  /** Where it goes; its path and query may carry a token, so only its host is traced. */
  readonly url: string;
}

export interface DeliveryAttemptEnd {
  readonly status: 'delivered' | 'retrying' | 'failed' | 'stopped';
  /** The receiver's answer, when one came. */
  readonly httpStatus?: number | undefined;
  readonly error?: string | undefined;
}

export interface DeliveryAttemptTrace {
  /** W3C Trace Context headers for the receiver; undefined when nothing is recorded. */
  readonly propagation: Readonly<Record<string, string>> | undefined;
  end(end: DeliveryAttemptEnd): void;
}

export interface DeliveryTracing {
  attempt(start: DeliveryAttemptStart): DeliveryAttemptTrace;
}

const NO_ATTEMPT_TRACE: DeliveryAttemptTrace = Object.freeze({ propagation: undefined, end: () => {} });

export const NO_DELIVERY_TRACING: DeliveryTracing = Object.freeze({ attempt: () => NO_ATTEMPT_TRACE });
