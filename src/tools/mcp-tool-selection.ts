import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { McpServerConfig } from './mcp-config.js';

/** What the model may call a function: OpenAI's rule. */
const OFFERED_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** One tool of an MCP server as offered to the model. */
export interface OfferedTool {
  /** The name the model sees: the configured prefix and the server's name. */
  readonly name: string;
  /** The name the server knows it by. */
  readonly serverName: string;
  readonly definition: ChatCompletionTool;
  readonly sideEffect: boolean;
}

export interface ToolSelection {
  readonly offered: readonly OfferedTool[];
  /** Tools left out and allowlist entries the server does not have, one sentence each, for the log. */
  readonly problems: readonly string[];
}

/** The listed tools the configuration lets through, named, described and classified for the model. */
export function selectTools(config: McpServerConfig, listed: readonly Tool[]): ToolSelection {
  const allowed = config.tools ? new Set(config.tools) : undefined;
  const prefix = config.prefix ?? '';
  const offered: OfferedTool[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const tool of listed) {
    if (allowed && !allowed.has(tool.name)) continue;
    const name = `${prefix}${tool.name}`;
    if (!OFFERED_NAME.test(name)) {
      problems.push(`tool "${name}" left out: a tool name has 1 to 64 letters, digits, _ or -`);
      continue;
    }
    if (seen.has(name)) {
      problems.push(`tool "${name}" left out: the server lists it twice`);
      continue;
    }
    seen.add(name);
    offered.push({ name, serverName: tool.name, definition: definitionOf(name, tool), sideEffect: hasSideEffect(config, tool) });
  }
  for (const name of allowed ?? []) {
    if (!listed.some((tool) => tool.name === name)) problems.push(`tool "${name}" of the tools list is not offered by the server`);
  }
  return { offered, problems };
}

/**
 * Unless the configuration says otherwise, only a tool the server declares
 * read-only is free of side effects: one that changes something must never
 * run twice, so guessing "no side effect" wrongly costs more than the reverse.
 */
function hasSideEffect(config: McpServerConfig, tool: Tool): boolean {
  if (config.side_effect?.includes(tool.name)) return true;
  return tool.annotations?.readOnlyHint !== true;
}

function definitionOf(name: string, tool: Tool): ChatCompletionTool {
  // `$schema` says which JSON Schema dialect the server wrote; function parameters have no use for it.
  const { $schema: _dialect, ...parameters } = tool.inputSchema as Record<string, unknown>;
  const description = tool.description ?? tool.title ?? tool.annotations?.title;
  return {
    type: 'function',
    function: {
      name,
      ...(description ? { description } : {}),
      parameters: { ...parameters, type: 'object' },
    },
  };
}
