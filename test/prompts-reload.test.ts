import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { PromptStore } from '../src/prompts/prompt-store.js';

/** Fast enough that a test waits milliseconds, slow enough that a check never overlaps the next. */
const CHECK_INTERVAL_MS = 50;
// Below the test's own 5 s, so a failure names the expectation rather than a timeout.
const WAIT = { timeout: 3000, interval: 20 };

const FILES: Record<string, string> = {
  'system.md': 'You are a test assistant.\n',
  'greeting.md': 'Hello from the first version!\n',
  'error.md': "I'm sorry, something broke.\n",
};

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface LogLine {
  level: number;
  msg: string;
}

const WARN = 40;

/** A logger whose lines the test can read, in order. */
function capturedLogger(): { logger: Logger; lines: LogLine[]; said: (msg: string) => LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines, said: (msg) => lines.filter((l) => l.msg === msg) };
}

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'hotline-reload-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return root;
}

async function writeFolder(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
}

async function openWatched(dir: string, logger: Logger): Promise<PromptStore> {
  const store = await PromptStore.open(dir, logger, { watch: true, checkIntervalMs: CHECK_INTERVAL_MS });
  cleanups.push(() => store.close());
  return store;
}

function greeting(store: PromptStore): string {
  return store.current.render('greeting', {});
}

/**
 * The layout the kubelet gives a ConfigMap volume: every file is a symlink
 * through `..data`, which points at a timestamped folder with the real files.
 */
async function writeConfigMapVersion(dir: string, version: string, files: Record<string, string>): Promise<void> {
  const data = `..2026_11_23_10_00_00.${version}`;
  await writeFolder(path.join(dir, data), files);
  await symlink(data, path.join(dir, '..data_tmp'));
  // The atomic step of an update: every file switches at once.
  await rename(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
  for (const name of Object.keys(files)) {
    await symlink(path.join('..data', name), path.join(dir, name)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    });
  }
}

