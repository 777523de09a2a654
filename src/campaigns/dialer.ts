import type { CallNotPlacedError } from '../outbound/errors.js';
import type { OutboundCalls, OutboundOverrides } from '../outbound/outbound-calls.js';
import type { PendingCall } from '../call/ports/outbound-request.js';

export interface DialRequest {
  to: string;
  variables: Record<string, string>;
  tags: Record<string, string>;
  aiFlowId: string | undefined;
  billingDevice: string | undefined;
  /** The campaign's answer timeout: the number counts as rung no longer than this. */
  ringForMs?: number | undefined;
}

/** How the scheduler places a call; tests may hand in their own. */
export interface Dialer {
  /** The AIFLOW_* variables calls with these overrides would lack; empty when they can be placed. */
  missing(overrides: OutboundOverrides): string[];
  /** Why `number` may not be dialled now (shutting down, not configured, stopped, in a call); undefined when it may. */
  refusal(number: string, overrides: OutboundOverrides): Promise<CallNotPlacedError | undefined>;
  /**
   * Checks again (the look was before an await), remembers the request for its session_start, then
   * asks the service. Rejects — the request forgotten — when refused here (a CallNotPlacedError) or by the service.
   */
  dial(request: DialRequest): Promise<PendingCall>;
  /** The call will not come (answer timeout): a late session_start must not be taken for it. Never rejects. */
  forget(call: PendingCall): Promise<void> | void;
}

/** The real one: every outbound call goes through OutboundCalls, the API's as well as the campaigns'. */
export function serviceDialer(outbound: OutboundCalls): Dialer {
  return {
    missing: (overrides) => outbound.missing(overrides),
    refusal: (number, overrides) => outbound.refusal(number, overrides),
    dial: (request) => outbound.place(request),
    forget: (call) => outbound.forget(call),
  };
}
