import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BusinessTool, ToolResult, ToolRunContext } from '../call/ports/business-tools.js';
import type { OfferedTool } from './mcp-tool-selection.js';
import { capResult, resultText } from './result-text.js';

/** How a tool reaches its server: throws McpUnavailableError while the server is not connected. */
export interface McpToolCaller {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CallToolResult>;
}

export interface McpToolSettings {
  /** The server's configured name, as the model may read it in "the <server> system is not reachable". */
  readonly server: string;
  readonly timeoutMs: number;
  readonly maxChars: number;
  readonly holdLines: readonly string[];
  /** Removes the server's secrets (its expanded headers and env values) from a text bound for the log. */
  readonly scrub: (text: string) => string;
}

/** One MCP tool as a business tool. Its server may come and go; the tool asks the caller each time. */
export function createMcpTool(offered: OfferedTool, caller: McpToolCaller, settings: McpToolSettings): BusinessTool {
  return {
    name: offered.name,
    definition: offered.definition,
    sideEffect: offered.sideEffect,
    holdLines: settings.holdLines,
    run: async function runMcpTool(argumentsJson: string, context: ToolRunContext): Promise<ToolResult> {
      const args = parseArguments(argumentsJson);
      if (typeof args === 'string') return { outcome: 'invalid', content: `error: ${args}` };
      if (context.signal.aborted) return ABORTED;
      try {
        const result = await caller.callTool(offered.serverName, args, { signal: context.signal, timeoutMs: settings.timeoutMs });
        const text = contentText(result);
        if (result.isError === true) {
          return { outcome: 'error', content: capResult(`error: ${text || `${offered.name} failed`}`, settings.maxChars) };
        }
        // An empty answer would leave the model guessing whether the tool ran at all.
        return { outcome: 'ok', content: capResult(text || '(empty result)', settings.maxChars) };
      } catch (error) {
        const failed = failure(error, offered.name, context.signal, settings);
        context.log.info({ tool: offered.name, mcp_server: settings.server, outcome: failed.outcome, reason: settings.scrub(reasonOf(error)) }, 'mcp tool failed');
        return failed;
      }
    },
  };
}

const ABORTED: ToolResult = { outcome: 'aborted', content: 'not done: the caller interrupted' };

/** The model's arguments as an object, or why they are not one. Empty means no arguments. */
function parseArguments(argumentsJson: string): Record<string, unknown> | string {
  if (argumentsJson.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch {
    return 'the arguments are not valid JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'the arguments must be a JSON object';
  return parsed as Record<string, unknown>;
}

/** The text parts, in order; a result of structured data only reads as its JSON. */
function contentText(result: CallToolResult): string {
  const texts: string[] = [];
  for (const part of result.content) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'resource' && 'text' in part.resource) texts.push(part.resource.text);
  }
  if (texts.length > 0) return texts.join('\n');
  return resultText(result.structuredContent);
}

function failure(error: unknown, tool: string, signal: AbortSignal, settings: McpToolSettings): ToolResult {
  // The SDK rejects an aborted request with a timeout error carrying the abort's reason; the signal is the truth.
  if (signal.aborted) return ABORTED;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return { outcome: 'timeout', content: `error: ${tool} did not answer within ${seconds(settings.timeoutMs)} s` };
    }
    // A JSON-RPC error the server sent (unknown tool, bad arguments): the model may do better with its words.
    if (error.code !== ErrorCode.ConnectionClosed) {
      return { outcome: 'error', content: capResult(`error: ${serverMessage(error)}`, settings.maxChars) };
    }
  }
  // The connection closed under the call, the server was down, or the network failed.
  return { outcome: 'unavailable', content: `error: the ${settings.server} system is not reachable right now` };
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/** McpError prefixes "MCP error -32602: " to the server's words; the model needs only the words. */
function serverMessage(error: McpError): string {
  return error.message.replace(/^MCP error -?\d+: /, '') || `code ${error.code}`;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 200) : String(error).slice(0, 200);
}
