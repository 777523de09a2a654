/**
 * The token counts a server reports for one request, read defensively from a
 * streamed chunk. Servers put them in different places: OpenAI, Azure, xAI,
 * Alibaba and OpenRouter send a last chunk with empty `choices` and `usage`
 * (when asked with `stream_options.include_usage`); DeepSeek, Mistral,
 * Cerebras, Groq, Perplexity and Z.ai put `usage` on the chunk that finishes
 * the reply, asked or not (Groq also under `x_groq.usage`, Perplexity on every
 * chunk, growing). Cached prompt tokens are `prompt_tokens_details.cached_tokens`
 * almost everywhere, `prompt_cache_hit_tokens` at DeepSeek and
 * `cache_read_input_tokens` behind gateways that pass Anthropic's names on.
 */

/** One request's tokens, or a turn's (its requests summed). */
export interface TokenUsage {
  readonly prompt: number;
  readonly completion: number;
  /** The part of `prompt` the provider read from its cache; undefined when the server does not say. */
  readonly cached?: number;
  /** The part of `completion` spent thinking; undefined when the server does not say. */
  readonly reasoning?: number;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A token count, or undefined for anything that is not one (null, a string, a fraction, a negative). */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function field(parent: unknown, key: string): unknown {
  return isObject(parent) ? parent[key] : undefined;
}

/** The usage a chunk carries, or undefined when it carries none (most chunks: `usage` absent or null). */
export function readUsage(chunk: unknown): TokenUsage | undefined {
  if (!isObject(chunk)) return undefined;
  const usage = isObject(chunk['usage']) ? chunk['usage'] : field(chunk['x_groq'], 'usage');
  if (!isObject(usage)) return undefined;
  const prompt = count(usage['prompt_tokens']) ?? count(usage['input_tokens']);
  const completion = count(usage['completion_tokens']) ?? count(usage['output_tokens']);
  if (prompt === undefined && completion === undefined) return undefined;
  const cached =
    count(field(usage['prompt_tokens_details'], 'cached_tokens')) ??
    count(usage['prompt_cache_hit_tokens']) ??
    count(usage['cache_read_input_tokens']) ??
    count(usage['cached_tokens']);
  const reasoning = count(field(usage['completion_tokens_details'], 'reasoning_tokens')) ?? count(usage['reasoning_tokens']);
  return {
    prompt: prompt ?? 0,
    completion: completion ?? 0,
    ...(cached !== undefined ? { cached } : {}),
    ...(reasoning !== undefined ? { reasoning } : {}),
  };
}

/** The tokens of two requests together; a count is known if either request said it. */
export function addUsage(sum: TokenUsage | undefined, more: TokenUsage): TokenUsage {
  if (!sum) return more;
  const either = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
  const cached = either(sum.cached, more.cached);
  const reasoning = either(sum.reasoning, more.reasoning);
  return {
    prompt: sum.prompt + more.prompt,
    completion: sum.completion + more.completion,
    ...(cached !== undefined ? { cached } : {}),
    ...(reasoning !== undefined ? { reasoning } : {}),
  };
}
