import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadClips, type AudioClip } from './audio-clips.js';
import { describe, errorCode, type PromptProblem } from './prompt-problem.js';
import { isLanguageFolderName, languageName, normaliseTag } from '../language/language-tag.js';
import { isBuiltinName } from './builtins.js';
import { LANGUAGES_FILE, NO_ROUTING, parseLanguages, type LanguageRouting } from './language-settings.js';
import { parseVocabulary, VOCABULARY_FILE } from './vocabulary.js';
import { NO_PRONUNCIATIONS, PRONUNCIATIONS_FILE, type Pronouncer } from './pronunciations.js';
import { readPronunciations } from './pronunciations-file.js';
import { parseFrontMatter, parseLineFrontMatter, type FrontMatterProblem } from './front-matter.js';
import { PROMPT_FILE_NAMES, PROMPT_FILES, REPORT_PROMPT_FILE, REQUIRED_FILES, type PromptFileSpec } from './prompt-files.js';
import type { SpeakStyle } from './speak-style.js';
import type { AudioName, AudioPaths, PromptSettings } from './system-settings.js';
import { earlyPlaceholder, LOST_PREFIX_WARNING_BYTES } from './static-prefix.js';
import { compileTemplate, Template, TemplateSyntaxError, type PlaceholderPart } from './template.js';

export type { PromptProblem } from './prompt-problem.js';

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
  /** What the file holds, where placeholders do not say it (a vocabulary's terms, a language folder). */
  summary?: string;
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
  /** The language folders, by name. */
  readonly languages: readonly LanguageLoad[];
  /** languages.yaml, or what routes calls without one. */
  readonly routing: LanguageRouting;
  /** vocabulary.txt's terms: what the recogniser is told to expect in every language. */
  readonly vocabulary: readonly string[];
  /** pronunciations.yaml: how the business's names are said, in every language. */
  readonly pronouncer: Pronouncer;
}

/** The fix for a PROMPTS_DIR that is no usable folder. */
export const POINT_ELSEWHERE = `set PROMPTS_DIR to the folder with ${REQUIRED_FILES} (the shipped one is ./prompts)`;

/** A language folder (prompts/de/): its own files over the default folder's, for calls in that language. */
export interface LanguageLoad {
  /** As the folder is named, normalised: `de`, `de-AT`. */
  readonly tag: string;
  readonly dir: string;
  readonly files: readonly LoadedFile[];
  readonly clips: Partial<Record<AudioName, AudioClip>>;
  /** Its own vocabulary.txt's terms, before the default folder's are added. */
  readonly vocabulary: readonly string[];
  /** Its own pronunciations.yaml, before the default folder's are layered beneath. */
  readonly pronouncer: Pronouncer;
}

export async function loadFolder(dir: string): Promise<FolderLoad> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    return unreadableFolder(dir, error);
  }
  const own = await loadFiles(dir, entries.map((e) => e.name), undefined, '');
  const routingText = await readOptional(dir, LANGUAGES_FILE);
  const routing = routingText === undefined ? { routing: NO_ROUTING, problems: [] } : parseLanguages(routingText, normaliseTag);
  const vocabulary = await loadVocabulary(dir, '');
  const pronunciations = await readPronunciations(dir);
  const languages: LanguageLoad[] = [];
  const reports = [...own.reports, ...vocabulary.reports, ...pronunciationReport(PRONUNCIATIONS_FILE, pronunciations)];
  const texts: (string | undefined)[] = [...own.files.map((f) => f.text), routingText, vocabulary.text, pronunciations.text];
  const clipHashes: Record<string, string> = { ...own.clipHashes };
  const folders = [...own.clipFolders];
  for (const entry of entries.filter((e) => e.isDirectory() && isLanguageFolderName(e.name)).sort((a, b) => a.name.localeCompare(b.name))) {
    const tag = normaliseTag(entry.name)!;
    const langDir = path.join(dir, entry.name);
    let langEntries: string[];
    try {
      langEntries = await readdir(langDir);
    } catch (error) {
      const problem: PromptProblem = { file: `${entry.name}/`, severity: 'error', message: `cannot be read: ${describe(error)}` };
      reports.push({ file: problem.file, placeholders: [], problems: [problem] });
      continue;
    }
    const load = await loadFiles(langDir, langEntries, own, `${entry.name}/`);
    const langVocabulary = await loadVocabulary(langDir, `${entry.name}/`);
    const langFile = `${entry.name}/${PRONUNCIATIONS_FILE}`;
    const langPronunciations = await readPronunciations(langDir, langFile);
    languages.push({ tag, dir: langDir, files: load.files, clips: load.clips, vocabulary: langVocabulary.terms, pronouncer: langPronunciations.pronouncer });
    reports.push(languageReport(entry.name, tag, load, [...langVocabulary.reports, ...pronunciationReport(langFile, langPronunciations)]));
    texts.push(`${tag}:`, ...load.files.map((f) => f.text), langVocabulary.text, langPronunciations.text);
    for (const [name, hash] of Object.entries(load.clipHashes)) clipHashes[`${tag}/${name}`] = hash;
    folders.push(langDir, ...load.clipFolders);
  }
  if (routingText !== undefined) {
    const { default: main, detect, lines } = routing.routing;
    const summary = `default ${main}, ${detect ? 'switches with the caller' : 'no switching'}, ${lines.size} ${lines.size === 1 ? 'line' : 'lines'}`;
    reports.push({ file: LANGUAGES_FILE, placeholders: [], problems: routing.problems, summary });
  }
  const problems = reports.flatMap((r) => r.problems);
  return {
    files: own.files,
    clips: own.clips,
    clipFolders: [...new Set(folders)],
    reports,
    problems,
    folderError: undefined,
    fingerprint: fingerprint(texts, clipHashes, problems),
    languages,
    routing: routing.routing,
    vocabulary: vocabulary.terms,
    pronouncer: pronunciations.pronouncer,
  };
}

