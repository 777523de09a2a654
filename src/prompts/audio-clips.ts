import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { AUDIO_NAMES, type AudioName, type AudioPaths } from './system-settings.js';
import { checkWav, MAX_CLIP_BYTES, tooBig } from './wav.js';

/** A clip ready to send: the audio action carries the whole WAV file as base64. */
export interface AudioClip {
  /** As written in system.md, relative to the prompts folder. */
  file: string;
  base64: string;
  durationMs: number;
}

export interface ClipLoad {
  clips: Partial<Record<AudioName, AudioClip>>;
  /** One message per clip that cannot be played, naming the key, the file, what is wrong and the fix. */
  problems: string[];
  /** A hash of every clip read: replacing a clip must count as a change of the folder, as editing a text does. */
  hashes: Partial<Record<AudioName, string>>;
  /** Folders below the prompts folder on the way to a clip: a watch on the prompts folder does not see inside them. */
  folders: string[];
}

/** Reads and checks every clip system.md names; paths must stay inside `dir`. */
export async function loadClips(dir: string, paths: AudioPaths): Promise<ClipLoad> {
  const load: ClipLoad = { clips: {}, problems: [], hashes: {}, folders: [] };
  const folders = new Set<string>();
  await Promise.all(
    AUDIO_NAMES.map(async (name) => {
      const written = paths[name];
      if (written === undefined) return;
      const inside = insideFolder(dir, written);
      if (typeof inside !== 'string') {
        load.problems.push(`audio.${name}: ${written} ${inside.problem}`);
        return;
      }
      for (let folder = path.dirname(inside); folder !== '.'; folder = path.dirname(folder)) folders.add(path.join(dir, folder));
      const read = await readClip(path.join(dir, inside));
      if ('problem' in read) {
        load.problems.push(`audio.${name}: ${written} ${read.problem}`);
        return;
      }
      load.hashes[name] = createHash('sha256').update(read.bytes).digest('hex');
      load.clips[name] = Object.freeze({ file: written, base64: read.bytes.toString('base64'), durationMs: read.durationMs });
    }),
  );
  // Clips are read in parallel; the report must not depend on which finished first.
  load.problems.sort();
  load.folders = [...folders].sort();
  return load;
}

/**
 * The path relative to `dir`, or why it is not acceptable. A clip from
 * anywhere else on the machine would ship a file nobody reviewed with the
 * prompts, or read one they must not.
 */
function insideFolder(dir: string, written: string): string | { problem: string } {
  const example = 'such as audio/transfer-chime.wav';
  if (path.isAbsolute(written)) return { problem: `is an absolute path; write it relative to the prompts folder, ${example}` };
  const relative = path.relative(dir, path.resolve(dir, written));
  if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`)) {
    return { problem: `is outside the prompts folder; put the clip inside it and write its path from there, ${example}` };
  }
  return relative;
}

async function readClip(file: string): Promise<{ bytes: Buffer; durationMs: number } | { problem: string }> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return { problem: 'does not exist; put the clip there (paths are relative to the prompts folder) or remove the line' };
    }
    return { problem: `cannot be read: ${describe(error)}` };
  }
  try {
    // Size before content: a huge file by mistake must not be read into memory on every reload.
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: 'is not a file; name a WAV file' };
    if (stats.size > MAX_CLIP_BYTES) return { problem: tooBig(stats.size) };
    const bytes = await handle.readFile();
    const check = checkWav(bytes);
    return check.ok ? { bytes, durationMs: check.durationMs } : { problem: check.problem };
  } catch (error) {
    return { problem: `cannot be read: ${describe(error)}` };
  } finally {
    await handle.close();
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
