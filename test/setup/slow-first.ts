/**
 * The order test files start in: the few that take a minute or more first, then vitest's own order
 * (its timings from earlier runs where it has them; on a fresh clone, as in CI, the largest files
 * first). A small file that runs long — the soak, the compiled start — started last would run alone
 * at the end while the other workers sat idle: on a two-core runner that was a minute of the suite.
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Longest first (seconds in a full run on a two-core runner, as measured; order is all that counts). */
const SLOW = [
  'readme-examples.test.ts', // 176
  'soak.test.ts', // 77
  'replicas-takeover.test.ts', // 60
  'eval.test.ts', // 60
  'dashboard-usability-browser.test.ts', // 60
  'replicas.test.ts', // 60
  'store-resilience.test.ts', // 55
  'start.test.ts', // 47
  'campaigns-resume.test.ts', // 45
  'test-isolation.test.ts', // 31
];

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const at = SLOW.indexOf(path.basename(file.moduleId));
      return at < 0 ? SLOW.length : at;
    };
    // Stable: files outside the list keep vitest's order.
    return sorted.map((file, index) => ({ file, index })).sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index).map(({ file }) => file);
  }
}
