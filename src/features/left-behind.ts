/**
 * What replicas that died left behind, settled by whichever replica is alive: their calls cut off,
 * their campaign attempts settled, their requested numbers freed. Started once this replica
 * listens: a campaign's calls ring back into it.
 */
import { watchDepartures } from '../cluster/departures.js';
import { sweepLeftBehind } from '../cluster/left-behind-sweep.js';
import type { Logger } from '../logger.js';
import { cutOffOrphanedCalls } from '../store/cut-off-calls.js';
import type { Calls } from './calls.js';
import type { Dialling } from './campaigns.js';
import type { OpenedStack } from './opened.js';
import type { StoreFeature } from './store.js';

export function sweepWhatDeadReplicasLeft(logger: Logger, parts: { stored: StoreFeature; calls: Calls; dialling: Dialling }, opened: OpenedStack): void {
  const { replica } = parts.stored;
  const { calls } = parts;
  const { campaigns } = parts.dialling;
  const sweep = sweepLeftBehind(
    replica,
    [
      (deadAfterMs) => cutOffOrphanedCalls(calls.callRows, deadAfterMs, calls.records, logger),
      (deadAfterMs) => campaigns.settleOrphaned(deadAfterMs),
      // A replica gone took its campaign timers with it (a retry it scheduled): the campaigns are looked at again.
      watchDepartures(replica, () => void campaigns.tick()),
      // A person's number stays no longer than their call: what no running replica holds any more goes.
      () => calls.outboundRequestRows.sweep(),
    ],
    logger,
  );
  opened.push('the sweep of what dead replicas left', { stopTaking: () => sweep.stop() });
}
