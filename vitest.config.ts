import { configDefaults, defineConfig } from 'vitest/config';
import { SlowFirst } from './test/setup/slow-first.js';

/**
 * Files that run several Hotline processes at once and play the voice service for them from the
 * test's own process: each gets a fresh worker, whose event loop nothing left by an earlier file
 * slows down (a greeting a replica sent could wait on it past the test's bound).
 */
const OWN_PROCESS = ['test/replicas*.test.ts', 'test/campaigns-resume.test.ts', 'test/shutdown-dialling.test.ts'];

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
    // campaign tests now ring their calls side by side, as the service does. Four at a time was slower
    // (the browsers and builds then ran side by side) and timed out campaign calls again.
    maxWorkers: 3,
    // A test of a few seconds alone can take three times that on a loaded two-core runner; one that
    // hangs still fails, later.
    testTimeout: 15_000,
    // The files that take a minute or more start first (test/setup/slow-first.ts).
    sequence: { sequencer: SlowFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          exclude: [...configDefaults.exclude, ...OWN_PROCESS],
          // A worker imports the product once for all the files it runs, not once per file: a fresh
          // worker per file made the imports 300 s of the suite's time (923 s against 833 s in all on a
          // two-core runner). Every file still runs its setup (test/setup/isolate-env.ts); the product
          // keeps no state between calls of its own.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS } },
    ],
  },
});
