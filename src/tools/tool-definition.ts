import type { ChatCompletionTool } from 'openai/resources/chat/completions';

/**
 * Limits of what is offered to the model, for every tool wherever it comes
 * from (a tool file, an MCP server): each tool's definition, and all of them
 * together. Every request of every turn carries the whole offer, so a tool
 * beyond them is left out (and said so) rather than sent.
 */

/** OpenAI refuses a request whose function description is longer (`string_above_max_length`). */
export const MAX_DESCRIPTION_CHARS = 1024;
/** A phone agent needs a handful; OpenAI refuses more than 128 with the call's own. */
export const MAX_OFFERED_TOOLS = 64;
/** The JSON of all business tools' definitions together: about 8,000 tokens in every request. */
export const MAX_OFFER_CHARS = 32_000;

/** The size a definition adds to every request. */
export function definitionChars(definition: ChatCompletionTool): number {
  return JSON.stringify(definition).length;
}
