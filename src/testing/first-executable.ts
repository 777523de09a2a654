import { accessSync, constants } from 'node:fs';

/** The first of `candidates` this process may run; undefined when none is there. */
export function firstExecutable(candidates: readonly string[]): string | undefined {
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here: the next one.
    }
  }
  return undefined;
}
