import type { Logger } from '../logger.js';
import { FolderWatch } from '../prompts/folder-watch.js';
import { readSmsTemplates, SMS_FOLDER, type SmsTemplates } from './sms-templates.js';

const DEFAULT_CHECK_INTERVAL_MS = 2000;
const RELOAD_DEBOUNCE_MS = 100;

/**
 * The text message templates of a prompts folder (`sms/`, `<language>/sms/`), kept current: an edit
 * is used from the next tool call on, no restart. A broken file is left out and logged; the others
 * stay offered.
 */
export class SmsTemplateStore {
  private set: SmsTemplates;
  private watch: FolderWatch | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
    first: SmsTemplates,
  ) {
    this.set = first;
  }

  static async open(dir: string, logger: Logger, options: { watch: boolean; checkIntervalMs?: number }): Promise<SmsTemplateStore> {
    const log = logger.child({ component: 'sms' });
    const first = await readSmsTemplates(dir);
    const store = new SmsTemplateStore(dir, log, first);
    store.report(first);
    if (first.defaults.size > 0) log.info({ templates: [...first.defaults.keys()] }, 'text message templates read');
    if (options.watch) {
      // The prompts folder, and the template folders below it: a file changed inside a subfolder is seen only from a watch on it.
      store.watch = await FolderWatch.start(
        dir,
        log,
        { changed: () => store.reload(), gone: () => undefined, returned: () => store.reload() },
        { checkIntervalMs: options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS, debounceMs: RELOAD_DEBOUNCE_MS },
      );
      await store.watch.watchSubfolders(first.folders);
    }
    return store;
  }

  /** The templates in use now. */
  get templates(): SmsTemplates {
    return this.set;
  }

  /** Reads the folders again; one read after another, so an older one never replaces a newer. */
  reload(): Promise<void> {
    const run = this.queue.then(() => this.load());
    this.queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.closed = true;
    this.watch?.close();
    this.watch = undefined;
  }

  private async load(): Promise<void> {
    if (this.closed) return;
    const read = await readSmsTemplates(this.dir);
    if (read.fingerprint === this.set.fingerprint) return;
    this.set = read;
    this.logger.info({ templates: [...read.defaults.keys()] }, `text message templates (${SMS_FOLDER}/) reloaded`);
    this.report(read);
    await this.watch?.watchSubfolders(read.folders);
  }

  private report(read: SmsTemplates): void {
    const errors = read.problems.filter((p) => p.severity === 'error');
    const warnings = read.problems.filter((p) => p.severity === 'warning');
    if (errors.length > 0) this.logger.error({ dir: this.dir, problems: errors }, 'text message templates with errors left out');
    if (warnings.length > 0) this.logger.warn({ dir: this.dir, problems: warnings }, 'text message templates with warnings');
  }
}
