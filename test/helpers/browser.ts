import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Script } from '../../src/llm/scripted-server.js';
import { repoRoot } from './child-process.js';
import { startTestHotline, type TestHotline } from './hotline.js';
import { freshStoreLocation, type StoreKind } from './stores.js';

export { chromiumPath, launchChromium } from '../../src/testing/chromium.js';

/** Screenshots for review: test-results/screenshots (ignored by git); a store other than SQLite's named in the file. */
export function screenshotPath(name: string, kind: StoreKind = 'sqlite'): string {
  const dir = path.join(repoRoot, 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, kind === 'sqlite' ? `${name}.png` : `${name}-${kind}.png`);
}

/**
 * The store the browser tests run on: SQLite. What a browser adds — how pages draw, fit, script and
 * post — is the same whichever store they read; the same pages' answers are tested over HTTP on both
 * stores (dashboard.test.ts, dashboard-reads.test.ts, person-data.test.ts, stream-access.test.ts …).
 * A second Chromium run per file on PostgreSQL was two minutes of a two-core runner's CPU.
 */
export const BROWSER_STORE_KINDS: readonly StoreKind[] = ['sqlite'];

/** A real Hotline (startTestHotline) on a store of its own of `kind`; closing it removes the store too. */
export async function startHotlineOn(kind: StoreKind, script: Script, vars: Record<string, string> = {}): Promise<TestHotline> {
  const place = await freshStoreLocation(kind);
  let env: TestHotline;
  try {
    env = await startTestHotline(script, { ...place.env, ...vars });
  } catch (error) {
    await place.remove();
    throw error;
  }
  return {
    ...env,
    async close() {
      await env.close();
      await place.remove();
    },
  };
}