describe('hot reload of a replaced or removed folder', () => {
  test('a folder replaced by rename: the new one is read and watched', async () => {
    const root = await tempRoot();
    const dir = path.join(root, 'prompts');
    await writeFolder(dir, FILES);
    const { logger, said } = capturedLogger();
    const store = await openWatched(dir, logger);

    await writeFolder(path.join(root, 'prompts.new'), { ...FILES, 'greeting.md': 'Hello from the new folder!\n' });
    await rename(dir, path.join(root, 'prompts.old'));
    await rename(path.join(root, 'prompts.new'), dir);
    await expect.poll(() => greeting(store), WAIT).toBe('Hello from the new folder!');

    // Edits land in the new folder, so that is the one that must be watched now.
    await writeFile(path.join(dir, 'greeting.md'), 'Edited in the new folder.\n');
    await expect.poll(() => greeting(store), WAIT).toBe('Edited in the new folder.');
    await writeFile(path.join(root, 'prompts.old', 'greeting.md'), 'Edited in the old folder.\n');
    expect(await store.reload()).toMatchObject({ ok: true });
    expect(greeting(store)).toBe('Edited in the new folder.');
    expect(said('prompts reloaded').length).toBeGreaterThanOrEqual(2);
  });

  test('PROMPTS_DIR a symlink pointed at another release: the new target is read and watched', async () => {
    const root = await tempRoot();
    const dir = path.join(root, 'prompts');
    await writeFolder(path.join(root, 'release-1'), FILES);
    await symlink('release-1', dir);
    const { logger } = capturedLogger();
    const store = await openWatched(dir, logger);

    await writeFolder(path.join(root, 'release-2'), { ...FILES, 'greeting.md': 'Hello from release 2!\n' });
    await symlink('release-2', path.join(root, 'prompts.tmp'));
    await rename(path.join(root, 'prompts.tmp'), dir);
    await expect.poll(() => greeting(store), WAIT).toBe('Hello from release 2!');
    await writeFile(path.join(root, 'release-2', 'greeting.md'), 'Edited in release 2.\n');
    await expect.poll(() => greeting(store), WAIT).toBe('Edited in release 2.');
  });

  test('a Kubernetes ConfigMap update (..data swapped atomically): the new version is read', async () => {
    const dir = path.join(await tempRoot(), 'config');
    await writeConfigMapVersion(dir, '000000001', FILES);
    const { logger, said } = capturedLogger();
    const store = await openWatched(dir, logger);
    expect(greeting(store)).toBe('Hello from the first version!');

    await writeConfigMapVersion(dir, '000000002', { ...FILES, 'greeting.md': 'Hello from the ConfigMap update!\n' });
    // The kubelet removes the old version once the new one is in place.
    await rm(path.join(dir, '..2026_11_23_10_00_00.000000001'), { recursive: true });
    await expect.poll(() => greeting(store), WAIT).toBe('Hello from the ConfigMap update!');
    expect(said('prompts reloaded')).toHaveLength(1);
  });

  test('a removed folder: one warning, the last good version stays; re-created, it is read again', async () => {
    const dir = path.join(await tempRoot(), 'prompts');
    await writeFolder(dir, FILES);
    const { logger, lines, said } = capturedLogger();
    const store = await openWatched(dir, logger);
    const before = store.current;

    await rm(dir, { recursive: true });
    await vi.waitFor(() => expect(said('prompts folder is gone; keeping the last good version until it is back')).toHaveLength(1), WAIT);
    expect(await store.reload()).toMatchObject({ ok: false });
    expect(store.current).toBe(before);
    // Nothing happens that could be awaited: several checks must pass without a second warning.
    await sleep(CHECK_INTERVAL_MS * 6);
    expect(said('prompts folder is gone; keeping the last good version until it is back')).toHaveLength(1);
    expect(greeting(store)).toBe('Hello from the first version!');

    await writeFolder(dir, { ...FILES, 'greeting.md': 'Hello, the folder is back!\n' });
    await expect.poll(() => greeting(store), WAIT).toBe('Hello, the folder is back!');
    const back = lines.findIndex((l) => l.msg === 'prompts folder is back');
    expect(back).toBeGreaterThanOrEqual(0);
    expect(lines.findIndex((l) => l.msg === 'prompts reloaded')).toBeGreaterThan(back);
    expect(said('prompts folder is gone; keeping the last good version until it is back')).toHaveLength(1);
    expect(said('prompts folder is gone; keeping the last good version until it is back')[0]?.level).toBe(WARN);
  });

  test("editors' temporary files reload quietly; only a changed text is logged", async () => {
    const dir = path.join(await tempRoot(), 'prompts');
    await writeFolder(dir, FILES);
    const { logger, said } = capturedLogger();
    const store = await openWatched(dir, logger);
    const before = store.current;
    const reload = vi.spyOn(store, 'reload');

    // What vim writes to test a folder, and its swap file.
    await writeFile(path.join(dir, '4913'), '');
    await writeFile(path.join(dir, '.greeting.md.swp'), 'swap');
    await vi.waitFor(() => expect(reload).toHaveBeenCalled(), WAIT);
    await reload.mock.results[0]?.value;
    expect(said('prompts reloaded')).toEqual([]);
    expect(store.current).toBe(before);

    await writeFile(path.join(dir, 'greeting.md'), 'Hello, edited!\n');
    await expect.poll(() => greeting(store), WAIT).toBe('Hello, edited!');
    expect(said('prompts reloaded')).toHaveLength(1);
  });

  test('a broken edit is warned about once, however many events follow', async () => {
    const dir = path.join(await tempRoot(), 'prompts');
    await writeFolder(dir, FILES);
    const { logger, said } = capturedLogger();
    const store = await openWatched(dir, logger);

    // Saved in one step, as editors do, so no reload can see a half-written file.
    await writeFile(path.join(dir, '.greeting.md.tmp'), 'Hello {{oops\n');
    await rename(path.join(dir, '.greeting.md.tmp'), path.join(dir, 'greeting.md'));
    await vi.waitFor(() => expect(said('prompts not reloaded; keeping the last good version')).toHaveLength(1), WAIT);
    expect(await store.reload()).toMatchObject({ ok: false });
    expect(await store.reload()).toMatchObject({ ok: false });
    expect(said('prompts not reloaded; keeping the last good version')).toHaveLength(1);
    expect(greeting(store)).toBe('Hello from the first version!');
  });

  test('after close() nothing reloads by itself', async () => {
    const root = await tempRoot();
    const dir = path.join(root, 'prompts');
    await writeFolder(dir, FILES);
    const { logger, lines } = capturedLogger();
    const store = await openWatched(dir, logger);
    store.close();
    const logged = lines.length;

    await rm(dir, { recursive: true });
    await writeFolder(dir, { ...FILES, 'greeting.md': 'Nobody should read this.\n' });
    // Nothing to await: the absence of a reload can only be seen after several checks would have run.
    await sleep(CHECK_INTERVAL_MS * 6);
    expect(lines.slice(logged)).toEqual([]);
    expect(greeting(store)).toBe('Hello from the first version!');
  });
});
