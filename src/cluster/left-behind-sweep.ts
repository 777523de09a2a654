import type { Logger } from '../logger.js';
import type { ReplicaRegistry } from './replica-registry.js';

/** One kind of work a dead replica leaves behind (its calls, its campaign attempts), settled by whoever looks first. */
export type Sweep = (deadAfterMs: number) => Promise<unknown>;

/**
 * After each heartbeat, while this replica can judge who is dead, settles what dead replicas left:
 * one look at a time, never on a call's path. `stop` waits for a look in progress (before the store closes).
 */
export function sweepLeftBehind(registry: ReplicaRegistry, sweeps: readonly Sweep[], logger: Logger): { stop(): Promise<void> } {
  let looking: Promise<void> | undefined;
  let stopped = false;
  const unsubscribe = registry.onBeat(() => {
    if (looking || stopped || !registry.judges) return;
    looking = Promise.all(sweeps.map((sweep) => sweep(registry.deadAfterMs)))
      .then(() => undefined)
      .catch((error: unknown) => logger.error({ err: error }, 'settling what a dead replica left failed; looking again at the next heartbeat'))
      .finally(() => {
        looking = undefined;
      });
  });
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      await looking;
    },
  };
}
