/** The system's Chromium for the browser tests and the bench (playwright-core, a devDependency). */
import { chromium, type Browser } from 'playwright-core';
import { firstExecutable } from './first-executable.js';

/** Where Debian (and most Linux) put Chromium; the first that runs is used. Never downloaded. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** The browser binary on this machine, if any. */
export function chromiumPath(): string | undefined {
  return firstExecutable(CANDIDATES);
}

/**
 * Headless Chromium as the environment notes say it runs here: no sandbox (CI is root),
 * and no background networking, which this machine's closed network refuses.
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
