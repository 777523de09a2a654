import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from '../logger.js';

/** What a FolderWatch tells its owner. Its promises are awaited, so checks never overlap a reaction. */
export interface FolderWatchEvents {
  /** Something in the folder changed, or could not be watched; any name, the owner decides whether it matters. */
  changed(): Promise<void>;
  /** The folder is gone; told once until it is back. */
  gone(): void;
  /** The folder is back, or another folder took its place; the watch is already on the new one. */
  returned(how: 'back' | 'replaced'): Promise<void>;
}

export interface FolderWatchOptions {
  /** How often the folder's identity is checked; events cannot tell when a new folder moves in. */
  readonly checkIntervalMs: number;
  /** One reaction for the burst of events a single save makes. */
  readonly debounceMs: number;
}

/**
 * Watches a folder by its path, not by the folder it found first: fs.watch
 * follows an inode, so a folder replaced by `mv` or re-created after
 * `rm -rf` would otherwise go unwatched for good.
 */
export class FolderWatch {
  private watcher: FSWatcher | undefined;
  /** dev:ino of the folder last seen at the path; undefined while it is gone. */
  private identity: string | undefined;
  private gone = false;
  private debounce: NodeJS.Timeout | undefined;
  private interval: NodeJS.Timeout | undefined;
  // Checks run one after another, so two of them never both re-create the watcher or report the same change.
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private closed = false;
  private watchFailureLogged = false;
  /** Subfolders watched as part of the folder, by path, with the folder (dev:ino) each watcher is on. */
  private readonly subfolders = new Map<string, { identity: string; watcher: FSWatcher }>();
  private subfolderQueue: Promise<void> = Promise.resolve();

  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
    private readonly events: FolderWatchEvents,
    private readonly options: FolderWatchOptions,
  ) {}

  /** Resolves once the folder is watched (or known to be gone); never rejects. */
  static async start(dir: string, logger: Logger, events: FolderWatchEvents, options: FolderWatchOptions): Promise<FolderWatch> {
    const folder = new FolderWatch(dir, logger, events, options);
    folder.identity = await identityOf(dir);
    if (folder.identity === undefined) folder.markGone();
    else folder.watch();
    folder.interval = setInterval(() => folder.onTick(), options.checkIntervalMs);
    folder.interval.unref();
    return folder;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.debounce);
    clearInterval(this.interval);
    this.debounce = undefined;
    this.interval = undefined;
    this.unwatch();
    for (const { watcher } of this.subfolders.values()) watcher.close();
    this.subfolders.clear();
  }

  /**
   * Also treats changes inside these subfolders as changes of the folder:
   * fs.watch sees a file replaced inside a subfolder only from a watch on
   * that subfolder. Call again with the current list after every load; a
   * subfolder that does not exist yet is seen appearing by its parent's watch.
   */
  watchSubfolders(folders: readonly string[]): Promise<void> {
    // One update at a time: two would both add a watcher for the same new subfolder, and one would never be closed.
    const update = this.subfolderQueue.then(() => this.updateSubfolders(folders));
    this.subfolderQueue = update.catch(() => undefined);
    return update;
  }

  private async updateSubfolders(folders: readonly string[]): Promise<void> {
    const wanted = new Set(this.closed ? [] : folders);
    for (const [folder, { watcher }] of this.subfolders) {
      if (wanted.has(folder)) continue;
      watcher.close();
      this.subfolders.delete(folder);
    }
    let added = false;
    for (const folder of wanted) {
      const identity = await identityOf(folder);
      const known = this.subfolders.get(folder);
      if (known?.identity === identity) continue;
      known?.watcher.close();
      this.subfolders.delete(folder);
      if (identity === undefined || this.closed) continue;
      try {
        const watcher = watch(folder, { persistent: false }, () => this.onEvent());
        watcher.on('error', () => {
          watcher.close();
          // Forgotten, so the next load watches it afresh; a subfolder that went away is also reported by its parent's watch.
          if (this.subfolders.get(folder)?.watcher === watcher) this.subfolders.delete(folder);
        });
        this.subfolders.set(folder, { identity, watcher });
        added = true;
      } catch {
        // Gone between the stat and the watch: its parent's watch reported that.
      }
    }
    // A file changed between the load that named this subfolder and its new watch would otherwise go unseen.
    if (added) this.onEvent();
  }

  private onTick(): void {
    // A slow disk must not pile checks up; the next tick comes soon enough.
    if (this.pending === 0) this.enqueue(false);
  }

  private onEvent(): void {
    if (this.closed) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.enqueue(true);
    }, this.options.debounceMs);
    this.debounce.unref();
  }

  private enqueue(eventSeen: boolean): void {
    if (this.closed) return;
    this.pending += 1;
    this.queue = this.queue
      .then(() => this.check(eventSeen))
      // A timer has nobody to throw to: a failure is logged and the next check tries again.
      .catch((error: unknown) => this.logger.error({ err: error, dir: this.dir }, 'checking the prompts folder failed'))
      .finally(() => {
        this.pending -= 1;
      });
  }

  private async check(eventSeen: boolean): Promise<void> {
    const identity = await identityOf(this.dir);
    if (this.closed) return;
    if (identity === undefined) {
      this.markGone();
      return;
    }
    const how = this.gone ? 'back' : identity !== this.identity ? 'replaced' : undefined;
    const unwatched = this.watcher === undefined;
    this.gone = false;
    if (how !== undefined || unwatched) {
      // Identity first, watch second: a folder swapped in between shows as another identity at the next check.
      if (how !== undefined) this.watchFailureLogged = false;
      this.identity = identity;
      this.watch();
    }
    if (how !== undefined) await this.events.returned(how);
    // Without a watcher (the system refused one), every check re-reads: slower to notice, but never stale.
    else if (eventSeen || unwatched) await this.events.changed();
  }

  private markGone(): void {
    this.unwatch();
    this.identity = undefined;
    if (this.gone) return;
    this.gone = true;
    this.events.gone();
  }

  private watch(): void {
    this.unwatch();
    try {
      const watcher = watch(this.dir, { persistent: false }, () => this.onEvent());
      watcher.on('error', (error) => this.onWatchError(watcher, error));
      this.watcher = watcher;
    } catch (error) {
      this.reportWatchFailure(error);
    }
  }

  private onWatchError(watcher: FSWatcher, error: Error): void {
    watcher.close();
    if (this.watcher !== watcher) return;
    this.watcher = undefined;
    this.reportWatchFailure(error);
    // The next check finds out whether the folder is gone, replaced, or just needs a new watcher.
    this.onEvent();
  }

  private reportWatchFailure(error: unknown): void {
    // A folder that vanished between the check and the watch is reported as gone by the next check, not here.
    if (this.watchFailureLogged || errorCode(error) === 'ENOENT') return;
    this.watchFailureLogged = true;
    this.logger.warn(
      { err: error, dir: this.dir, checkIntervalMs: this.options.checkIntervalMs },
      'cannot watch the prompts folder; it is re-read at every check instead',
    );
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}

/** dev:ino of what the path points to now (symlinks followed); undefined if there is no folder there. */
async function identityOf(dir: string): Promise<string | undefined> {
  try {
    const stats = await stat(dir, { bigint: true });
    return stats.isDirectory() ? `${stats.dev}:${stats.ino}` : undefined;
  } catch {
    // ENOENT, ENOTDIR, EACCES on a parent: in every case there is no folder Hotline can read.
    return undefined;
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
