import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { BusinessTool } from '../call/ports/business-tools.js';
import { createScrubber, type Logger } from '../logger.js';
import { describeNetworkError } from '../net-errors.js';
import type { McpServerConfig } from './mcp-config.js';
import { openTransport, resolveEndpoint, type McpEndpoint } from './mcp-endpoint.js';
import { McpUnavailableError } from './mcp-errors.js';
import { createMcpTool, type McpToolCaller } from './mcp-tool.js';
import { selectTools } from './mcp-tool-selection.js';
import { readBoundedLines } from './stderr-lines.js';
import { toolScrubber, type ToolScrubber } from './tool-scrubber.js';

export interface McpConnectionOptions {
  readonly config: McpServerConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly defaults: { readonly timeoutMs: number; readonly maxChars: number };
  /** Hotline's own secrets: taken out of the tools' results with the server's. */
  readonly secrets?: readonly string[];
  readonly retry: { readonly initialMs: number; readonly maxMs: number };
  /** The longest the handshake and each tool listing may take. */
  readonly connectTimeoutMs: number;
  readonly logger: Logger;
  /** Called after every change of state or tools. */
  readonly onChange: () => void;
}

export interface McpServerStatus {
  name: string;
  up: boolean;
  tools: string[];
  lastError?: string;
  /** The process of a stdio server while it is up. */
  pid?: number;
  /** Why listed tools are not offered, one sentence each (since it was last listed). */
  problems?: string[];
}

type State = 'idle' | 'connecting' | 'up' | 'down' | 'unstartable' | 'closed';

/** One attempt's client and transport; a reconnect makes new ones, so late callbacks of an old one are told apart. */
interface Link {
  readonly client: Client;
  readonly transport: Transport;
  /** The last lines a stdio server wrote to stderr: why it exited, usually. */
  readonly stderrTail: string[];
  /** What the transport reported while connecting; a better reason than the "connection closed" that follows. */
  transportError?: string;
  closed: boolean;
  probing: boolean;
  listings: number;
}

const STDERR_TAIL_LINES = 5;
const STDERR_LINE_CHARS = 300;
/** Read of each stderr line before it is scrubbed and cut to STDERR_LINE_CHARS: room for a secret at the cut. */
const STDERR_LINE_BYTES = 4096;
const REASON_CHARS = 200;
/** A server answers a ping within this or is taken for gone. */
const PROBE_MS = 5_000;
/** Enough for any real server; bounds a server whose cursors never end. */
const MAX_LIST_PAGES = 50;

/**
 * One MCP server: connects, lists its tools, watches the connection, and
 * reconnects with backoff when it fails. Its tools exist only while it is up.
 */
export class McpConnection implements McpToolCaller {
  readonly name: string;
  private state: State = 'idle';
  private link: Link | undefined;
  private offered: readonly BusinessTool[] = [];
  private lastError: string | undefined;
  /** The reason last logged at warn, so a server that stays down does not repeat itself. */
  private lastWarned: string | undefined;
  private lastProblems: readonly string[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay: number;
  private upSince = 0;
  private readonly closing = new Set<Promise<void>>();
  private readonly endpoint: McpEndpoint | undefined;
  /** For log lines and reasons: the server's secrets (the logger itself takes out Hotline's). */
  private readonly scrub: (text: string) => string;
  /** For what its tools return. */
  private readonly scrubResults: ToolScrubber;
  /** A stdio server without `cwd` runs in this empty folder of its own, made at the first start, removed at close. */
  private workDir: Promise<string> | undefined;
  private readonly log: Logger;

  constructor(private readonly options: McpConnectionOptions) {
    this.name = options.config.name;
    this.log = options.logger.child({ mcp_server: this.name });
    this.retryDelay = options.retry.initialMs;
    const resolved = resolveEndpoint(options.config, options.env);
    const secrets = resolved.ok ? resolved.secrets : [];
    this.scrub = createScrubber(secrets);
    this.scrubResults = toolScrubber([...secrets, ...(options.secrets ?? [])]);
    if (resolved.ok) {
      this.endpoint = resolved.endpoint;
    } else {
      this.state = 'unstartable';
      this.lastError = `not started: ${resolved.missing.join(', ')} not set`;
      this.log.error({ missing: resolved.missing }, 'mcp server not started: set the environment variables its settings refer to');
    }
  }

  start(): void {
    if (this.state === 'idle') this.attempt();
  }

  /** Whether it can ever come up: a server whose settings lack a variable, or a closed one, cannot. */
  get startable(): boolean {
    return this.state !== 'unstartable' && this.state !== 'closed';
  }

  tools(): readonly BusinessTool[] {
    return this.offered;
  }

  status(): McpServerStatus {
    const pid = this.state === 'up' && this.link?.transport instanceof StdioClientTransport ? this.link.transport.pid : null;
    return {
      name: this.name,
      up: this.state === 'up',
      tools: this.offered.map((tool) => tool.name),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(pid !== null ? { pid } : {}),
      ...(this.lastProblems.length > 0 ? { problems: [...this.lastProblems] } : {}),
    };
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; meta?: Readonly<Record<string, string>> | undefined },
  ): Promise<CallToolResult> {
    const link = this.link;
    if (this.state !== 'up' || !link) throw new McpUnavailableError(this.name);
    try {
      const params = options.meta ? { name, arguments: args, _meta: { ...options.meta } } : { name, arguments: args };
      const result = await link.client.callTool(params, undefined, { signal: options.signal, timeout: options.timeoutMs });
      return result as CallToolResult;
    } catch (error) {
      // An McpError is an answer (or our own timeout); anything else is the way to the server failing.
      if (!(error instanceof McpError) && !options.signal.aborted) this.probe(link, this.describe(error));
      throw error;
    }
  }

