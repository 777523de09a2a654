import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadClips, type AudioClip } from './audio-clips.js';
import { isBuiltinName } from './builtins.js';
import { parseFrontMatter, parseLineFrontMatter, type FrontMatterProblem } from './front-matter.js';
import { PROMPT_FILE_NAMES, PROMPT_FILES, REPORT_PROMPT_FILE, REQUIRED_FILES, type PromptFileSpec } from './prompt-files.js';
import type { SpeakStyle } from './speak-style.js';
import type { AudioName, AudioPaths, PromptSettings } from './system-settings.js';
import { earlyPlaceholder, LOST_PREFIX_WARNING_BYTES } from './static-prefix.js';
import { compileTemplate, Template, TemplateSyntaxError, type PlaceholderPart } from './template.js';

export interface PromptProblem {
  file: string;
  severity: 'error' | 'warning';
  message: string;
}

/** One file as read from disk; `template` only if the file has no errors. */
export interface LoadedFile {
  readonly spec: PromptFileSpec;
  /** As read; undefined if it could not be. */
  readonly text: string | undefined;
  readonly placeholders: string[];
  readonly problems: PromptProblem[];
  readonly template: Template | undefined;
  /** system.md only. */
  readonly settings: PromptSettings | undefined;
  /** system.md only: the clips it names, not yet read. */
  readonly audio: AudioPaths;
  /** Every other file: how its own front matter says its line is spoken. */
  readonly style: SpeakStyle | undefined;
}

export interface FileReport {
  file: string;
  placeholders: string[];
  problems: PromptProblem[];
}

export interface FolderLoad {
  readonly files: readonly LoadedFile[];
  /** The clips system.md names, each read and checked; a clip with a problem is left out. */
  readonly clips: Partial<Record<AudioName, AudioClip>>;
  /** Folders below the prompts folder that hold clips: a change there must be noticed too. */
  readonly clipFolders: readonly string[];
  /** Every file with its placeholders and problems, in a stable order; folder-level problems included. */
  readonly reports: readonly FileReport[];
  readonly problems: readonly PromptProblem[];
  /** Why the folder itself is unusable and how to fix that, worded to follow its path; undefined if it could be read. */
  readonly folderError: string | undefined;
  /** Equal for equal texts, clips and problems: tells a real edit from the noise of editors' temporary files. */
  readonly fingerprint: string;
}

/** The fix for a PROMPTS_DIR that is no usable folder. */
export const POINT_ELSEWHERE = `set PROMPTS_DIR to the folder with ${REQUIRED_FILES} (the shipped one is ./prompts)`;

export async function loadFolder(dir: string): Promise<FolderLoad> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    return unreadableFolder(dir, error);
  }
  const files = await Promise.all(PROMPT_FILES.map((spec) => loadFile(dir, spec)));
  const system = files.find((f) => f.spec.name === 'system');
  const clipLoad = await loadClips(dir, system?.audio ?? {});
  // A clip that cannot be played is system.md's error: that is where it is named, and where it is fixed.
  for (const message of clipLoad.problems) system?.problems.push({ file: 'system.md', severity: 'error', message });

  const reports: FileReport[] = files.map((f) => ({ file: f.spec.file, placeholders: f.placeholders, problems: f.problems }));
  for (const file of strayMarkdownFiles(entries)) {
    reports.push({
      file,
      placeholders: [],
      problems: [{ file, severity: 'warning', message: `is not read by Hotline (prompt files are ${PROMPT_FILE_NAMES.join(', ')})` }],
    });
  }
  const problems = reports.flatMap((r) => r.problems);
  return {
    files,
    clips: clipLoad.clips,
    clipFolders: clipLoad.folders,
    reports,
    problems,
    folderError: undefined,
    fingerprint: fingerprint(files.map((f) => f.text), clipLoad.hashes, problems),
  };
}

function unreadableFolder(dir: string, error: unknown): FolderLoad {
  const code = errorCode(error);
  const [message, folderError] =
    code === 'ENOENT'
      ? ['prompts folder not found', `does not exist: ${POINT_ELSEWHERE}`]
      : code === 'ENOTDIR'
        ? ['prompts folder is a file, not a folder', `is not a folder: ${POINT_ELSEWHERE}`]
        : [
            `prompts folder cannot be read: ${describe(error)}`,
            `cannot be read (${describe(error)}): let the user Hotline runs as read it, or ${POINT_ELSEWHERE}`,
          ];
  const problem: PromptProblem = { file: dir, severity: 'error', message };
  return {
    files: [],
    clips: {},
    clipFolders: [],
    reports: [{ file: dir, placeholders: [], problems: [problem] }],
    problems: [problem],
    folderError,
    fingerprint: fingerprint([], {}, [problem]),
  };
}

