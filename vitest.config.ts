import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Tests never depend on the configuration of whoever runs them.
    setupFiles: ['test/setup/isolate-env.ts'],
    // Says once, loudly, when the PostgreSQL half of the store tests is skipped.
    globalSetup: ['test/setup/postgres-notice.ts'],
    // Most files wait on child processes, sockets and databases, not on the CPU: two at a time on a
    // two-core machine halves the run (vitest's default leaves one core to itself).
    maxWorkers: 2,
  },
});