  /** Closes the connection (a stdio server's process ends with it) and stops retrying. Never rejects. */
  async close(): Promise<void> {
    if (this.state !== 'closed') {
      this.state = 'closed';
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      this.offered = [];
      const link = this.link;
      this.link = undefined;
      if (link) this.release(link);
      const workDir = this.workDir;
      this.workDir = undefined;
      // After the process has ended: what it left there goes with the folder.
      if (workDir) this.closing.add(removeAfter(Promise.all([...this.closing]), workDir));
    }
    await Promise.all([...this.closing]);
  }

  /** connect() reports its failures itself; this is for a bug in that, so it can never become an unhandled rejection. */
  private attempt(): void {
    this.connect().catch((error: unknown) => {
      this.log.error({ err: error }, 'mcp connection attempt failed unexpectedly');
    });
  }

  private async connect(): Promise<void> {
    if (this.state === 'closed' || !this.endpoint) return;
    let workDir: string | undefined;
    if (this.endpoint.kind === 'stdio' && this.endpoint.cwd === undefined) {
      try {
        workDir = await this.ownWorkDir();
      } catch (error) {
        this.workDir = undefined;
        this.notStarted(`its working folder could not be made: ${describeNetworkError(error)}`);
        return;
      }
      // Closed while the folder was made.
      if ((this.state as State) === 'closed') return;
    }
    const transport = openTransport(this.endpoint, workDir);
    const client = new Client({ name: 'hotline', version: '0.1.0' }, { capabilities: {} });
    const link: Link = { client, transport, stderrTail: [], closed: false, probing: false, listings: 0 };
    this.link = link;
    this.state = 'connecting';
    this.watchStderr(link);
    // Set before connect(): the client chains its own handlers after these.
    transport.onclose = () => this.closed(link);
    transport.onerror = (error) => this.transportFailed(link, error);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist(link));
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
      const listed = await listAllTools(client, this.options.connectTimeoutMs);
      if (this.link !== link) return;
      link.transportError = undefined;
      this.state = 'up';
      this.upSince = Date.now();
      this.lastError = undefined;
      this.lastWarned = undefined;
      this.setTools(listed);
      this.log.info({ tools: this.offered.map((tool) => tool.name), pid: this.status().pid }, 'mcp server up');
      this.options.onChange();
    } catch (error) {
      this.retire(link, this.failureReason(link, error));
    }
  }

  /**
   * Not Hotline's working directory, where `.env` is: a server reading
   * `./.env` finds nothing. An empty folder rather than one of Hotline's, so
   * whatever a server writes there disturbs nothing (the prompts folder is watched).
   */
  private ownWorkDir(): Promise<string> {
    this.workDir ??= mkdtemp(path.join(tmpdir(), `hotline-mcp-${this.name}-`));
    return this.workDir;
  }

  private failureReason(link: Link, error: unknown): string {
    if (link.transportError) return link.transportError;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `no answer within ${this.options.connectTimeoutMs / 1000} s`;
    }
    if (link.closed) return this.closedReason();
    return this.describe(error);
  }

  private closedReason(): string {
    return this.endpoint?.kind === 'stdio' ? 'the process exited' : 'the connection closed';
  }

  private closed(link: Link): void {
    link.closed = true;
    // While connecting, the failed handshake reports it, with a better reason.
    if (this.link === link && this.state === 'connecting') return;
    this.retire(link, this.closedReason());
  }

  private transportFailed(link: Link, error: Error): void {
    // An old link's errors (the abort of our own close among them) say nothing about the server now.
    if (this.link !== link) return;
    const reason = this.describe(error);
    this.log.debug({ reason }, 'mcp transport error');
    if (this.state === 'connecting') link.transportError ??= reason;
    else this.probe(link, reason);
  }

  /**
   * Not every transport error means the server is gone (a stray line on a
   * stdio server's stdout, one dropped event stream): a ping tells. A server
   * that does not answer is dropped, which also ends the calls still waiting on it.
   */
  private probe(link: Link, reason: string): void {
    if (this.link !== link || this.state !== 'up' || link.probing) return;
    link.probing = true;
    link.client.ping({ timeout: Math.min(PROBE_MS, this.options.connectTimeoutMs) }).then(
      () => {
        link.probing = false;
        this.log.debug({ reason }, 'mcp server still answers after a transport error');
      },
      () => this.retire(link, reason),
    );
  }

  private relist(link: Link): void {
    const listing = ++link.listings;
    listAllTools(link.client, this.options.connectTimeoutMs).then(
      (listed) => {
        if (this.link !== link || this.state !== 'up' || listing !== link.listings) return;
        this.setTools(listed);
        this.log.info({ tools: this.offered.map((tool) => tool.name) }, 'mcp server tools changed');
        this.options.onChange();
      },
      (error: unknown) => this.probe(link, `listing its tools failed: ${this.describe(error)}`),
    );
  }

  /** An attempt that failed before there was a link: said, and tried again later. */
  private notStarted(reason: string): void {
    this.state = 'down';
    this.lastError = reason;
    if (reason !== this.lastWarned) this.log.warn({ reason }, 'mcp server not started; retrying');
    this.lastWarned = reason;
    this.scheduleRetry();
    this.options.onChange();
  }

  /** Drops the link (if it is still the current one), its tools with it, and schedules the next attempt. */
  private retire(link: Link, reason: string): void {
    if (this.link !== link) return;
    this.link = undefined;
    const wasUp = this.state === 'up';
    this.state = 'down';
    this.offered = [];
    this.lastError = reason;
    const details = { reason, ...(link.stderrTail.length > 0 ? { stderr: link.stderrTail } : {}) };
    if (wasUp) this.log.warn(details, 'mcp server lost; its tools are withdrawn until it is back');
    else if (reason !== this.lastWarned) this.log.warn(details, 'mcp server not reachable; retrying');
    else this.log.debug(details, 'mcp server still not reachable');
    this.lastWarned = reason;
    // Only a server that stayed up a while starts over at the first wait: one that dies as soon as it
    // starts would otherwise be respawned every initialMs for ever.
    if (wasUp && Date.now() - this.upSince >= this.options.retry.maxMs) this.retryDelay = this.options.retry.initialMs;
    this.release(link);
    this.scheduleRetry();
    this.options.onChange();
  }

  private release(link: Link): void {
    const closing: Promise<void> = link.client.close().then(
      () => {
        this.closing.delete(closing);
      },
      () => {
        this.closing.delete(closing);
      },
    );
    this.closing.add(closing);
  }

  private scheduleRetry(): void {
    if (this.state === 'closed') return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(delay * 2, this.options.retry.maxMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.attempt();
    }, delay);
    // Retrying is no reason to keep the process alive.
    this.retryTimer.unref();
  }

  private setTools(listed: readonly Tool[]): void {
    const { config, defaults } = this.options;
    const selection = selectTools(config, listed);
    if (selection.problems.length > 0 && selection.problems.join('\n') !== this.lastProblems.join('\n')) {
      this.log.warn({ problems: selection.problems }, 'mcp server tools left out');
    }
    this.lastProblems = selection.problems;
    const settings = {
      server: this.name,
      timeoutMs: config.timeout_ms ?? defaults.timeoutMs,
      maxChars: config.max_chars ?? defaults.maxChars,
      holdLines: config.hold ?? [],
      scrub: this.scrubResults,
    };
    this.offered = selection.offered.map((offered) => createMcpTool(offered, this, settings));
  }

  private watchStderr(link: Link): void {
    const stream = link.transport instanceof StdioClientTransport ? link.transport.stderr : null;
    if (!(stream instanceof Readable)) return;
    readBoundedLines(stream, STDERR_LINE_BYTES, (line, cut) => {
      const scrubbed = this.scrub(line);
      const text = scrubbed.length > STDERR_LINE_CHARS || cut ? `${scrubbed.slice(0, STDERR_LINE_CHARS)} …[cut]` : scrubbed;
      link.stderrTail.push(text);
      if (link.stderrTail.length > STDERR_TAIL_LINES) link.stderrTail.shift();
      this.log.debug({ stderr: text }, 'mcp server stderr');
    });
  }

  private describe(error: unknown): string {
    // The status says most (401: the credentials); the SDK keeps it apart from the message.
    const text =
      error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0
        ? `HTTP ${error.code}: ${error.message.replace(/^Streamable HTTP error: /, '')}`
        : describeNetworkError(error);
    return this.scrub(text).slice(0, REASON_CHARS);
  }
}

async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
    const result = await client.listTools(cursor !== undefined ? { cursor } : undefined, { timeout: timeoutMs });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

async function removeAfter(done: Promise<unknown>, folder: Promise<string>): Promise<void> {
  await done;
  const dir = await folder.catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}
