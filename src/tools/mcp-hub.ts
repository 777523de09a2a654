import type { BusinessTool, ToolBox } from '../call/ports/business-tools.js';
import type { Logger } from '../logger.js';
import type { McpServerConfig } from './mcp-config.js';
import { McpConnection, type McpServerStatus } from './mcp-connection.js';
import { McpServerGoneError } from './mcp-errors.js';
import { nameKey } from './tool-names.js';

export type { McpServerStatus };

export interface McpHubOptions {
  /** For `${ENV}` references in the servers' env and headers; the hub never reads process.env itself. */
  env: Readonly<Record<string, string | undefined>>;
  /** For servers that set no timeout_ms / max_chars of their own. */
  defaults: { timeoutMs: number; maxChars: number };
  /** Hotline's own secrets: taken out of every tool result, with each server's own. */
  secrets?: readonly string[];
  /** Reconnect backoff: the first wait, doubled after each failed attempt up to the last. */
  retry?: { initialMs: number; maxMs: number };
  /** The longest a server's handshake and each tool listing may take (default 30 s). */
  connectTimeoutMs?: number;
}

const DEFAULT_RETRY = { initialMs: 1_000, maxMs: 30_000 };
// Generous: `npx -y some-mcp-server` may download the package on its first start.
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

interface Server {
  /** The configuration as JSON: an edit of any setting makes a new connection. */
  readonly json: string;
  readonly connection: McpConnection;
}

interface Waiter {
  readonly name: string;
  readonly resolve: () => void;
  readonly reject: (error: McpServerGoneError) => void;
}

/** The tools of every configured MCP server that is up right now. */
export class McpHub implements ToolBox {
  private servers = new Map<string, Server>();
  private offered: readonly BusinessTool[] = [];
  private lastCollisions = '';
  private waiters: Waiter[] = [];
  private closed = false;
  private readonly listeners = new Set<() => void>();
  private readonly closing = new Set<Promise<void>>();
  private readonly log: Logger;

  constructor(
    logger: Logger,
    private readonly options: McpHubOptions,
  ) {
    this.log = logger.child({ component: 'mcp' });
  }

  /** Connects new servers, closes removed ones and reconnects changed ones; unchanged ones keep their connection. */
  update(configs: readonly McpServerConfig[]): void {
    if (this.closed) return;
    const wanted = new Map<string, McpServerConfig>();
    for (const config of configs) {
      if (wanted.has(config.name)) this.log.warn({ mcp_server: config.name }, 'mcp server configured twice; the first one is used');
      else wanted.set(config.name, config);
    }
    const next = new Map<string, Server>();
    for (const [name, config] of wanted) {
      const json = JSON.stringify(config);
      const current = this.servers.get(name);
      if (current?.json === json) {
        next.set(name, current);
        continue;
      }
      if (current) {
        this.log.info({ mcp_server: name }, 'mcp server settings changed; reconnecting');
        this.retire(current.connection);
      }
      next.set(name, { json, connection: this.connectionFor(config) });
    }
    for (const [name, server] of this.servers) {
      if (wanted.has(name)) continue;
      this.log.info({ mcp_server: name }, 'mcp server removed');
      this.retire(server.connection);
    }
    this.servers = next;
    for (const server of next.values()) server.connection.start();
    this.changed();
  }

  tools(): readonly BusinessTool[] {
    return this.offered;
  }

  /** Each server's tools as it offers them, in configuration order, before a name taken by an earlier server is left out. */
  listings(): { server: string; tools: readonly BusinessTool[] }[] {
    return [...this.servers.values()].map((server) => ({ server: server.connection.name, tools: server.connection.tools() }));
  }

  status(): McpServerStatus[] {
    return [...this.servers.values()].map((server) => server.connection.status());
  }

  /**
   * Resolves when the server is connected with its tools listed: at once if
   * it is now. Rejects with McpServerGoneError when it is not configured (any
   * more), cannot start (a variable its settings need is not set), or the hub closes.
   */
  whenUp(name: string): Promise<void> {
    const gone = this.goneReason(name);
    if (gone) return Promise.reject(new McpServerGoneError(name, gone));
    if (this.servers.get(name)?.connection.status().up) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ name, resolve, reject }));
  }

  /** Calls `listener` after every change of any server's state or tools; returns its own removal. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Closes every connection (stdio servers' processes end) and stops all retries. Never rejects. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      for (const server of this.servers.values()) this.retire(server.connection);
      this.servers = new Map();
      this.changed();
    }
    await Promise.all([...this.closing]);
  }

  private connectionFor(config: McpServerConfig): McpConnection {
    const connection: McpConnection = new McpConnection({
      config,
      env: this.options.env,
      defaults: this.options.defaults,
      ...(this.options.secrets ? { secrets: this.options.secrets } : {}),
      retry: this.options.retry ?? DEFAULT_RETRY,
      connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      logger: this.log,
      onChange: () => {
        // A late callback of a connection already replaced changes nothing on offer.
        if (this.servers.get(config.name)?.connection === connection) this.changed();
      },
    });
    return connection;
  }

  private retire(connection: McpConnection): void {
    const closing = connection.close().finally(() => this.closing.delete(closing));
    this.closing.add(closing);
  }

  private changed(): void {
    this.offered = this.collectTools();
    this.settleWaiters();
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (error) {
        this.log.error({ err: error }, 'mcp change listener failed');
      }
    }
  }

  /**
   * Every up server's tools in configuration order; a name an earlier server
   * has already, in any spelling, is left out.
   */
  private collectTools(): BusinessTool[] {
    const tools: BusinessTool[] = [];
    const owners = new Map<string, { tool: string; server: string }>();
    const collisions: string[] = [];
    for (const server of this.servers.values()) {
      for (const tool of server.connection.tools()) {
        const owner = owners.get(nameKey(tool.name));
        if (owner !== undefined) {
          collisions.push(`"${tool.name}" of ${server.connection.name} (taken by "${owner.tool}" of ${owner.server})`);
          continue;
        }
        owners.set(nameKey(tool.name), { tool: tool.name, server: server.connection.name });
        tools.push(tool);
      }
    }
    const described = collisions.join(', ');
    if (described && described !== this.lastCollisions) {
      this.log.warn({ collisions }, 'mcp tools left out: the name is taken; set a prefix on one of the servers');
    }
    this.lastCollisions = described;
    return tools;
  }

  private settleWaiters(): void {
    const waiting: Waiter[] = [];
    for (const waiter of this.waiters) {
      const gone = this.goneReason(waiter.name);
      if (gone) waiter.reject(new McpServerGoneError(waiter.name, gone));
      else if (this.servers.get(waiter.name)?.connection.status().up) waiter.resolve();
      else waiting.push(waiter);
    }
    this.waiters = waiting;
  }

  private goneReason(name: string): string | undefined {
    if (this.closed) return 'the hub is closed';
    const server = this.servers.get(name);
    if (!server) return 'no server of that name is configured';
    if (!server.connection.startable) return server.connection.status().lastError ?? 'it cannot start';
    return undefined;
  }
}
