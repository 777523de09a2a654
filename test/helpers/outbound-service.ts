import { startFakeAiFlowApi, type FakeAiFlowApi } from '../../src/testing/fake-aiflow-api.js';

export interface OutboundService {
  api: FakeAiFlowApi;
  /** The AIFLOW_* variables that point Hotline at it. */
  vars: Record<string, string>;
  /** The numbers asked for so far, in order. */
  numbers(): string[];
  /** Resolves once `count` calls have been asked for, with the numbers asked for by then. */
  requested(count: number): Promise<string[]>;
  close(): Promise<void>;
}

/** The voice service's outbound endpoint (201 for every call asked for), recording each number it is asked to call. */
export async function startOutboundService(): Promise<OutboundService> {
  const waiting: { count: number; resolve: (numbers: string[]) => void }[] = [];
  const numbers = (): string[] => api.calls.map((call) => String((call.body as { toPhoneNumber?: unknown }).toPhoneNumber));
  const api: FakeAiFlowApi = await startFakeAiFlowApi({
    token: 'platform-token',
    defaultFlow: { phoneNumber: true },
    onCall() {
      for (const wait of [...waiting]) {
        if (api.calls.length < wait.count) continue;
        waiting.splice(waiting.indexOf(wait), 1);
        wait.resolve(numbers());
      }
    },
  });
  return {
    api,
    vars: { AIFLOW_API_URL: api.url, AIFLOW_ACCESS_TOKEN: 'platform-token', AIFLOW_ID: 'flow-1', AIFLOW_BILLING_DEVICE: 'dev-1' },
    numbers,
    requested: (count) => (api.calls.length >= count ? Promise.resolve(numbers()) : new Promise((resolve) => waiting.push({ count, resolve }))),
    close: () => api.close(),
  };
}
