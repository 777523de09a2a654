import type { AiFlowClient } from './aiflow-client.js';
import { NumberInCallError, NumberStoppedError, OutboundNotConfiguredError, ShuttingDownError, type CallNotPlacedError } from './errors.js';
import type { OutboundRequests } from './outbound-requests.js';
import type { PendingCall } from '../call/ports/outbound-request.js';
import { phoneKey } from '../phone/phone-number.js';

export interface OutboundCallRequest {
  /** Normalised already (normalizePhoneNumber): E.164 digits without '+'. */
  to: string;
  variables: Readonly<Record<string, string>>;
  /** Who asked (a campaign and its contact), kept with the call's record. */
  tags?: Readonly<Record<string, string>> | undefined;
  /** Without them, AIFLOW_ID / AIFLOW_BILLING_DEVICE. */
  aiFlowId?: string | undefined;
  billingDevice?: string | undefined;
  /** How long the call may ring before it is given up (a campaign's answer timeout); at most OUTBOUND_TTL_MS. */
  ringForMs?: number | undefined;
}

/** A campaign or a request may name its own AI flow and billing device. */
export interface OutboundOverrides {
  aiFlowId?: string | undefined;
  billingDevice?: string | undefined;
}

export interface OutboundCallsOptions {
  /** Undefined when AIFLOW_API_URL or AIFLOW_ACCESS_TOKEN is not set. */
  client: AiFlowClient | undefined;
  /** The AIFLOW_* settings, to name what is missing. */
  settings: {
    apiUrl: string | undefined;
    accessToken: string | undefined;
    aiFlowId: string | undefined;
    billingDevice: string | undefined;
    defaultCountryCode: string | undefined;
  };
  pendingCalls: OutboundRequests;
  /** The numbers of the people on the line in this process's calls (caller or person called), as the service wrote them. */
  numbersOnTheLine(): Iterable<string>;
  /** Whether a normalised number is on the global stop list (asks the store). */
  isStopped(number: string): Promise<boolean>;
}

/**
 * The one way Hotline dials out, for the outbound API and the campaigns alike:
 * nothing while shutting down or without the AIFLOW_* settings, never a number
 * on the stop list, and never a number already in a call — being rung
 * (a request waiting for its session_start) or on the line, at this replica or
 * any other on the same store — until that call has ended.
 */
export class OutboundCalls {
  private shuttingDown = false;

  constructor(private readonly options: OutboundCallsOptions) {}

  /** The AIFLOW_* variables that calls with these overrides would lack; empty when they can be placed. */
  missing(overrides: OutboundOverrides = {}): string[] {
    const { settings } = this.options;
    const missing: string[] = [];
    if (!settings.apiUrl) missing.push('AIFLOW_API_URL');
    if (!settings.accessToken) missing.push('AIFLOW_ACCESS_TOKEN');
    if (!(overrides.aiFlowId ?? settings.aiFlowId)) missing.push('AIFLOW_ID');
    if (!(overrides.billingDevice ?? settings.billingDevice)) missing.push('AIFLOW_BILLING_DEVICE');
    // Set but refused at startup would have stopped Hotline; set and here means a client exists.
    if (missing.length === 0 && !this.options.client) missing.push('AIFLOW_API_URL', 'AIFLOW_ACCESS_TOKEN');
    return missing;
  }

  /** Shutdown begins: from now on every request is refused. Calls in progress and those already requested go on. */
  stopDialling(): void {
    this.shuttingDown = true;
  }

  get dialling(): boolean {
    return !this.shuttingDown;
  }

  /**
   * Why `to` (normalised) may not be dialled now, or undefined when it may: what this process knows
   * (`refusalNow`), then the store's stop list and the calls other replicas have the number in.
   */
  async refusal(to: string, overrides: OutboundOverrides = {}): Promise<CallNotPlacedError | undefined> {
    const early = this.refusalNow(to, overrides);
    if (early) return early;
    const [stopped, busy] = await Promise.all([this.options.isStopped(to), this.options.pendingCalls.busy(to)]);
    if (stopped) return new NumberStoppedError(to);
    // Shutdown may have begun, or the number been rung, while the store answered.
    return this.refusalNow(to, overrides) ?? busy;
  }

  /**
   * Every reason not to dial `to` that is known in this process: synchronous and cheap (lookups, and a
   * walk over the calls in progress), so `place` checks, then remembers the request, with nothing in between.
   */
  private refusalNow(to: string, overrides: OutboundOverrides): CallNotPlacedError | undefined {
    if (this.shuttingDown) return new ShuttingDownError();
    const missing = this.missing(overrides);
    if (missing.length > 0) return new OutboundNotConfiguredError(missing);
    const ringing = this.options.pendingCalls.waitingUntil(to);
    if (ringing !== undefined) return new NumberInCallError(to, ringing);
    const { defaultCountryCode } = this.options.settings;
    for (const number of this.options.numbersOnTheLine()) {
      if (phoneKey(number, { defaultCountryCode }) === to) return new NumberInCallError(to, undefined);
    }
    return undefined;
  }

  /**
   * Checks (see `refusal`), remembers the request for its session_start, then asks the service. What
   * this process knows is checked once more after the last await, with nothing between it and `add`,
   * whose row in the store is the claim across replicas: two requests for one number never both pass.
   * Rejects — the request forgotten — when it is refused here or by the service.
   */
  async place(request: OutboundCallRequest): Promise<PendingCall> {
    const refused = (await this.refusal(request.to, request)) ?? this.refusalNow(request.to, request);
    if (refused) throw refused;
    const target = this.target(request);
    if (!target) throw new OutboundNotConfiguredError(this.missing(request));
    const { pendingCalls } = this.options;
    // Remembered before the request: the call may be answered before the service's 201 arrives.
    const pending = await pendingCalls.add(request.to, { ...request.variables }, request.tags ? { ...request.tags } : undefined, request.ringForMs);
    try {
      await target.client.startCall({ aiFlowId: target.aiFlowId, billingDevice: target.billingDevice, toPhoneNumber: request.to });
    } catch (error) {
      void pendingCalls.remove(pending);
      throw error;
    }
    return pending;
  }

  private target(overrides: OutboundOverrides): { client: AiFlowClient; aiFlowId: string; billingDevice: string } | undefined {
    const { client, settings } = this.options;
    const aiFlowId = overrides.aiFlowId ?? settings.aiFlowId;
    const billingDevice = overrides.billingDevice ?? settings.billingDevice;
    return client && aiFlowId && billingDevice ? { client, aiFlowId, billingDevice } : undefined;
  }

  /** The call will not come (a campaign's answer timeout): a late session_start must not be taken for it. Resolves once the store has it so; never rejects. */
  forget(call: PendingCall): Promise<void> {
    return this.options.pendingCalls.remove(call);
  }
}
