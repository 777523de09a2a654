/**
 * Calls out: the service's outbound API (when AIFLOW_* is set), the one way to dial — never a number
 * stopped, never one already in a call — and the campaigns that dial through it. The stop list opens
 * with the store, before the calls: a call's do_not_call tool writes to it.
 */
import type { ToolBox } from '../call/ports/business-tools.js';
import { CampaignRunner } from '../campaigns/campaign-runner.js';
import type { Clock } from '../campaigns/clock.js';
import { openCampaignStore, type CampaignStore } from '../campaigns/definition.js';
import { serviceDialer } from '../campaigns/dialer.js';
import { doNotCallToolBox } from '../campaigns/do-not-call-tool.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { AiFlowClient } from '../outbound/aiflow-client.js';
import { OutboundCalls } from '../outbound/outbound-calls.js';
import type { Calls } from './calls.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';

export interface StopList {
  readonly campaignStore: CampaignStore;
  /** The do_not_call tool a call offers its model. */
  readonly doNotCall: ToolBox;
}

export function openStopList(config: Config, logger: Logger, stored: StoreFeature, clock: Clock): StopList {
  const campaignStore = openCampaignStore(stored.store, stored.replica.id);
  const doNotCall = doNotCallToolBox(
    (number, reason) =>
      campaignStore.addToStopList(number, reason, new Date(clock.now())).catch((error: unknown) => {
        logger.error({ err: error }, 'a number could not be put on the stop list');
        throw error;
      }),
    { defaultCountryCode: config.outbound.defaultCountryCode },
  );
  return { campaignStore, doNotCall };
}

export interface Dialling {
  readonly outboundCalls: OutboundCalls;
  readonly campaigns: CampaignRunner;
}

export function openDialling(config: Config, logger: Logger, parts: { calls: Calls; stopList: StopList; clock: Clock }, opened: OpenedStack): Dialling {
  const { outbound } = config;
  const { calls } = parts;
  const client =
    outbound.apiUrl && outbound.accessToken ? new AiFlowClient({ baseUrl: outbound.apiUrl, accessToken: outbound.accessToken, timeoutMs: outbound.timeoutMs }) : undefined;
  // The API's calls and the campaigns' alike: never while shutting down, never a number stopped or already in a call.
  const outboundCalls = new OutboundCalls({
    client,
    settings: outbound,
    pendingCalls: calls.pendingCalls,
    numbersOnTheLine: () => calls.registry.numbersOnTheLine(),
    isStopped: (number) => parts.stopList.campaignStore.isStopped(number),
  });
  const campaigns = new CampaignRunner({
    repository: parts.stopList.campaignStore,
    dialer: serviceDialer(outboundCalls),
    clock: parts.clock,
    logger,
    defaultCountryCode: outbound.defaultCountryCode,
  });
  calls.observers.add(campaigns);
  // A contact waiting for its number hears when a call here freed it in the store.
  calls.pendingCalls.onFreed(() => campaigns.lineFreed());
  opened.push('the campaigns', {
    // Nothing new is dialled: a person picking up now would reach a Hotline on its way out.
    stopTaking: () => {
      outboundCalls.stopDialling();
      campaigns.close();
    },
    // Their last writes (the calls ended by the transports' close) before the store goes.
    close: () => campaigns.settled(),
  });
  return { outboundCalls, campaigns };
}
