import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BusinessTool, ToolResult, ToolRunContext } from '../call/ports/business-tools.js';
import type { OfferedTool } from './mcp-tool-selection.js';
import { capResult, resultText } from './result-text.js';
import { checkArguments } from './tool-parameters.js';
import { scrubForCap, type ToolScrubber } from './tool-scrubber.js';

/** How a tool reaches its server: throws McpUnavailableError while the server is not connected. */
export interface McpToolCaller {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; meta?: Readonly<Record<string, string>> | undefined },
  ): Promise<CallToolResult>;
}

export interface McpToolSettings {
  /** The server's configured name, as the model may read it in "the <server> system is not reachable". */
  readonly server: string;
  readonly timeoutMs: number;
  readonly maxChars: number;
  readonly holdLines: readonly string[];
  /**
   * Removes the server's secrets (the values of its settings' `${ENV}`) and
   * Hotline's own from everything the tool returns, results and errors alike,
   * before the model, the transcript or the log see it.
   */
  readonly scrub: ToolScrubber;
}

/** One MCP tool as a business tool. Its server may come and go; the tool asks the caller each time. */
export function createMcpTool(offered: OfferedTool, caller: McpToolCaller, settings: McpToolSettings): BusinessTool {
  return {
    name: offered.name,
    source: `MCP server ${settings.server}`,
    definition: offered.definition,
    sideEffect: offered.sideEffect,
    holdLines: settings.holdLines,
    run: async function runMcpTool(argumentsJson: string, context: ToolRunContext): Promise<ToolResult> {
      if (context.signal.aborted) return ABORTED;
      // Checked against the tool's inputSchema here: a server may check nothing, and an argument it never gets does no harm.
      const args = checkArguments(argumentsJson, offered.parameters.validator);
      if ('invalid' in args) return { outcome: 'invalid', content: `error: invalid arguments (${args.invalid}); nothing was done` };
      const capped = (text: string): string => {
        const scrubbed = scrubForCap(text, settings.scrub, settings.maxChars);
        return capResult(scrubbed.text, settings.maxChars, scrubbed.more);
      };
      try {
        // The call's trace rides in the request's _meta, where OpenTelemetry's MCP conventions put it.
        const result = await caller.callTool(offered.serverName, args.value, {
          signal: context.signal,
          timeoutMs: settings.timeoutMs,
          meta: context.propagation,
        });
        const text = contentText(result);
        if (result.isError === true) return { outcome: 'error', content: capped(`error: ${text || `${offered.name} failed`}`) };
        // An empty answer would leave the model guessing whether the tool ran at all.
        return { outcome: 'ok', content: capped(text || '(empty result)') };
      } catch (error) {
        const failed = failure(error, offered.name, context.signal, settings);
        const reason = settings.scrub(reasonOf(error)).slice(0, 200);
        context.log.info({ tool: offered.name, mcp_server: settings.server, outcome: failed.outcome, reason }, 'mcp tool failed');
        return { ...failed, content: capped(failed.content) };
      }
    },
  };
}

const ABORTED: ToolResult = { outcome: 'aborted', content: 'not done: the caller interrupted' };

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
      return { outcome: 'error', content: `error: ${serverMessage(error)}` };
    }
  }
  // The connection closed under the call, the server was down, or the network failed.
  return { outcome: 'unavailable', content: `error: the ${settings.server} system is not reachable right now` };
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/**
 * McpError prefixes "MCP error -32602: " to the server's words, and a server
 * built on the SDK that threw one sent its words prefixed already; the model
 * needs only the words.
 */
function serverMessage(error: McpError): string {
  return error.message.replace(/^(MCP error -?\d+: )+/, '') || `code ${error.code}`;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
