import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Tests never depend on the configuration of whoever runs them.
    setupFiles: ['test/setup/isolate-env.ts'],
    // Says once, loudly, when the PostgreSQL half of the store tests is skipped.
    globalSetup: ['test/setup/postgres-notice.ts'],
    // Most files wait on child processes, sockets, databases and real timers, not on the CPU: three
    // at a time, the whole run (children included) used 1.2 of a two-core machine's 2 cores.
    maxWorkers: 3,
    // A test of a few seconds alone can take three times that on a loaded two-core runner; one that
    // hangs still fails, later.
    testTimeout: 15_000,
  },
});
