/**
 * What one streamed Chat Completions chunk says, read defensively. The chunk
 * is JSON from the network: real servers differ in shape (content as a string
 * or as an array of parts, refusals, reasoning under several names, tool calls
 * without an index), and a broken or hostile server may send anything at all.
 * Nothing here trusts a field's type, and nothing here can throw.
 */

/** One piece of one tool call. `index` is undefined when the server sent none (Mistral). */
export interface ToolCallPiece {
  index: number | undefined;
  id: string | undefined;
  name: string | undefined;
  arguments: string | undefined;
}

export interface Delta {
  /** Text meant for the caller: plain content, the text parts of array content, or a refusal. */
  text: string;
  /** The model is thinking (reasoning fields, thinking parts): a sign of life, never spoken. */
  reasoning: boolean;
  toolCalls: ToolCallPiece[];
}

/** Tool calls beyond this index are not tool calls a phone agent asked for. */
export const MAX_TOOL_INDEX = 63;

const NO_TOOL_CALLS: ToolCallPiece[] = [];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The first choice's delta, or undefined for chunks without one (usage,
 * keep-alives, `choices: []`). Reasoning is looked for only with
 * `withReasoning`: once a reply is under way nobody needs to know, and the
 * lookups would cost every token.
 */
export function readDelta(chunk: unknown, withReasoning = true): Delta | undefined {
  if (!isObject(chunk)) return undefined;
  const choices = chunk['choices'];
  if (!Array.isArray(choices)) return undefined;
  const choice: unknown = choices[0];
  if (!isObject(choice)) return undefined;
  const delta = choice['delta'];
  if (!isObject(delta)) return undefined;

  let text = '';
  let reasoning = false;
  const content = delta['content'];
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) ({ text, reasoning } = readContentParts(content));
  const refusal = delta['refusal'];
  // A refusal is the model's answer: the caller hears it as written rather than a generic apology.
  if (typeof refusal === 'string' && refusal !== '') text += refusal;
  if (withReasoning && !reasoning) reasoning = hasReasoning(delta);
  const calls = delta['tool_calls'];
  return { text, reasoning, toolCalls: Array.isArray(calls) ? readToolCalls(calls) : NO_TOOL_CALLS };
}

/** Mistral streams content as parts: `text` is the answer, `thinking` is not for the caller. */
function readContentParts(parts: unknown[]): { text: string; reasoning: boolean } {
  let text = '';
  let reasoning = false;
  for (const part of parts) {
    if (typeof part === 'string') text += part;
    else if (!isObject(part)) continue;
    else if (part['type'] === 'text' && typeof part['text'] === 'string') text += part['text'];
    else if (part['type'] === 'thinking' || part['type'] === 'reasoning') reasoning = true;
  }
  return { text, reasoning };
}

/** DeepSeek and Qwen send `reasoning_content`, Groq and OpenRouter `reasoning` (and `reasoning_details`). */
function hasReasoning(delta: Json): boolean {
  for (const key of ['reasoning_content', 'reasoning', 'thinking']) {
    const value = delta[key];
    if (typeof value === 'string' ? value !== '' : isObject(value)) return true;
  }
  const details = delta['reasoning_details'];
  return Array.isArray(details) && details.length > 0;
}

function readToolCalls(calls: unknown[]): ToolCallPiece[] {
  const pieces: ToolCallPiece[] = [];
  for (const call of calls) {
    if (!isObject(call)) continue;
    const index = readIndex(call['index']);
    // An index that is there but no small whole number is not a tool call anyone can answer.
    if (index === null) continue;
    const fn = isObject(call['function']) ? call['function'] : {};
    pieces.push({
      index,
      id: stringOrUndefined(call['id']),
      name: stringOrUndefined(fn['name']),
      arguments: readArguments(fn['arguments']),
    });
  }
  return pieces;
}

/** undefined when absent, null when present but unusable (huge, negative, fractional, a string). */
function readIndex(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TOOL_INDEX) return null;
  return value;
}

function readArguments(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // Some servers put the arguments object itself where the spec has its JSON text.
  if (isObject(value)) return JSON.stringify(value);
  return undefined;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
