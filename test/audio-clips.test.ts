import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError } from '../src/errors.js';
import { checkPromptsFolder, PromptStore } from '../src/prompts/prompt-store.js';
import { checkWav } from '../src/prompts/wav.js';

import { childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';

const run = promisify(execFile);
const logger = pino({ level: 'silent' });
const FIX = 'the voice service plays 16 kHz mono 16-bit PCM WAV (convert: ffmpeg -i in.wav -ar 16000 -ac 1 -c:a pcm_s16le out.wav)';
const WAIT = { timeout: 3000, interval: 20 };

interface WavShape {
  rate?: number;
  channels?: number;
  bits?: number;
  /** Bytes of audio; 16 kHz mono 16-bit is 32 bytes a millisecond. */
  dataBytes?: number;
  format?: number;
  /** WAVE_FORMAT_EXTENSIBLE with this subformat code instead of a plain format code. */
  extensible?: number;
  /** A chunk before fmt, as many tools write one. */
  listChunk?: boolean;
}

/** A WAV file built byte by byte, so each test says exactly what is in it. */
function wav({ rate = 16_000, channels = 1, bits = 16, dataBytes = 12_800, format = 1, extensible, listChunk }: WavShape = {}): Buffer {
  const fmt = Buffer.alloc(extensible === undefined ? 16 : 40);
  fmt.writeUInt16LE(extensible === undefined ? format : 0xfffe, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(rate, 4);
  fmt.writeUInt32LE((rate * channels * bits) / 8, 8);
  fmt.writeUInt16LE((channels * bits) / 8, 12);
  fmt.writeUInt16LE(bits, 14);
  if (extensible !== undefined) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(bits, 18);
    fmt.writeUInt32LE(channels === 1 ? 4 : 3, 20);
    Buffer.from([extensible, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71]).copy(fmt, 24);
  }
  const data = Buffer.alloc(dataBytes);
  for (let i = 0; i + 1 < dataBytes; i += 2) data.writeInt16LE(Math.round(Math.sin(i / 7) * 8000), i);
  const chunks = [
    ...(listChunk ? [chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00test\x00', 'latin1'))] : []),
    chunk('fmt ', fmt),
    chunk('data', data),
  ];
  const body = Buffer.concat(chunks);
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(4 + body.length, 4);
  header.write('WAVE', 8, 'latin1');
  return Buffer.concat([header, body]);
}

function chunk(id: string, content: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(content.length, 4);
  return Buffer.concat([head, content, content.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

const FILES: Record<string, string> = {
  'greeting.md': 'Hello from the test!\n',
};

function systemWith(audio: string): string {
  return `---\naudio:\n${audio}\n---\nYou are a test assistant.\n`;
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'hotline-audio-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let folders = 0;
/** A prompts folder under `root`, so concurrent tests never share one and afterAll removes them all. */
async function promptsFolder(system: string, clips: Record<string, Buffer | string> = {}): Promise<string> {
  const dir = path.join(root, `prompts-${++folders}`);
  await mkdir(dir);
  for (const [name, text] of Object.entries({ ...FILES, 'system.md': system })) await writeFile(path.join(dir, name), text);
  for (const [name, bytes] of Object.entries(clips)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), bytes);
  }
  return dir;
}

async function openStore(dir: string, options: { watch?: boolean; checkIntervalMs?: number } = {}): Promise<PromptStore> {
  const store = await PromptStore.open(dir, logger, options);
  cleanups.push(() => store.close());
  return store;
}

describe('checkWav', () => {
  test('16 kHz mono 16-bit PCM: its length from the data chunk', () => {
    expect(checkWav(wav())).toEqual({ ok: true, durationMs: 400 });
    expect(checkWav(wav({ dataBytes: 32 * 1500, listChunk: true }))).toEqual({ ok: true, durationMs: 1500 });
    expect(checkWav(wav({ extensible: 1 }))).toEqual({ ok: true, durationMs: 400 });
  });

  test.each([
    ['44.1 kHz stereo', wav({ rate: 44_100, channels: 2 }), `is 44100 Hz stereo; ${FIX}`],
    ['8 kHz', wav({ rate: 8000 }), `is 8000 Hz; ${FIX}`],
    ['8-bit', wav({ bits: 8 }), `is 8-bit; ${FIX}`],
    ['float', wav({ format: 3, bits: 32 }), `is floating-point audio, not PCM; ${FIX}`],
    ['extensible float', wav({ extensible: 3 }), `is format 0xfffe audio, not PCM; ${FIX}`],
    ['µ-law', wav({ format: 7, bits: 8 }), `is µ-law audio, not PCM; ${FIX}`],
    ['an MP3 file', Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), `is not a WAV file (it does not start with a RIFF/WAVE header); ${FIX}`],
    ['no data chunk', wav().subarray(0, 36), 'has no data chunk, so there is no audio in it; export it again'],
    ['an empty data chunk', wav({ dataBytes: 0 }), 'has no audio (its data chunk is empty); export it again'],
    ['cut in the data', wav().subarray(0, 44 + 6400), 'is truncated (its data chunk announces 12800 bytes but only 6400 follow); export or copy it again'],
    ['cut in the format chunk', wav().subarray(0, 30), 'is truncated (its format chunk); export or copy it again'],
    ['cut in a chunk header', wav().subarray(0, 40), 'is truncated (it ends in the middle of a chunk); export or copy it again'],
  ])('%s is refused', (_what, bytes, problem) => {
    expect(checkWav(bytes)).toEqual({ ok: false, problem });
  });
});

describe('clips named in system.md', () => {
  test('a good clip is loaded: the whole file as base64, and its length', async () => {
    const bytes = wav({ dataBytes: 32 * 250 });
    const dir = await promptsFolder(systemWith('  transfer: audio/chime.wav'), { 'audio/chime.wav': bytes });
    const prompts = (await openStore(dir)).current;
    const clip = prompts.audio('transfer');
    expect(clip).toMatchObject({ file: 'audio/chime.wav', durationMs: 250 });
    expect(Buffer.from(clip!.base64, 'base64').equals(bytes)).toBe(true);
    expect(prompts.audio('hold')).toBeUndefined();
    expect((await checkPromptsFolder(dir)).files[0]?.problems).toEqual([]);
  });

  test('the shipped chime is a valid clip of about 0.4 s', async () => {
    expect(checkWav(await readFile(path.resolve('prompts/audio/transfer-chime.wav')))).toEqual({ ok: true, durationMs: 400 });
  });

  test('no audio configured: no clips', async () => {
    const prompts = (await openStore(await promptsFolder('You help.\n'))).current;
    expect(prompts.audio('transfer')).toBeUndefined();
    expect(prompts.audio('hold')).toBeUndefined();
  });

  test('a clip that cannot be played stops the start, as other system.md errors do', async () => {
    const dir = await promptsFolder(systemWith('  hold: hold.wav'), { 'hold.wav': wav({ rate: 8000 }) });
    const failure = PromptStore.open(dir, logger);
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(`PROMPTS_DIR ${dir}: system.md: audio.hold: hold.wav is 8000 Hz; ${FIX}`);
  });
});

describe('npm run prompts:check reports each clip that cannot be played', () => {
  const cli = (dir: string) =>
    run(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv() }).then(
      () => expect.unreachable('prompts:check passed'),
      (error: unknown) => error as { code: number; stdout: string },
    );

  test.concurrent.each([
    ['stereo', 'audio/chime.wav', { 'audio/chime.wav': wav({ rate: 44_100, channels: 2 }) }, `audio/chime.wav is 44100 Hz stereo; ${FIX}`],
    ['8 kHz', 'audio/chime.wav', { 'audio/chime.wav': wav({ rate: 8000 }) }, `audio/chime.wav is 8000 Hz; ${FIX}`],
    ['8-bit', 'audio/chime.wav', { 'audio/chime.wav': wav({ bits: 8 }) }, `audio/chime.wav is 8-bit; ${FIX}`],
    ['not RIFF', 'chime.wav', { 'chime.wav': 'not audio at all' }, `chime.wav is not a WAV file (it does not start with a RIFF/WAVE header); ${FIX}`],
    [
      'truncated',
      'audio/chime.wav',
      { 'audio/chime.wav': wav().subarray(0, 1000) },
      'audio/chime.wav is truncated (its data chunk announces 12800 bytes but only 956 follow); export or copy it again',
    ],
    [
      'too big',
      'audio/long.wav',
      { 'audio/long.wav': wav({ dataBytes: 2 * 1024 * 1024 }) },
      'audio/long.wav is 2097196 bytes; a clip may be at most 2 MiB (2097152 bytes, about 65 s of 16 kHz mono 16-bit audio): shorten it',
    ],
    [
      'missing',
      'audio/nope.wav',
      {},
      'audio/nope.wav does not exist; put the clip there (paths are relative to the prompts folder) or remove the line',
    ],
    [
      'outside the folder',
      'audio/../../secret.wav',
      {},
      'audio/../../secret.wav is outside the prompts folder; put the clip inside it and write its path from there, such as audio/transfer-chime.wav',
    ],
    [
      'an absolute path',
      '/etc/hotline/chime.wav',
      {},
      '/etc/hotline/chime.wav is an absolute path; write it relative to the prompts folder, such as audio/transfer-chime.wav',
    ],
    ['a folder', 'audio', { 'audio/x.wav': wav() }, 'audio is not a file; name a WAV file'],
  ])('%s', async (_what, file, clips, problem) => {
    const dir = await promptsFolder(systemWith(`  transfer: ${file}`), clips);
    const failure = await cli(dir);
    expect(failure.code).toBe(1);
    const lines = failure.stdout.trimEnd().split('\n');
    expect(lines[1]).toBe('system.md: (no placeholders)');
    expect(lines[2]).toBe(`  error: audio.transfer: ${problem}`);
    expect(lines[3]).not.toMatch(/^ {2}/);
  }, 30_000);
});

test('npm run prompts:check lists each playable clip with its length', async () => {
  const dir = await promptsFolder(systemWith('  transfer: audio/chime.wav'), { 'audio/chime.wav': wav({ dataBytes: 32 * 1250 }) });
  // Exits 1 for the prompt files this folder leaves out; the clip is what is looked at here.
  const { stdout } = await run(process.execPath, tsxArgs('src/cli/prompts-check.ts', dir), { cwd: isolatedCwd(), env: childEnv() }).catch(
    (error: unknown) => error as { stdout: string },
  );
  const lines = stdout.trimEnd().split('\n');
  expect(lines.at(-2)).toBe('audio.transfer: audio/chime.wav (1.3 s)');
  expect(lines.filter((l) => l.startsWith('  error'))).toEqual([]);
}, 30_000);

describe('a replaced clip', () => {
  test('is picked up by reload(); a broken replacement keeps the last good version', async () => {
    const dir = await promptsFolder(systemWith('  transfer: audio/chime.wav'), { 'audio/chime.wav': wav({ dataBytes: 32 * 400 }) });
    const store = await openStore(dir);
    const first = store.current;
    expect(await store.reload()).toMatchObject({ ok: true });
    expect(store.current).toBe(first);

    await writeFile(path.join(dir, 'audio/chime.wav'), wav({ dataBytes: 32 * 700 }));
    expect(await store.reload()).toMatchObject({ ok: true });
    expect(store.current).not.toBe(first);
    expect(store.current.audio('transfer')?.durationMs).toBe(700);
    expect(first.audio('transfer')?.durationMs).toBe(400);

    await writeFile(path.join(dir, 'audio/chime.wav'), wav({ channels: 2 }));
    const broken = await store.reload();
    expect(broken.ok).toBe(false);
    expect(broken.problems.filter((p) => p.severity === 'error')).toEqual([
      { file: 'system.md', severity: 'error', message: `audio.transfer: audio/chime.wav is stereo; ${FIX}` },
    ]);
    expect(store.current.audio('transfer')?.durationMs).toBe(700);
  });

  test('in a subfolder, is picked up by the folder watch', async () => {
    const dir = await promptsFolder(systemWith('  transfer: audio/chime.wav'), { 'audio/chime.wav': wav({ dataBytes: 32 * 400 }) });
    const store = await openStore(dir, { watch: true, checkIntervalMs: 50 });

    // Saved the way editors and copy tools do it: a temporary file renamed over the old one.
    await writeFile(path.join(dir, 'audio/.chime.wav.tmp'), wav({ dataBytes: 32 * 900 }));
    await rename(path.join(dir, 'audio/.chime.wav.tmp'), path.join(dir, 'audio/chime.wav'));
    await expect.poll(() => store.current.audio('transfer')?.durationMs, WAIT).toBe(900);

    await writeFile(path.join(dir, 'audio/chime.wav'), wav({ dataBytes: 32 * 300 }));
    await expect.poll(() => store.current.audio('transfer')?.durationMs, WAIT).toBe(300);
  });

  test('a clip folder that appears after system.md names it is watched too', async () => {
    const dir = await promptsFolder('You help.\n');
    const store = await openStore(dir, { watch: true, checkIntervalMs: 50 });

    await writeFile(path.join(dir, 'system.md'), systemWith('  hold: sounds/new/hold.wav'));
    await mkdir(path.join(dir, 'sounds/new'), { recursive: true });
    await writeFile(path.join(dir, 'sounds/new/hold.wav'), wav({ dataBytes: 32 * 1200 }));
    await expect.poll(() => store.current.audio('hold')?.durationMs, WAIT).toBe(1200);

    await writeFile(path.join(dir, 'sounds/new/hold.wav'), wav({ dataBytes: 32 * 600 }));
    await expect.poll(() => store.current.audio('hold')?.durationMs, WAIT).toBe(600);
  });
});
