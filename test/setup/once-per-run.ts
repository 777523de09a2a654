/**
 * Each test project runs the global setups (vitest.config.ts has two projects, both inheriting them):
 * what they do is done once per run, by the first, and the others wait for it.
 */
export function oncePerRun(name: string, work: () => Promise<void>): Promise<void> {
  const runs = globalThis as unknown as Record<symbol, Promise<void> | undefined>;
  const key = Symbol.for(`hotline.tests.${name}`);
  return (runs[key] ??= work());
}
