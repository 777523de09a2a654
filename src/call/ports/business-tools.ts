import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import type { Logger } from '../../logger.js';

/**
 * What the call core needs of the tools a business gives its agent (HTTP
 * tools from files, MCP servers) and of the caller-context lookup. The core
 * owns these interfaces; `src/tools` implements them and `server.ts` wires
 * them in, so the core never imports a tool implementation.
 */

/** How a tool run ended, for the transcript and the metrics. */
export const TOOL_OUTCOMES = ['ok', 'error', 'timeout', 'invalid', 'unavailable', 'aborted'] as const;
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

export interface ToolResult {
  /**
   * What the model reads: the picked, capped answer, or one short sentence
   * about what went wrong ("the booking system did not answer in time").
   */
  content: string;
  outcome: ToolOutcome;
}

/** A text message a tool asks the call to send to the person on the line. */
export interface CallerText {
  /** The template it was made from, for the record. */
  readonly template: string;
  /** The message, plain text, as it is to be sent. */
  readonly message: string;
}

/** What became of a text message: sent (and how many more the call may send), or why not. */
export type TextSent =
  | { readonly sent: true; readonly left: number }
  | { readonly sent: false; readonly reason: 'no_number' | 'limit' | 'ended' | 'empty'; readonly max: number };

export interface ToolRunContext {
  /** The call's template variables (caller_number, an outbound call's own, the caller context's fields). */
  readonly variables: Readonly<Record<string, string | undefined>>;
  /** Aborted when the run is no longer wanted (a barge-in on a tool without side effect, the call ending). */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /**
   * W3C Trace Context headers (`traceparent`, `tracestate`) of the tool's span, for the business
   * system to carry the call's trace on; undefined when calls are not traced.
   */
  readonly propagation?: Readonly<Record<string, string>> | undefined;
  /**
   * Sends a text message to the person on the line — the caller, or the person called — and to no
   * other number: the call knows whom it is with, so no tool and no model ever names the number. At
   * most the call's maximum (SMS_MAX_PER_CALL); each one sent is on the transcript. Undefined where
   * the call sends none.
   */
  readonly textCaller?: ((text: CallerText) => TextSent) | undefined;
}

export interface BusinessTool {
  readonly name: string;
  /** As offered to the model. */
  readonly definition: ChatCompletionTool;
  /** Changes something (a booking): run at most once per call for the same arguments, and never aborted. */
  readonly sideEffect: boolean;
  /** Lines to say while it runs, in order; may be empty. */
  readonly holdLines: readonly string[];
  /** Offered only on calls of these directions (a campaign's do_not_call: outbound); default all. */
  readonly directions?: readonly ('inbound' | 'outbound')[];
  /** Sends text messages through the run's `textCaller`: offered only while the call can send one more. */
  readonly textsCaller?: boolean;
  /** Where it comes from, for what is said about it: `tools/order_status.yaml`, `MCP server crm`. */
  readonly source?: string;
  /** The business system it sends its request to, when the tool file names it outright (no placeholder in it). */
  readonly origin?: URL;
  /**
   * Runs the tool with the model's arguments (JSON text, unchecked). Never
   * rejects: bad arguments, errors, timeouts and aborts are results too.
   */
  run(argumentsJson: string, context: ToolRunContext): Promise<ToolResult>;
}

/** The business tools on offer right now; a server that is down offers none of its tools. */
export interface ToolBox {
  tools(): readonly BusinessTool[];
}

/** The caller's record looked up as a call starts (a CRM), for the greeting and the system prompt. */
export interface CallerContextSource {
  /** The longest the greeting waits for the lookup. */
  readonly timeoutMs: number;
  /**
   * The record's fields as template variables, looked up with the call's
   * variables (caller_number, …); {} when unknown or failed. Never rejects;
   * stops when `signal` aborts.
   */
  lookup(variables: Readonly<Record<string, string | undefined>>, signal: AbortSignal): Promise<Record<string, string>>;
}

/**
 * Connections to the business systems, opened ahead of a tool's request so that it pays no
 * handshake: one wish per holder (a call) and origin, bounded in number and time.
 */
export interface BusinessConnections {
  expect(holder: object, origin: URL): void;
  /** `holder`'s requests are made now, or it makes none any more. */
  spent(holder: object): void;
}
