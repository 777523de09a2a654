import { HotlineError } from '../errors.js';

/** A tool was called while its MCP server is not connected (down, reconnecting, or removed). */
export class McpUnavailableError extends HotlineError {
  readonly code = 'mcp_unavailable';
  constructor(readonly server: string) {
    super(`MCP server ${server} is not connected`);
  }
}

/** `whenUp` waited for a server that will not come up: unknown, removed from the configuration, not startable, or the hub closed. */
export class McpServerGoneError extends HotlineError {
  readonly code = 'mcp_server_gone';
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(`MCP server ${server} will not come up: ${reason}`);
  }
}