interface FilesLoad {
  readonly files: LoadedFile[];
  readonly clips: Partial<Record<AudioName, AudioClip>>;
  readonly clipFolders: readonly string[];
  readonly clipHashes: Partial<Record<AudioName, string>>;
  readonly reports: FileReport[];
}

/**
 * The prompt files of one folder. A language folder (`base` given) needs none of its own: what it
 * lacks is the default folder's, without a word; `prefix` names its files in problems (`de/`).
 */
async function loadFiles(dir: string, entries: readonly string[], base: FilesLoad | undefined, prefix: string): Promise<FilesLoad> {
  const files = await Promise.all(
    PROMPT_FILES.map((spec) => {
      const inherited = base?.files.find((f) => f.spec === spec);
      if (inherited && !entries.includes(spec.file)) return inherited;
      return loadFile(dir, spec, prefix);
    }),
  );
  const system = files.find((f) => f.spec.name === 'system');
  // A language folder with its own system.md plays the clips it names; without, the default folder's.
  const ownSystem = base === undefined || entries.includes('system.md');
  const clipLoad = ownSystem ? await loadClips(dir, system?.audio ?? {}) : { clips: base.clips, folders: [], hashes: base.clipHashes, problems: [] };
  // A clip that cannot be played is system.md's error: that is where it is named, and where it is fixed.
  for (const message of clipLoad.problems) system?.problems.push({ file: `${prefix}system.md`, severity: 'error', message });
  const own = base === undefined ? files : files.filter((f) => !base.files.includes(f));
  const reports: FileReport[] = own.map((f) => ({ file: `${prefix}${f.spec.file}`, placeholders: f.placeholders, problems: f.problems }));
  for (const file of strayMarkdownFiles([...entries])) {
    reports.push({
      file: `${prefix}${file}`,
      placeholders: [],
      problems: [{ file: `${prefix}${file}`, severity: 'warning', message: `is not read by Hotline (prompt files are ${PROMPT_FILE_NAMES.join(', ')})` }],
    });
  }
  return { files, clips: clipLoad.clips, clipFolders: clipLoad.folders, clipHashes: clipLoad.hashes, reports };
}

async function loadVocabulary(dir: string, prefix: string): Promise<{ terms: readonly string[]; text: string | undefined; reports: FileReport[] }> {
  const text = await readOptional(dir, VOCABULARY_FILE);
  if (text === undefined) return { terms: [], text, reports: [] };
  const file = `${prefix}${VOCABULARY_FILE}`;
  const { terms, problems } = parseVocabulary(text, file);
  return { terms, text, reports: [{ file, placeholders: [], problems, summary: `${terms.length} ${terms.length === 1 ? 'term' : 'terms'}` }] };
}

/**
 * A language folder in one line: how many prompt files are its own, its voice, and every problem of
 * its files, each naming the file (a check lists the folder, not its twenty files).
 */
function languageReport(name: string, tag: string, load: FilesLoad, extra: readonly FileReport[]): FileReport {
  const own = load.reports.filter((r) => PROMPT_FILE_NAMES.some((f) => r.file === `${name}/${f}`)).length;
  const system = load.files.find((f) => f.spec.name === 'system');
  const tts = system?.settings?.style.tts;
  const voice = tts?.voice === undefined ? 'the default voice' : `voice ${typeof tts.voice === 'string' ? tts.voice : tts.voice.name}`;
  const problems = [...load.reports, ...extra].flatMap((r) =>
    r.problems.map((p) => ({ ...p, message: `${r.file.slice(name.length + 1)}: ${p.message}` })),
  );
  const more = extra.map((r) => `${r.file.slice(name.length + 1)}${r.summary ? ` ${r.summary}` : ''}`);
  const summary = [`${languageName(tag)}: ${own} of ${PROMPT_FILE_NAMES.length} prompt files its own`, voice, ...more].join(', ');
  return { file: `${name}/`, placeholders: [], problems, summary };
}

/** A pronunciations file's problems as the folder's report lists them; none for a file that is not there. */
function pronunciationReport(file: string, read: { text: string | undefined; problems: PromptProblem[]; pronouncer: Pronouncer }): FileReport[] {
  if (read.text === undefined && read.problems.length === 0) return [];
  const { size } = read.pronouncer;
  return [{ file, placeholders: [], problems: read.problems, summary: `${size} ${size === 1 ? 'entry' : 'entries'}` }];
}

/** A file Hotline reads when it is there; undefined when it is not. */
async function readOptional(dir: string, file: string): Promise<string | undefined> {
  try {
    return (await readFile(path.join(dir, file), 'utf8')).replace(/^\uFEFF/, '');
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'EISDIR') return undefined;
    throw error;
  }
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
    languages: [],
    routing: NO_ROUTING,
    vocabulary: [],
    pronouncer: NO_PRONUNCIATIONS,
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

async function loadFile(dir: string, spec: PromptFileSpec, prefix = ''): Promise<LoadedFile> {
  const problems: PromptProblem[] = [];
  const report = ({ severity, message }: FrontMatterProblem): void => {
    problems.push({ file: `${prefix}${spec.file}`, severity, message });
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

export { describe, errorCode };
