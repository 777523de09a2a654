import type { AiFlowClient } from '../outbound/aiflow-client.js';
import type { PendingCall, PendingCalls } from '../outbound/pending-calls.js';
import { CampaignsUnavailableError } from './errors.js';

export interface DialRequest {
  to: string;
  variables: Record<string, string>;
  tags: Record<string, string>;
  aiFlowId: string | undefined;
  billingDevice: string | undefined;
}

/** How the scheduler places a call; tests may hand in their own. */
export interface Dialer {
  /**
   * Remembers the request for its session_start, then asks the service.
   * Rejects — the request forgotten — when the service refuses.
   */
  dial(request: DialRequest): Promise<PendingCall>;
  /** The call will not come (answer timeout): a late session_start must not be taken for it. */
  forget(call: PendingCall): void;
}

/** The real one: the service's API through AiFlowClient, and the PendingCalls every call is matched against. */
export function serviceDialer(options: {
  client: AiFlowClient | undefined;
  pendingCalls: PendingCalls;
  defaults: { aiFlowId: string | undefined; billingDevice: string | undefined };
}): Dialer {
  const { pendingCalls } = options;
  return {
    async dial(request) {
      const aiFlowId = request.aiFlowId ?? options.defaults.aiFlowId;
      const billingDevice = request.billingDevice ?? options.defaults.billingDevice;
      if (!options.client) throw new CampaignsUnavailableError('outbound calls are not configured: set AIFLOW_API_URL and AIFLOW_ACCESS_TOKEN');
      if (!aiFlowId) throw new CampaignsUnavailableError('no AI flow: set aiFlowId in the campaign or AIFLOW_ID');
      if (!billingDevice) throw new CampaignsUnavailableError('no billing device: set billingDevice in the campaign or AIFLOW_BILLING_DEVICE');
      // Remembered before the request: the call may be answered before the service's 201 arrives.
      const pending = pendingCalls.add(request.to, request.variables, request.tags);
      try {
        await options.client.startCall({ aiFlowId, billingDevice, toPhoneNumber: request.to });
      } catch (error) {
        pendingCalls.remove(pending);
        throw error;
      }
      return pending;
    },
    forget(call) {
      pendingCalls.remove(call);
    },
  };
}
