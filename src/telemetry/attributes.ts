/**
 * The attribute names Hotline's spans carry. The GenAI ones are OpenTelemetry's GenAI semantic
 * conventions, written out here rather than imported: they are still incubating (and moving to a
 * repository of their own), and the package's incubating entry point may rename them in any minor
 * release. A collector matches the names, so they are pinned as the conventions spell them now.
 */

export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
/** The name gen_ai.provider.name replaced; many backends still read only this one. */
export const GEN_AI_SYSTEM = 'gen_ai.system';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
/** Seconds from the request to the first chunk of its stream. */
export const GEN_AI_TIME_TO_FIRST_CHUNK = 'gen_ai.response.time_to_first_chunk';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
export const GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = 'gen_ai.usage.reasoning.output_tokens';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
export const GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';

/** The event on an LLM request's span when its first token arrived. */
export const FIRST_TOKEN_EVENT = 'gen_ai.first_token';

// Hotline's own, under its name.
export const SESSION_ID = 'hotline.session_id';
export const CALL_ID = 'hotline.call_id';
export const CALL_DIRECTION = 'hotline.call.direction';
export const CALL_ADOPTED = 'hotline.call.adopted';
export const CALL_END_REASON = 'hotline.call.end_reason';
export const CALL_TURNS = 'hotline.call.turns';
/** The language the call is in (its prompts' language folder), set at its start and on each switch. */
export const CALL_LANGUAGE = 'hotline.call.language';
/** An event on the call's span when the caller switched language: the new one and how it was told. */
export const LANGUAGE_EVENT = 'hotline.language';
/** Personal data: only with OTEL_INCLUDE_CONTENT=true. */
export const CALL_FROM = 'hotline.call.from';
export const CALL_TO = 'hotline.call.to';
export const TURN_ID = 'hotline.turn.id';
export const TURN_OUTCOME = 'hotline.turn.outcome';
export const TURN_ACTION = 'hotline.turn.action';
export const TURN_FIRST_SPEAK_MS = 'hotline.turn.first_speak_ms';
/** The passages of the business's documents the turn was given (`returns.md › Refunds, line 12`), and how long finding them took. */
export const TURN_KNOWLEDGE_PASSAGES = 'hotline.turn.knowledge.passages';
export const TURN_KNOWLEDGE_MS = 'hotline.turn.knowledge.ms';
/** Of them, the ones the reply drew on. */
export const TURN_KNOWLEDGE_USED = 'hotline.turn.knowledge.used';
/** Personal data: only with OTEL_INCLUDE_CONTENT=true. */
export const TURN_CALLER_TEXT = 'hotline.turn.caller_text';
export const LLM_ROUND = 'hotline.llm.round';
export const LLM_COST_USD = 'hotline.llm.cost_usd';
export const ABORTED = 'hotline.aborted';
export const TOOL_SOURCE = 'hotline.tool.source';
export const TOOL_OUTCOME = 'hotline.tool.outcome';
export const TOOL_SIDE_EFFECT = 'hotline.tool.side_effect';
export const TOOL_REUSED = 'hotline.tool.reused';
export const SPEAK_KIND = 'hotline.speak.kind';
export const SPEAK_CHARS = 'hotline.speak.chars';
export const SPEAK_SENTENCES = 'hotline.speak.sentences';
export const SPEAK_PLAYBACK = 'hotline.speak.playback';
/** Personal data: only with OTEL_INCLUDE_CONTENT=true. */
export const SPEAK_TEXT = 'hotline.speak.text';
export const PLAYBACK_STARTED_EVENT = 'playback.started';
export const PLAYBACK_DURATION_MS = 'hotline.playback.duration_ms';
export const DELIVERY_ID = 'hotline.delivery.id';
export const DELIVERY_ATTEMPT = 'hotline.delivery.attempt';
export const DELIVERY_STATUS = 'hotline.delivery.status';
/** A span still open when its call ended, ended with it. */
export const UNFINISHED = 'hotline.unfinished';

/** The well-known gen_ai.provider.name values, by the host of OPENAI_BASE_URL. */
const PROVIDERS: readonly (readonly [RegExp, string])[] = [
  [/(^|\.)openai\.azure\.com$/, 'azure.ai.openai'],
  [/(^|\.)openai\.com$/, 'openai'],
  [/(^|\.)anthropic\.com$/, 'anthropic'],
  [/(^|\.)mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)x\.ai$/, 'x_ai'],
  [/(^|\.)perplexity\.ai$/, 'perplexity'],
  [/(^|\.)cohere\.(ai|com)$/, 'cohere'],
  [/(^|\.)googleapis\.com$/, 'gcp.gen_ai'],
];

/**
 * gen_ai.provider.name for an OpenAI-compatible endpoint: the convention's value for a provider it
 * knows, else the endpoint's host (an Ollama or vLLM of one's own has no registered name). No base
 * URL is the openai SDK's default, OpenAI itself.
 */
export function providerNameOf(baseURL: string | undefined): string {
  if (baseURL === undefined) return 'openai';
  if (!URL.canParse(baseURL)) return 'unknown';
  const host = new URL(baseURL).hostname;
  for (const [pattern, name] of PROVIDERS) if (pattern.test(host)) return name;
  return host;
}
