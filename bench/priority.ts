import { getPriority, setPriority } from 'node:os';

/** The lowest CPU priority (the highest nice value). */
const LOWEST = 19;

/**
 * The bench's callers and LLM server stand in for the voice service and the
 * LLM provider, which run on other hosts. Sharing Hotline's two cores, they
 * would take CPU time Hotline has to itself in production, and every figure
 * would carry the wait for a core. So they give way: the calling thread drops
 * to the lowest priority. Linux sets priorities per thread, so Hotline's thread
 * and V8's GC helpers keep theirs; elsewhere the whole process drops, which
 * changes nothing between them. Returns the nice value the thread now has.
 */
export function yieldCpuToHotline(): number | undefined {
  try {
    setPriority(LOWEST);
    return getPriority();
  } catch {
    // No permission can be needed to lower one's own priority, but a sandbox may refuse: the bench still runs.
    return undefined;
  }
}

/** The nice value this thread had when the bench started, before any giving way. */
const STARTING_NICE = ((): number | undefined => {
  try {
    return getPriority();
  } catch {
    return undefined;
  }
})();

/** The nice value the main thread had before it gave way: what a Hotline thread started later should run at. */
export function startingNice(): number | undefined {
  return STARTING_NICE;
}

/**
 * A Hotline thread started after the callers' thread gave way is born with their lowest priority:
 * it takes `nice` back (which needs the privilege to raise a priority; root has it). Returns the
 * nice value the thread runs at.
 */
export function takeNice(nice: number | undefined): number | undefined {
  try {
    if (nice !== undefined && getPriority() > nice) setPriority(nice);
    return getPriority();
  } catch {
    // Not allowed: the thread keeps the priority it was born with, and the figures say so.
    try {
      return getPriority();
    } catch {
      return undefined;
    }
  }
}

/** Back to `nice` (lowering a priority needs no privilege), as a phase that ran this thread ahead of Hotline ends. */
export function restoreNice(nice: number | undefined): void {
  try {
    if (nice !== undefined) setPriority(nice);
  } catch {
    // A sandbox may refuse; the next phase's figures then say which priority it ran at.
  }
}
