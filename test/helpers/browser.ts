import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './child-process.js';

export { chromiumPath, launchChromium } from '../../src/testing/chromium.js';

/** Screenshots for review: test-results/screenshots (ignored by git). */
export function screenshotPath(name: string): string {
  const dir = path.join(repoRoot, 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}.png`);
}
