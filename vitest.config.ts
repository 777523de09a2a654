import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Tests never depend on the configuration of whoever runs them.
    setupFiles: ['test/setup/isolate-env.ts'],
    // Says once, loudly, when the PostgreSQL half of the store tests is skipped.
    // And compiles the product once for the child processes the tests start (test/setup/build.ts).
    globalSetup: ['test/setup/postgres-notice.ts', 'test/setup/build.ts'],
    // Most files wait on child processes, sockets, databases and timers, not on the CPU: three at a time
    // on a two-core machine ran the suite in 415 s against 528 s for two (515 s against 594 s with a
    // `yes` CPU hog beside it). An earlier try at three timed out campaign calls: the platform emulator
    // answered one call at a time, so a queued call's wait counted against its answer timeout. The
    // campaign tests now ring their calls side by side, as the service does.
    maxWorkers: 3,
    // Each worker imports the product once for all the files it runs, not once per file: the imports
    // were 260 s of the suite's time on a two-core runner. Every file still gets a fresh copy of
    // itself and its setup (test/setup/isolate-env.ts); the product keeps no state between calls of its own.
    isolate: false,
    // A test of a few seconds alone can take three times that on a loaded two-core runner; one that
    // hangs still fails, later.
    testTimeout: 15_000,
  },
});
