import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isBuiltinName } from './builtins.js';
import { FolderWatch } from './folder-watch.js';
import { parseFrontMatter, type PromptSettings } from './front-matter.js';
import { compileTemplate, Template, TemplateSyntaxError, type PlaceholderPart, type TemplateVariables } from './template.js';

export type { PromptSettings };

export type PromptName =
  | 'system'
  | 'greeting'
  | 'outboundGreeting'
  | 'outboundGenericGreeting'
  | 'error'
  | 'transferFailed'
  | 'giveUpTransfer'
  | 'giveUp'
  | 'thinking'
  | 'idleGoodbye'
  | 'shutdownGoodbye'
  | 'shutdownTransfer';

export interface PromptProblem {
  file: string;
  severity: 'error' | 'warning';
  message: string;
}

/** An immutable, fully loaded version of the prompts folder. */
export interface PromptSet {
  readonly settings: PromptSettings;
  /** Placeholders each file uses (for prompts:check and docs). */
  readonly placeholders: Record<PromptName, string[]>;
  /** Renders one prompt for one call; missing values render '' and are reported through onMissing. */
  render(name: PromptName, vars: Record<string, string | undefined>, onMissing?: (placeholder: string) => void): string;
  /** True if rendering `name` with `vars` would leave a placeholder without value or default. */
  wouldLeaveEmpty(name: PromptName, vars: Record<string, string | undefined>): boolean;
}

interface PromptFileSpec {
  readonly name: PromptName;
  readonly file: string;
  /** Used when an optional file is missing or empty, so a half-configured folder still gives a working agent. */
  readonly fallback?: string;
}

// Without a system prompt or a greeting, Hotline would not be the agent anyone configured: those have no fallback.
const PROMPT_FILES: readonly PromptFileSpec[] = [
  { name: 'system', file: 'system.md' },
  { name: 'greeting', file: 'greeting.md' },
  {
    name: 'outboundGreeting',
    file: 'outbound-greeting.md',
    fallback: 'Hi {{name|there}}, this is an automated assistant calling about {{topic|your recent request}}. Is now a good time to talk?',
  },
  {
    name: 'outboundGenericGreeting',
    file: 'outbound-generic-greeting.md',
    fallback: 'Hello, this is an automated assistant calling. Is now a good time to talk?',
  },
  {
    name: 'error',
    file: 'error.md',
    fallback: "I'm sorry, I'm having a little trouble right now. Could you say that again?",
  },
  {
    name: 'transferFailed',
    file: 'transfer-failed.md',
    fallback: "I'm sorry, nobody is available to take your call right now. Can I help you with anything else?",
  },
  {
    name: 'giveUpTransfer',
    file: 'give-up-transfer.md',
    fallback: "I'm sorry, I'm having technical trouble. Let me connect you with a colleague.",
  },
  {
    name: 'giveUp',
    file: 'give-up.md',
    fallback: "I'm sorry, I'm having technical trouble and can't help right now. Please call again later. Goodbye.",
  },
  {
    name: 'thinking',
    file: 'thinking.md',
    fallback: 'Let me think about that for a moment.',
  },
  {
    name: 'idleGoodbye',
    file: 'idle-goodbye.md',
    fallback: "I haven't heard from you in a while, so I'll end the call now. Goodbye.",
  },
  {
    name: 'shutdownGoodbye',
    file: 'shutdown-goodbye.md',
    fallback: "I'm sorry, I have to end this call now for maintenance. Please call again in a few minutes. Goodbye.",
  },
  {
    name: 'shutdownTransfer',
    file: 'shutdown-transfer.md',
    fallback: "I'm sorry, I have to hand this call over now. One moment, I'll connect you with a colleague.",
  },
];

export const PROMPT_FILE_NAMES: readonly string[] = PROMPT_FILES.map((spec) => spec.file);

const REQUIRED_FILES = PROMPT_FILES.filter((spec) => spec.fallback === undefined)
  .map((spec) => spec.file)
  .join(' and ');

/** The fix for a PROMPTS_DIR that is no usable folder. */
const POINT_ELSEWHERE = `set PROMPTS_DIR to the folder with ${REQUIRED_FILES} (the shipped one is ./prompts)`;

const FALLBACK_TEMPLATES = new Map(
  PROMPT_FILES.flatMap((spec) => (spec.fallback === undefined ? [] : [[spec.name, compileTemplate(spec.fallback)] as const])),
);

