import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Tests never depend on the configuration of whoever runs them.
    setupFiles: ['test/setup/isolate-env.ts'],
    // Says once, loudly, when the PostgreSQL half of the store tests is skipped.
    globalSetup: ['test/setup/postgres-notice.ts'],
    // Most files wait on child processes, sockets and databases, not on the CPU: two at a time on a
    // two-core machine halves the run (vitest's default leaves one core to itself). Three at a time
    // used only 1.2 of the 2 cores and ran faster, but a campaign test timed out calls then
    // (answer_timeout_seconds of real time): not before that is understood.
    maxWorkers: 2,
    // A test of a few seconds alone can take three times that on a loaded two-core runner; one that
    // hangs still fails, later.
    testTimeout: 15_000,
  },
});
