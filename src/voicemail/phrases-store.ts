import type { Logger } from '../logger.js';
import { describe, type PromptProblem } from '../prompts/folder-load.js';
import { WatchedReload } from '../prompts/watched-reload.js';
import { loadVoicemailPhrases, VOICEMAIL_FILE, type VoicemailFileRead } from './phrases-file.js';
import { NO_EXTRA_PHRASES, type ExtraPhrases } from './phrases.js';

export interface VoicemailPhrasesStoreOptions {
  /** Reload by itself when the prompts folder changes. */
  readonly watch?: boolean;
  /** How often a watched folder is checked for having appeared, gone or been replaced; default 2 s. */
  readonly checkIntervalMs?: number;
}

export interface VoicemailReloadResult {
  readonly ok: boolean;
  readonly problems: readonly PromptProblem[];
}

const DEFAULT_CHECK_INTERVAL_MS = 2000;
const NOTHING_SEEN = 'none';

/**
 * voicemail.yaml's phrases, loaded and kept current without a restart. A
 * broken file at startup means the built-ins alone (detection still works);
 * after that, a broken edit keeps the last good phrases, like the prompt
 * files. Deleting the file is no error: back to the built-ins alone.
 */
export class VoicemailPhrasesStore {
  private phrases: ExtraPhrases = NO_EXTRA_PHRASES;
  /** Fingerprint of the version in `phrases`. */
  private inUse = NOTHING_SEEN;
  /** Fingerprint of the file at the last look, good or bad: only news is logged. */
  private lastSeen = NOTHING_SEEN;
  private readonly reloads: WatchedReload<VoicemailReloadResult>;

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {
    this.reloads = new WatchedReload(() => this.load(), logger, 'voicemail phrases');
  }

  /** Never fails for the file's sake. */
  static async open(dir: string, logger: Logger, options: VoicemailPhrasesStoreOptions = {}): Promise<VoicemailPhrasesStore> {
    const store = new VoicemailPhrasesStore(dir, logger.child({ component: 'voicemail-phrases' }));
    await store.reload();
    // Any change in the prompts folder re-reads the file.
    if (options.watch) await store.reloads.watch(dir, options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS);
    return store;
  }

  /** The phrases added to the built-ins; replaced whole on a change, so holding one is safe. */
  get current(): ExtraPhrases {
    return this.phrases;
  }

  /** Told after a reload that changed the phrases in use. */
  onChange(listener: () => void): void {
    this.reloads.onChange(listener);
  }

  /** Re-reads the file; with any error the last good phrases stay. Logs only what is new since the last look. */
  reload(): Promise<VoicemailReloadResult> {
    return this.reloads.reload();
  }

  /** Stops watching; the phrases stay usable. */
  close(): void {
    this.reloads.close();
  }

  private async load(): Promise<VoicemailReloadResult> {
    let read: VoicemailFileRead;
    try {
      read = await loadVoicemailPhrases(this.dir);
    } catch (error) {
      const problems: PromptProblem[] = [{ file: VOICEMAIL_FILE, severity: 'error', message: `cannot be loaded: ${describe(error)}` }];
      this.logger.warn({ dir: this.dir, problems }, 'voicemail phrases not reloaded; keeping the last good ones');
      return { ok: false, problems };
    }
    const news = read.fingerprint !== this.lastSeen;
    this.lastSeen = read.fingerprint;
    switch (read.kind) {
      case 'folder_gone':
        // The prompt store says so; the phrases stay until the folder is back.
        return { ok: false, problems: [] };
      case 'broken': {
        const kept = this.inUse === NOTHING_SEEN ? 'using the built-in phrases alone' : 'keeping the last good ones';
        if (news) this.logger.error({ dir: this.dir, problems: read.problems }, `${VOICEMAIL_FILE} has errors; ${kept}`);
        return { ok: false, problems: read.problems };
      }
      case 'absent':
        this.use(read.fingerprint, NO_EXTRA_PHRASES);
        if (news) this.logger.info({ dir: this.dir }, `no ${VOICEMAIL_FILE}; voicemail detection uses the built-in phrases`);
        return { ok: true, problems: [] };
      case 'loaded': {
        const { voicemail, human } = read.phrases;
        this.use(read.fingerprint, read.phrases);
        if (news) {
          this.logger.info({ dir: this.dir, voicemail: voicemail.length, human: human.length }, `${VOICEMAIL_FILE} loaded`);
          if (read.problems.length > 0) this.logger.warn({ dir: this.dir, problems: read.problems }, `${VOICEMAIL_FILE} problems`);
        }
        return { ok: true, problems: read.problems };
      }
    }
  }

  private use(fingerprint: string, phrases: ExtraPhrases): void {
    if (fingerprint === this.inUse) return;
    this.phrases = phrases;
    this.inUse = fingerprint;
    // Nobody listens yet during open's first read.
    this.reloads.changed();
  }
}
