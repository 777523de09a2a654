import type { Logger } from '../logger.js';
import { FolderWatch } from './folder-watch.js';

const RELOAD_DEBOUNCE_MS = 100;

/**
 * What the stores that keep files of the prompts folder current share
 * (tool files, voicemail phrases): reloads one after another, so an older
 * read can never overwrite a newer one; a watch that reloads on any change
 * of the folder; and listeners told when a new version is in use.
 */
export class WatchedReload<Result> {
  private queue: Promise<unknown> = Promise.resolve();
  private folderWatch: FolderWatch | undefined;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly load: () => Promise<Result>,
    private readonly logger: Logger,
    /** Names the store in a listener's failure. */
    private readonly what: string,
  ) {}

  reload(): Promise<Result> {
    const run = this.queue.then(() => this.load());
    this.queue = run.catch(() => undefined);
    return run;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** A new version is in use: every listener hears of it; one that throws is logged, the others still hear. */
  changed(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        this.logger.error({ err: error }, `a ${this.what} change listener failed`);
      }
    }
  }

  /** Any change in `dir` reloads; reloads that find nothing new stay quiet. `gone`: the folder went away. */
  async watch(dir: string, checkIntervalMs: number, gone: () => void = () => undefined): Promise<void> {
    const reload = async (): Promise<void> => {
      await this.reload();
    };
    this.folderWatch = await FolderWatch.start(
      dir,
      this.logger,
      { changed: reload, gone, returned: reload },
      { checkIntervalMs, debounceMs: RELOAD_DEBOUNCE_MS },
    );
  }

  /** Stops watching; what is loaded stays usable. */
  close(): void {
    this.folderWatch?.close();
    this.folderWatch = undefined;
  }
}
