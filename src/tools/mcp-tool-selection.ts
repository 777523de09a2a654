import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { McpServerConfig } from './mcp-config.js';
import { MAX_DESCRIPTION_CHARS } from './tool-definition.js';
import { nameKey, toolNameProblem } from './tool-names.js';
import { compileParameters, describeSchemaProblem, isSchemaProblem, type ToolParameters } from './tool-parameters.js';

/** One tool of an MCP server as offered to the model. */
export interface OfferedTool {
  /** The name the model sees: the configured prefix and the server's name. */
  readonly name: string;
  /** The name the server knows it by. */
  readonly serverName: string;
  readonly definition: ChatCompletionTool;
  readonly sideEffect: boolean;
  /** Checks the model's arguments before they are sent. */
  readonly parameters: ToolParameters;
}

export interface ToolSelection {
  readonly offered: readonly OfferedTool[];
  /** Tools left out and allowlist entries the server does not have, one sentence each, for the log. */
  readonly problems: readonly string[];
}

/**
 * The listed tools the configuration lets through, named, described and
 * classified for the model. A tool is left out (and said so) when its name
 * is no function name or one of Hotline's own in any spelling, when the
 * server lists it twice, or when its definition is too big or its schema
 * cannot be checked: such a definition would go into every request.
 */
export function selectTools(config: McpServerConfig, listed: readonly Tool[]): ToolSelection {
  const allowed = config.tools ? new Set(config.tools) : undefined;
  const prefix = config.prefix ?? '';
  const offered: OfferedTool[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const tool of listed) {
    if (allowed && !allowed.has(tool.name)) continue;
    const name = `${prefix}${tool.name}`;
    const leftOut = (why: string): void => void problems.push(`tool "${name}" of MCP server ${config.name} left out: ${why}`);
    const nameProblem = toolNameProblem(name);
    if (nameProblem !== undefined) {
      leftOut(nameProblem);
      continue;
    }
    if (seen.has(nameKey(name))) {
      leftOut('the server lists it twice (names are compared ignoring case)');
      continue;
    }
    seen.add(nameKey(name));
    const description = tool.description ?? tool.title ?? tool.annotations?.title;
    if (description !== undefined && description.length > MAX_DESCRIPTION_CHARS) {
      leftOut(`its description is ${description.length} characters; the model's provider takes at most ${MAX_DESCRIPTION_CHARS}`);
      continue;
    }
    // `$schema` says which JSON Schema dialect the server wrote; function parameters have no use for it.
    const { $schema: _dialect, ...schema } = tool.inputSchema as Record<string, unknown>;
    const parameters = compileParameters({ ...schema, type: 'object' }, { closed: true });
    if (isSchemaProblem(parameters)) {
      leftOut(describeSchemaProblem({ ...parameters, path: ['inputSchema', ...parameters.path] }));
      continue;
    }
    const definition = definitionOf(name, description, parameters.schema);
    offered.push({ name, serverName: tool.name, definition, sideEffect: hasSideEffect(config, tool), parameters });
  }
  for (const name of allowed ?? []) {
    if (!listed.some((tool) => tool.name === name)) problems.push(`tool "${name}" of the tools list is not offered by MCP server ${config.name}`);
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

function definitionOf(name: string, description: string | undefined, parameters: Record<string, unknown>): ChatCompletionTool {
  return {
    type: 'function',
    function: {
      name,
      ...(description ? { description } : {}),
      parameters,
    },
  };
}
