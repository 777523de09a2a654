/**
 * Anthropic-style prompt cache marks (`cache_control: {type: "ephemeral"}`),
 * as gateways that serve Claude and other models through the Chat Completions
 * API accept them (OpenRouter, LiteLLM): a provider that caches only where it
 * is told caches the request up to each mark. OpenAI, DeepSeek and xAI cache
 * the longest known prefix by themselves and need none; a server that knows
 * no such field may refuse it, so marks are sent only where configured.
 */
import type { ChatCompletionContentPartText, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

/** `none`: no marks (the default). `anthropic`: a mark after the static part of the system prompt and after the tools. */
export const CACHE_MARKS = ['none', 'anthropic'] as const;
export type CacheMarks = (typeof CACHE_MARKS)[number];

const EPHEMERAL = Object.freeze({ type: 'ephemeral' as const });

type Marked<T> = T & { cache_control: typeof EPHEMERAL };

/**
 * The request's messages and tools with their marks: the system message
 * (`messages[0]`) becomes two text parts, its first `staticChars` characters
 * — the same for every call of the prompt version — marked, and the last
 * tool is marked. Anthropic reads a request as tools, system, messages: the
 * two marks cache the tools, then the tools and the static system text. With
 * `none`, or nothing static, the arrays are the request's own.
 */
export function withCacheMarks(
  marks: CacheMarks,
  request: { readonly messages: ChatCompletionMessageParam[]; readonly tools: ChatCompletionTool[]; readonly staticSystemChars?: number | undefined },
): { messages: ChatCompletionMessageParam[]; tools: ChatCompletionTool[] } {
  if (marks === 'none') return { messages: request.messages, tools: request.tools };
  return { messages: markSystem(request.messages, request.staticSystemChars ?? 0), tools: markLastTool(request.tools) };
}

function markSystem(messages: ChatCompletionMessageParam[], staticChars: number): ChatCompletionMessageParam[] {
  const [system, ...rest] = messages;
  if (system?.role !== 'system' || typeof system.content !== 'string' || staticChars <= 0) return messages;
  const text = system.content;
  const head: Marked<ChatCompletionContentPartText> = { type: 'text', text: text.slice(0, staticChars), cache_control: EPHEMERAL };
  const tail = text.slice(staticChars);
  const content: ChatCompletionContentPartText[] = tail === '' ? [head] : [head, { type: 'text', text: tail }];
  return [{ ...system, content }, ...rest];
}

function markLastTool(tools: ChatCompletionTool[]): ChatCompletionTool[] {
  const last = tools.at(-1);
  if (!last) return tools;
  const marked: Marked<ChatCompletionTool> = { ...last, cache_control: EPHEMERAL };
  return [...tools.slice(0, -1), marked];
}
