import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import { describe, fingerprint, loadFolder, type FolderLoad, type PromptProblem } from './folder-load.js';
import { FolderWatch } from './folder-watch.js';
import { PROMPT_FILES, REQUIRED_FILES } from './prompt-files.js';
import { buildPromptSet, type PromptSet } from './prompt-set.js';
import { AUDIO_NAMES, type AudioName } from './system-settings.js';

export type { AudioClip } from './audio-clips.js';
export type { PromptProblem } from './folder-load.js';
export type {
  AudioName,
  KeypadSettings,
  PromptSettings,
  SilenceSettings,
  SpeakStyle,
  TransferSettings,
  TransferTargetSettings,
} from './front-matter.js';
export { PROMPT_FILE_NAMES, type PromptName } from './prompt-files.js';
export type { PromptSet } from './prompt-set.js';

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

/** What the dashboard shows of the prompts: the version in use and how the last look at the folder went. */
export interface PromptsStatus {
  readonly dir: string;
  /** A short hex of the version in use's fingerprint: it changes with any edit that was taken into use. */
  readonly version: string;
  /** ISO time the version in use was taken into use. */
  readonly loadedAt: string;
  /** The last look at the folder: the start, or the latest reload by hand or by the watch. */
  readonly lastCheck: { readonly at: string; readonly ok: boolean; readonly problems: readonly PromptProblem[] } | undefined;
  /** The prompt files found on disk for the version in use; the others are built-in defaults. */
  readonly files: readonly string[];
}

const RELOAD_DEBOUNCE_MS = 100;
const DEFAULT_CHECK_INTERVAL_MS = 2000;
/** The fingerprint of "no folder": whatever is found when it is back counts as new. */
const FOLDER_GONE = 'gone';
/** Enough of a sha256 to tell versions apart by eye. */
const VERSION_HEX_LENGTH = 8;

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
  private inUseSince: string;
  private inUseFiles: readonly string[];
  private lastCheck: PromptsStatus['lastCheck'];
  private folderWatch: FolderWatch | undefined;
  // Reloads run one after another, so an older read can never overwrite a newer one.
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
    initial: PromptSet,
    fingerprint: string,
    files: readonly string[],
  ) {
    this.set = initial;
    this.inUse = fingerprint;
    this.lastSeen = fingerprint;
    this.inUseSince = new Date().toISOString();
    this.inUseFiles = files;
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
    const store = new PromptStore(dir, logger, buildPromptSet(load, logger), load.fingerprint, filesFromDisk(load));
    logger.info({ dir, files: filesFromDisk(load) }, 'prompts loaded');
    // The start is the first look, and it was taken into use: its problems (an optional file replaced by
    // its default) show until the next.
    store.checked(true, load.problems);
    if (errors.length > 0) logger.error({ dir, problems: errors }, 'prompt files with errors replaced by built-in defaults');
    const warnings = load.problems.filter((p) => p.severity === 'warning');
    if (warnings.length > 0) logger.warn({ dir, problems: warnings }, 'prompt problems');
    if (options.watch) {
      await store.startWatching(options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
      await store.folderWatch?.watchSubfolders(load.clipFolders);
    }
    return store;
  }

  /** The last good version; take it once per call so one call never mixes two versions. */
  get current(): PromptSet {
    return this.set;
  }

  get status(): PromptsStatus {
    return {
      dir: this.dir,
      version: this.inUse.slice(0, VERSION_HEX_LENGTH),
      loadedAt: this.inUseSince,
      lastCheck: this.lastCheck,
      files: [...this.inUseFiles],
    };
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
      if (this.see(fingerprint([], {}, problems))) this.logNotReloaded(problems);
      this.checked(false, problems);
      return { ok: false, problems };
    }
    const news = this.see(load.fingerprint);
    // Even a broken version's clip folders: the fix for a broken clip lands there.
    await this.folderWatch?.watchSubfolders(load.clipFolders);
    const problems = [...load.problems];
    if (problems.some((p) => p.severity === 'error')) {
      if (news) this.logNotReloaded(problems);
      this.checked(false, problems);
      return { ok: false, problems };
    }
    if (load.fingerprint !== this.inUse) {
      this.set = buildPromptSet(load, this.logger);
      this.inUse = load.fingerprint;
      this.inUseSince = new Date().toISOString();
      this.inUseFiles = filesFromDisk(load);
    }
    this.checked(true, problems);
    if (news) {
      this.logger.info({ dir: this.dir, files: filesFromDisk(load) }, 'prompts reloaded');
      if (problems.length > 0) this.logger.warn({ dir: this.dir, problems }, 'prompt problems');
    }
    return { ok: true, problems };
  }

  private checked(ok: boolean, problems: readonly PromptProblem[]): void {
    // A copy: the caller's ReloadResult is its own to change.
    this.lastCheck = { at: new Date().toISOString(), ok, problems: problems.map((p) => ({ ...p })) };
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
    // No reload follows until it is back, so without this the status would still show the last good look.
    this.checked(false, [{ file: this.dir, severity: 'error', message: 'the folder is gone (moved or deleted)' }]);
    this.logger.warn({ dir: this.dir }, 'prompts folder is gone; keeping the last good version until it is back');
  }
}

export interface FolderCheck {
  files: { file: string; placeholders: string[]; problems: PromptProblem[]; summary?: string }[];
  /** The clips system.md names that can be played; the others are among system.md's problems. */
  clips: { name: AudioName; file: string; durationMs: number }[];
  ok: boolean;
}

/** Everything prompts:check reports. `ok` only if there is no problem at all, warnings included. */
export async function checkPromptsFolder(dir: string): Promise<FolderCheck> {
  const load = await loadFolder(dir);
  const clips = AUDIO_NAMES.flatMap((name) => {
    const clip = load.clips[name];
    return clip === undefined ? [] : [{ name, file: clip.file, durationMs: clip.durationMs }];
  });
  return { files: load.reports.map((r) => ({ ...r })), clips, ok: load.problems.length === 0 };
}
