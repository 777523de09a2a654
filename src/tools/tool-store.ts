import path from 'node:path';
import type { BusinessTool, CallerContextSource, ToolBox } from '../call/ports/business-tools.js';
import type { Logger } from '../logger.js';
import { describe, type PromptProblem } from '../prompts/folder-load.js';
import { WatchedReload } from '../prompts/watched-reload.js';
import { createCallerContext } from './caller-context.js';
import { createHttpTool, type ToolDefaults } from './http-tool.js';
import type { McpServerConfig } from './mcp-config.js';
import type { Env } from './request-template.js';
import { readToolsFolder, TOOLS_FOLDER, type ToolsFolderRead } from './tool-folder.js';
import { toolScrubber } from './tool-scrubber.js';

export { TOOLS_FOLDER, type ToolFileReport } from './tool-folder.js';
export type { ToolDefaults } from './http-tool.js';

export interface ToolStoreOptions {
  /** Reload by itself when the tools folder changes. */
  readonly watch?: boolean;
  /** Where `${ENV_NAME}` comes from: process.env in the server, a plain object in tests. */
  readonly env: Env;
  readonly defaults: ToolDefaults;
  /** How often a watched folder is checked for having appeared, gone or been replaced; default 2 s. */
  readonly checkIntervalMs?: number;
  /** Hotline's own secrets: taken out of every tool answer, with the values of the tool's own `${…}`. */
  readonly secrets?: readonly string[];
}

export interface ToolReloadResult {
  ok: boolean;
  problems: PromptProblem[];
}

/** What calls are offered; replaced whole, so a call that took one never sees half of the next. */
interface ToolSet {
  readonly tools: readonly BusinessTool[];
  readonly callerContext: CallerContextSource | undefined;
  readonly mcpServers: readonly McpServerConfig[];
}

const DEFAULT_CHECK_INTERVAL_MS = 2000;
const NOTHING_SEEN = 'none';

/**
 * `<PROMPTS_DIR>/tools`, loaded and kept current. At startup a broken file
 * is left out and the rest is used; after that, an edit that breaks any file
 * keeps the whole last good version, like the prompt files.
 */
export class ToolStore implements ToolBox {
  private set: ToolSet = { tools: [], callerContext: undefined, mcpServers: [] };
  /** Fingerprint of the version in `set`. */
  private inUse = NOTHING_SEEN;
  /** Fingerprint of the folder at the last look, good or bad: only news is logged. */
  private lastSeen = NOTHING_SEEN;
  private readonly reloads: WatchedReload<ToolReloadResult>;

  private constructor(
    /** The prompts folder; the tools are in its `tools` folder. */
    readonly dir: string,
    private readonly logger: Logger,
    private readonly options: ToolStoreOptions,
  ) {
    this.reloads = new WatchedReload(() => this.load(), logger, 'tools');
  }

  /** Never fails for the files' sake: a broken tool file leaves out that tool, not the agent. */
  static async open(dir: string, logger: Logger, options: ToolStoreOptions): Promise<ToolStore> {
    const store = new ToolStore(dir, logger.child({ component: 'tools' }), options);
    const read = await readToolsFolder(dir, options.env);
    store.apply(read);
    store.lastSeen = read.fingerprint;
    if (read.problems.length > 0) store.logger.error({ dir: store.toolsDir, problems: read.problems }, 'tool files with errors left out');
    // No folder is no tools: the reload finds it missing, and says so if that is news.
    if (options.watch) await store.reloads.watch(store.toolsDir, options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS, () => void store.reload());
    return store;
  }

  get toolsDir(): string {
    return path.join(this.dir, TOOLS_FOLDER);
  }

  /** The HTTP tools of the last good version whose environment variables are all set. */
  tools(): readonly BusinessTool[] {
    return this.set.tools;
  }

  get callerContext(): CallerContextSource | undefined {
    return this.set.callerContext;
  }

  /** As mcp.yaml says, `${…}` not expanded: the MCP hub connects them. */
  get mcpServers(): readonly McpServerConfig[] {
    return this.set.mcpServers;
  }

  /** Told after a reload that changed the good version (not at open). */
  onChange(listener: () => void): void {
    this.reloads.onChange(listener);
  }

  /** Re-reads the folder; with any error the last good version stays. Logs only what is new since the last look. */
  reload(): Promise<ToolReloadResult> {
    return this.reloads.reload();
  }

  /** Stops watching; what is loaded stays usable. */
  close(): void {
    this.reloads.close();
  }

  private async load(): Promise<ToolReloadResult> {
    let read: ToolsFolderRead;
    try {
      read = await readToolsFolder(this.dir, this.options.env);
    } catch (error) {
      const problems: PromptProblem[] = [{ file: TOOLS_FOLDER, severity: 'error', message: `cannot be loaded: ${describe(error)}` }];
      this.logger.warn({ dir: this.toolsDir, problems }, 'tools not reloaded; keeping the last good version');
      return { ok: false, problems };
    }
    const news = read.fingerprint !== this.lastSeen;
    this.lastSeen = read.fingerprint;
    const problems = [...read.problems];
    if (problems.length > 0) {
      if (news) this.logger.warn({ dir: this.toolsDir, problems }, 'tools not reloaded; keeping the last good version');
      return { ok: false, problems };
    }
    if (read.fingerprint !== this.inUse) {
      this.apply(read);
      this.reloads.changed();
    }
    return { ok: true, problems };
  }

  /** Makes `read`'s good files the version in use, and says what that is. */
  private apply(read: ToolsFolderRead): void {
    const { defaults, env, secrets = [] } = this.options;
    const scrubberOf = (needs: readonly string[]) => toolScrubber([...needs.map((name) => env[name]), ...secrets]);
    const unset: { file: string; missing: readonly string[] }[] = [];
    const tools: BusinessTool[] = [];
    for (const { file, name, spec } of read.tools) {
      if (spec.request.missingEnv.length > 0) unset.push({ file, missing: spec.request.missingEnv });
      else tools.push(createHttpTool(name, spec, defaults, scrubberOf(spec.request.needs), file));
    }
    let callerContext: CallerContextSource | undefined;
    if (read.context !== undefined) {
      const { file, spec } = read.context;
      if (spec.request.missingEnv.length > 0) unset.push({ file, missing: spec.request.missingEnv });
      else callerContext = createCallerContext(spec, this.logger, scrubberOf(spec.request.needs));
    }
    this.set = Object.freeze({ tools: Object.freeze(tools), callerContext, mcpServers: Object.freeze([...read.mcpServers]) });
    this.inUse = read.fingerprint;
    if (!read.present) {
      this.logger.info({ dir: this.toolsDir }, 'no tools folder; no business tools');
      return;
    }
    const mcpServers = read.mcpServers.map((s) => s.name);
    this.logger.info({ dir: this.toolsDir, tools: tools.map((t) => t.name), callerContext: callerContext !== undefined, mcpServers }, 'tools loaded');
    // The names only: the values are secrets.
    for (const { file, missing } of unset) {
      this.logger.warn({ file, missing }, `${file} not used: environment variables not set: ${missing.join(', ')}`);
    }
  }
}

export { checkToolsFolder, type ToolsFolderCheck } from './tools-check.js';