const EMPTY_SETTINGS: PromptSettings = Object.freeze({ transferTargets: Object.freeze({}) });

/** One file as read from disk; `template` only if the file has no errors. */
interface LoadedFile {
  readonly spec: PromptFileSpec;
  /** As read; undefined if it could not be. */
  readonly text: string | undefined;
  readonly placeholders: string[];
  readonly problems: PromptProblem[];
  readonly template: Template | undefined;
  readonly settings: PromptSettings | undefined;
}

interface FileReport {
  file: string;
  placeholders: string[];
  problems: PromptProblem[];
}

interface FolderLoad {
  readonly files: readonly LoadedFile[];
  /** Every file with its placeholders and problems, in a stable order; folder-level problems included. */
  readonly reports: readonly FileReport[];
  readonly problems: readonly PromptProblem[];
  /** Why the folder itself is unusable and how to fix that, worded to follow its path; undefined if it could be read. */
  readonly folderError: string | undefined;
  /** Equal for equal texts and problems: tells a real edit from the noise of editors' temporary files. */
  readonly fingerprint: string;
}

async function loadFolder(dir: string): Promise<FolderLoad> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    return unreadableFolder(dir, error);
  }
  const files = await Promise.all(PROMPT_FILES.map((spec) => loadFile(dir, spec)));
  const reports: FileReport[] = files.map((f) => ({ file: f.spec.file, placeholders: f.placeholders, problems: f.problems }));
  for (const file of strayMarkdownFiles(entries)) {
    reports.push({
      file,
      placeholders: [],
      problems: [{ file, severity: 'warning', message: `is not read by Hotline (prompt files are ${PROMPT_FILE_NAMES.join(', ')})` }],
    });
  }
  const problems = reports.flatMap((r) => r.problems);
  return { files, reports, problems, folderError: undefined, fingerprint: fingerprint(files.map((f) => f.text), problems) };
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
    reports: [{ file: dir, placeholders: [], problems: [problem] }],
    problems: [problem],
    folderError,
    fingerprint: fingerprint([], [problem]),
  };
}

function fingerprint(texts: readonly (string | undefined)[], problems: readonly PromptProblem[]): string {
  return createHash('sha256')
    .update(JSON.stringify({ texts: texts.map((t) => t ?? null), problems }))
    .digest('hex');
}

/** A misspelt file name would otherwise be ignored without a word. */
function strayMarkdownFiles(entries: string[]): string[] {
  return entries
    .filter((e) => e.toLowerCase().endsWith('.md') && !PROMPT_FILE_NAMES.includes(e))
    // A README beside the prompts documents them; it is not a misspelt prompt.
    .filter((e) => e.toLowerCase() !== 'readme.md')
    .sort();
}

