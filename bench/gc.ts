import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sleep } from './clock.js';

/** global.gc when node runs with --expose-gc, else the same function obtained at run time. */
export function forcedGc(): { gc: () => void; exposed: boolean } {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return { gc: exposed, exposed: true };
  v8.setFlagsFromString('--expose-gc');
  return { gc: runInNewContext('gc') as () => void, exposed: false };
}

export async function settleHeap(gc: () => void): Promise<void> {
  // Two rounds: the first frees, finalizers and weak callbacks run in between, the second frees what they released.
  gc();
  await sleep(200);
  gc();
  await sleep(100);
}
