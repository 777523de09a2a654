/**
 * Remakes docs/dashboard-calls.png, the README's picture of the calls page on a desktop:
 *
 *     npx tsx test/docs-screenshot-calls.ts            (writes docs/dashboard-calls.png)
 *     npx tsx test/docs-screenshot-calls.ts out.png    (writes elsewhere)
 *
 * A real Hotline on port 0 on the built-in demo model, its store holding twelve ended calls that
 * differ as real ones do (helpers/varied-calls.ts): in and out, every way of ending, summaries short
 * and long; most priced, every fourth on the demo model, so that both a cost and "demo" show. Debian's
 * Chromium (playwright-core) logs in and takes the page at 1366×900, as a laptop shows it.
 * Nothing here is run by `npm test` (the name does not end in .test.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startHotline } from '../src/server.js';
import { chromiumPath, launchChromium } from '../src/testing/chromium.js';
import { repoRoot } from './helpers/child-process.js';
import { seedVariedCalls, variedCalls } from './helpers/varied-calls.js';

const ADMIN = 'screenshot-admin-token-0123456789';
const CALLS = 12;

const out = path.resolve(process.argv[2] ?? path.join(repoRoot, 'docs', 'dashboard-calls.png'));
const browserPath = chromiumPath();
if (!browserPath) throw new Error('No Chromium found: install Debian\'s "chromium" package');

const transcripts = await mkdtemp(path.join(tmpdir(), 'hotline-docs-calls-'));
const vars = { NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', ADMIN_TOKEN: ADMIN, DATABASE_FILE: ':memory:', TRANSCRIPTS_DIR: transcripts };
const hotline = await startHotline(loadConfig(vars), pino({ level: 'silent' }), { env: vars });
const browser = await launchChromium(browserPath);
try {
  // The newest a few minutes ago, on the minute: the page looks like a morning's calls.
  const newest = new Date(Math.floor((Date.now() - 5 * 60_000) / 60_000) * 60_000);
  await seedVariedCalls(hotline.store.db, transcripts, variedCalls(CALLS, newest, (i) => (i % 4 === 3 ? 'demo' : 'known')));
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`${hotline.url}/dashboard/login`);
  await page.fill('input[name=password]', ADMIN);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/dashboard\/$/);
  await page.goto(`${hotline.url}/dashboard/calls`);
  await page.waitForSelector('#history');
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await hotline.close();
  await rm(transcripts, { recursive: true, force: true });
}
