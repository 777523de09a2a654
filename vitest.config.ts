import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Tests never depend on the configuration of whoever runs them.
    setupFiles: ['test/setup/isolate-env.ts'],
    // Says once, loudly, when the PostgreSQL half of the store tests is skipped.
    globalSetup: ['test/setup/postgres-notice.ts'],
    // Most files wait on child processes, sockets, databases and real timers, not on the CPU: with
    // two at a time a two-core machine stayed 40 % idle through the run (117 % of 200 % busy with
    // three), so three files run at once.
    maxWorkers: 3,
  },
});
