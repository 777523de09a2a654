import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Script } from '../../src/llm/scripted-server.js';
import { repoRoot } from './child-process.js';
import { startTestHotline, type TestHotline } from './hotline.js';
import { freshStoreLocation, storeKinds, type StoreKind } from './stores.js';

export { chromiumPath, launchChromium } from '../../src/testing/chromium.js';

/** Screenshots for review: test-results/screenshots (ignored by git); a store other than SQLite's named in the file. */
export function screenshotPath(name: string, kind: StoreKind = 'sqlite'): string {
  const dir = path.join(repoRoot, 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, kind === 'sqlite' ? `${name}.png` : `${name}-${kind}.png`);
}

/** The stores the browser tests run on: every one this machine has, or none to ask about without a browser. */
export async function browserStoreKinds(browserPath: string | undefined): Promise<StoreKind[]> {
  return browserPath ? storeKinds() : ['sqlite'];
}

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