export function fingerprint(
  texts: readonly (string | undefined)[],
  clips: Partial<Record<AudioName, string>>,
  problems: readonly PromptProblem[],
): string {
  return createHash('sha256')
    .update(JSON.stringify({ texts: texts.map((t) => t ?? null), clips, problems }))
    .digest('hex');
}

/** A misspelt file name would otherwise be ignored without a word. */
function strayMarkdownFiles(entries: string[]): string[] {
  return entries
    .filter((e) => e.toLowerCase().endsWith('.md') && !PROMPT_FILE_NAMES.includes(e))
    // A README beside the prompts documents them; it is not a misspelt prompt.
    .filter((e) => e.toLowerCase() !== 'readme.md')
    // The call reports read report.md themselves, for each report: it is no prompt of the calls.
    .filter((e) => e !== REPORT_PROMPT_FILE)
    .sort();
}

async function loadFile(dir: string, spec: PromptFileSpec): Promise<LoadedFile> {
  const problems: PromptProblem[] = [];
  const report = ({ severity, message }: FrontMatterProblem): void => {
    problems.push({ file: spec.file, severity, message });
  };
  const optional = spec.fallback !== undefined;
  let text: string | undefined;
  const unusable = (): LoadedFile => ({
    spec,
    text,
    placeholders: [],
    problems,
    template: undefined,
    settings: undefined,
    audio: {},
    style: undefined,
  });

  try {
    text = (await readFile(path.join(dir, spec.file), 'utf8')).replace(/^\uFEFF/, '');
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') report({ severity: 'error', message: `cannot be read: ${describe(error)}` });
    else if (optional) report({ severity: 'warning', message: 'is missing; the built-in default is used' });
    else report({ severity: 'error', message: 'is missing' });
    return unusable();
  }

  // system.md's header configures the call; any other file's, how that file's line is spoken. Neither is said aloud.
  const header = spec.name === 'system' ? parseFrontMatter(text) : parseLineFrontMatter(text);
  header.problems.forEach(report);
  const { body, bodyLine: firstLine } = header;
  if (body.trim() === '') {
    if (optional) report({ severity: 'warning', message: 'is empty; the built-in default is used' });
    else report({ severity: 'error', message: 'is empty' });
    return unusable();
  }

  let template: Template;
  try {
    template = compileTemplate(body, { firstLine });
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    for (const issue of error.issues) {
      report({ severity: 'error', message: `line ${issue.line}, column ${issue.column}: ${issue.message}` });
    }
    return unusable();
  }
  for (const part of holesWithoutDefault(template)) {
    report({
      severity: 'warning',
      message:
        `line ${part.line}, column ${part.column}: {{${part.name}}} is not a built-in variable and has no default, ` +
        `so a call without it would hear a gap; write {{${part.name}|…}}`,
    });
  }
  const early = spec.name === 'system' ? earlyPlaceholder(template) : undefined;
  if (early && early.lostBytes >= LOST_PREFIX_WARNING_BYTES) {
    const { placeholder, prefixBytes, lostBytes } = early;
    report({
      severity: 'warning',
      message:
        `line ${placeholder.line}, column ${placeholder.column}: {{${placeholder.name}}} differs from call to call and comes before ` +
        `${bytes(lostBytes)} of text that does not: a provider caches a prompt only up to its first difference, so ` +
        `${bytes(prefixBytes)} can be cached instead of ${bytes(prefixBytes + lostBytes)}; ` +
        'move the lines with placeholders to the end of system.md',
    });
  }
  const failed = problems.some((p) => p.severity === 'error');
  return {
    spec,
    text,
    placeholders: [...template.placeholders],
    problems,
    template: failed ? undefined : template,
    settings: 'settings' in header ? header.settings : undefined,
    audio: 'audio' in header ? header.audio : {},
    style: 'style' in header ? header.style : undefined,
  };
}

function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} bytes`;
}

/** The first use of each name that has neither a built-in value nor a default. */
function holesWithoutDefault(template: Template): PlaceholderPart[] {
  const seen = new Set<string>();
  const holes: PlaceholderPart[] = [];
  for (const part of template.parts) {
    if (part.kind !== 'placeholder' || part.defaultValue !== undefined || isBuiltinName(part.name)) continue;
    if (seen.has(part.name)) continue;
    seen.add(part.name);
    holes.push(part);
  }
  return holes;
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