async function loadFile(dir: string, spec: PromptFileSpec): Promise<LoadedFile> {
  const problems: PromptProblem[] = [];
  const report = (severity: PromptProblem['severity'], message: string): void => {
    problems.push({ file: spec.file, severity, message });
  };
  const optional = spec.fallback !== undefined;
  let text: string | undefined;
  const unusable = (): LoadedFile => ({ spec, text, placeholders: [], problems, template: undefined, settings: undefined });

  try {
    text = (await readFile(path.join(dir, spec.file), 'utf8')).replace(/^\uFEFF/, '');
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') report('error', `cannot be read: ${describe(error)}`);
    else if (optional) report('warning', 'is missing; the built-in default is used');
    else report('error', 'is missing');
    return unusable();
  }

  let body = text;
  let firstLine = 1;
  let settings: PromptSettings | undefined;
  if (spec.name === 'system') {
    const frontMatter = parseFrontMatter(text);
    for (const p of frontMatter.problems) report(p.severity, p.message);
    ({ body, bodyLine: firstLine, settings } = frontMatter);
  } else if (/^---[ \t]*\r?\n/.test(text)) {
    report('warning', 'starts with "---": front matter is read only in system.md; here it would be spoken');
  }
  if (body.trim() === '') {
    if (optional) report('warning', 'is empty; the built-in default is used');
    else report('error', 'is empty');
    return unusable();
  }

  let template: Template;
  try {
    template = compileTemplate(body, { firstLine });
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    for (const issue of error.issues) report('error', `line ${issue.line}, column ${issue.column}: ${issue.message}`);
    return unusable();
  }
  for (const part of holesWithoutDefault(template)) {
    report(
      'warning',
      `line ${part.line}, column ${part.column}: {{${part.name}}} is not a built-in variable and has no default, ` +
        `so a call without it would hear a gap; write {{${part.name}|…}}`,
    );
  }
  const failed = problems.some((p) => p.severity === 'error');
  return { spec, text, placeholders: [...template.placeholders], problems, template: failed ? undefined : template, settings };
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

class LoadedPromptSet implements PromptSet {
  readonly placeholders: Record<PromptName, string[]>;

  constructor(
    private readonly templates: Readonly<Record<PromptName, Template>>,
    readonly settings: PromptSettings,
    private readonly logger: Logger,
  ) {
    const placeholders = {} as Record<PromptName, string[]>;
    for (const spec of PROMPT_FILES) placeholders[spec.name] = Object.freeze([...templates[spec.name].placeholders]) as string[];
    this.placeholders = Object.freeze(placeholders);
    Object.freeze(this);
  }

  render(name: PromptName, vars: TemplateVariables, onMissing?: (placeholder: string) => void): string {
    const report =
      onMissing ??
      ((placeholder: string) => this.logger.warn({ prompt: name, placeholder }, 'prompt placeholder has no value; rendered empty'));
    // Trimmed so the file's last newline, or a final placeholder left empty, is not spoken.
    return this.templates[name].render(vars, report).trim();
  }

  wouldLeaveEmpty(name: PromptName, vars: TemplateVariables): boolean {
    return this.templates[name].wouldLeaveEmpty(vars);
  }
}

/** Missing or broken optional files are replaced by their built-in default. */
function buildPromptSet(load: FolderLoad, logger: Logger): PromptSet {
  const templates = {} as Record<PromptName, Template>;
  let settings: PromptSettings = EMPTY_SETTINGS;
  for (const spec of PROMPT_FILES) {
    const loaded = load.files.find((f) => f.spec === spec);
    const template = loaded?.template ?? FALLBACK_TEMPLATES.get(spec.name);
    // Unreachable: a required file without a template is an error, and errors in required files stop the load before this.
    if (!template) throw new Error(`${spec.file} has no usable version`);
    templates[spec.name] = template;
    if (spec.name === 'system' && loaded?.settings) settings = freezeSettings(loaded.settings);
  }
  return new LoadedPromptSet(Object.freeze(templates), settings, logger);
}

function freezeSettings(settings: PromptSettings): PromptSettings {
  return Object.freeze({ ...settings, transferTargets: Object.freeze({ ...settings.transferTargets }) });
}

function filesFromDisk(load: FolderLoad): string[] {
  return load.files.filter((f) => f.template !== undefined).map((f) => f.spec.file);
}

/**
 * One line per problem, naming the variable, because it is printed without a
 * stack trace to someone who has to fix the setting or the file.
 */
function startupErrorLines(dir: string, load: FolderLoad, fatal: readonly PromptProblem[]): string[] {
  if (load.folderError !== undefined) {
    return [`PROMPTS_DIR ${dir} ${load.folderError}`];
  }
  return fatal.map((p) => {
    const gone = p.message === 'is missing' || p.message === 'is empty';
    const hint = gone ? `; Hotline needs ${REQUIRED_FILES} to start (the shipped ones are in ./prompts)` : '';
    return `PROMPTS_DIR ${dir}: ${p.file}: ${p.message}${hint}`;
  });
}

export interface PromptStoreOptions {
  /** Reload by itself when the folder changes. */
  watch?: boolean;
  /** How often a watched folder is checked for having been replaced or removed; default 2 s. */
  checkIntervalMs?: number;
}

export interface ReloadResult {
  ok: boolean;
  problems: PromptProblem[];
}

const RELOAD_DEBOUNCE_MS = 100;
const DEFAULT_CHECK_INTERVAL_MS = 2000;
/** The fingerprint of "no folder": whatever is found when it is back counts as new. */
const FOLDER_GONE = 'gone';

/**
 * The prompts folder, loaded and kept current: edits apply from the next
 * call, without a restart. A broken edit never replaces a working version.
 */
export class PromptStore {
  private set: PromptSet;
  /** Fingerprint of the version in `set`: an unchanged folder keeps the very same PromptSet. */
  private inUse: string;
  /** Fingerprint of the folder at the last look, good or bad: only news is logged. */
  private lastSeen: string;
  private folderWatch: FolderWatch | undefined;
  // Reloads run one after another, so an older read can never overwrite a newer one.
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
    initial: PromptSet,
    fingerprint: string,
  ) {
    this.set = initial;
    this.inUse = fingerprint;
    this.lastSeen = fingerprint;
  }

  /**
   * Errors in system.md or greeting.md stop the start: better no agent than
   * one nobody configured. Other files fall back to built-in defaults.
   */
  static async open(dir: string, logger: Logger, options: PromptStoreOptions = {}): Promise<PromptStore> {
    const load = await loadFolder(dir);
    const errors = load.problems.filter((p) => p.severity === 'error');
    const fatal = errors.filter((p) => !PROMPT_FILES.some((spec) => spec.file === p.file && spec.fallback !== undefined));
    if (fatal.length > 0) throw new ConfigError(startupErrorLines(dir, load, fatal).join('\n'));
    const store = new PromptStore(dir, logger, buildPromptSet(load, logger), load.fingerprint);
    logger.info({ dir, files: filesFromDisk(load) }, 'prompts loaded');
    if (errors.length > 0) logger.error({ dir, problems: errors }, 'prompt files with errors replaced by built-in defaults');
    const warnings = load.problems.filter((p) => p.severity === 'warning');
    if (warnings.length > 0) logger.warn({ dir, problems: warnings }, 'prompt problems');
    if (options.watch) await store.startWatching(options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
    return store;
  }

  /** The last good version; take it once per call so one call never mixes two versions. */
  get current(): PromptSet {
    return this.set;
  }

  /** Re-reads the folder; on errors the last good version stays. Logs only what is new since the last look. */
  reload(): Promise<ReloadResult> {
    const run = this.queue.then(() => this.load());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Stops watching and every timer; `current` stays usable. */
  close(): void {
    this.folderWatch?.close();
    this.folderWatch = undefined;
  }

  private async load(): Promise<ReloadResult> {
    let load: FolderLoad;
    try {
      load = await loadFolder(this.dir);
    } catch (error) {
      const problems: PromptProblem[] = [{ file: this.dir, severity: 'error', message: `cannot be loaded: ${describe(error)}` }];
      if (this.see(fingerprint([], problems))) this.logNotReloaded(problems);
      return { ok: false, problems };
    }
    const news = this.see(load.fingerprint);
    const problems = [...load.problems];
    if (problems.some((p) => p.severity === 'error')) {
      if (news) this.logNotReloaded(problems);
      return { ok: false, problems };
    }
    if (load.fingerprint !== this.inUse) {
      this.set = buildPromptSet(load, this.logger);
      this.inUse = load.fingerprint;
    }
    if (news) {
      this.logger.info({ dir: this.dir, files: filesFromDisk(load) }, 'prompts reloaded');
      if (problems.length > 0) this.logger.warn({ dir: this.dir, problems }, 'prompt problems');
    }
    return { ok: true, problems };
  }

  /** Records what the folder looks like now; true if that differs from the last look. */
  private see(fingerprint: string): boolean {
    const news = fingerprint !== this.lastSeen;
    this.lastSeen = fingerprint;
    return news;
  }

  private logNotReloaded(problems: readonly PromptProblem[]): void {
    this.logger.warn({ dir: this.dir, problems }, 'prompts not reloaded; keeping the last good version');
  }

  /**
   * Any change in the folder reloads, not only a `.md` name: a Kubernetes
   * ConfigMap update renames `..data`, and editors save through temporary
   * files. Reloads that find nothing new stay quiet.
   */
  private async startWatching(checkIntervalMs: number): Promise<void> {
    const events = {
      changed: async () => {
        await this.reload();
      },
      gone: () => this.onFolderGone(),
      returned: async (how: 'back' | 'replaced') => {
        this.logger.info({ dir: this.dir }, how === 'back' ? 'prompts folder is back' : 'prompts folder was replaced; watching the new one');
        await this.reload();
      },
    };
    this.folderWatch = await FolderWatch.start(this.dir, this.logger, events, { checkIntervalMs, debounceMs: RELOAD_DEBOUNCE_MS });
  }

  private onFolderGone(): void {
    this.see(FOLDER_GONE);
    this.logger.warn({ dir: this.dir }, 'prompts folder is gone; keeping the last good version until it is back');
  }
}

/** Everything prompts:check reports. `ok` only if there is no problem at all, warnings included. */
export async function checkPromptsFolder(
  dir: string,
): Promise<{ files: { file: string; placeholders: string[]; problems: PromptProblem[] }[]; ok: boolean }> {
  const load = await loadFolder(dir);
  return { files: load.reports.map((r) => ({ ...r })), ok: load.problems.length === 0 };
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
