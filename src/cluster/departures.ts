import type { Sweep } from './left-behind-sweep.js';
import type { ReplicaRegistry } from './replica-registry.js';

/**
 * A sweep that calls `departed` when a replica alive at the last look is not any more (killed, or
 * stopped): the timers it held for work all replicas share — a campaign contact's retry it
 * scheduled — went with it, and the others must look at that work again, or it waits for good.
 */
export function watchDepartures(registry: Pick<ReplicaRegistry, 'alive'>, departed: () => void): Sweep {
  let known: Set<string> | undefined;
  return async () => {
    const alive = new Set((await registry.alive()).map((replica) => replica.id));
    if (known && [...known].some((id) => !alive.has(id))) departed();
    known = alive;
  };
}
