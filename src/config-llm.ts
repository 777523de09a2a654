/**
 * The model's settings and those of the tools it calls: which LLM is asked, how long it may take,
 * what a turn may cost. A group of config.ts's environment schema, kept with the part of `Config`
 * it fills so that an LLM variable, its type and its mapping are changed in one place.
 */
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { CACHE_MARKS, type CacheMarks } from './llm/cache-marks.js';
import { STREAM_USAGE_MODES, type StreamUsageMode } from './llm/stream-usage.js';
import { boolean, int, text, url } from './config-values.js';

export const LlmEnv = z.object({
  OPENAI_API_KEY: text.optional(),
  OPENAI_BASE_URL: url('OPENAI_BASE_URL', 'http://localhost:11434/v1'),
  LLM_MODEL: text.min(1).default('gpt-4o-mini'),
  LLM_TEMPERATURE: z.coerce
    .number({ error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .min(0, { error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .max(2, { error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .optional(),
  LLM_TIMEOUT_MS: int('LLM_TIMEOUT_MS', 1, 8000, ' of milliseconds'),
  LLM_THINKING_TIMEOUT_MS: int('LLM_THINKING_TIMEOUT_MS', 1, 20_000, ' of milliseconds'),
  LLM_TOTAL_TIMEOUT_MS: int('LLM_TOTAL_TIMEOUT_MS', 1, 30_000, ' of milliseconds'),
  LLM_MAX_FAILURES: int('LLM_MAX_FAILURES', 1, 3),
  LLM_HISTORY_MAX_CHARS: int('LLM_HISTORY_MAX_CHARS', 1, 32_000, ' of characters'),
  LLM_MAX_TOKENS: int('LLM_MAX_TOKENS', 0, 2048, ' of tokens'),
  LLM_MAX_TOKENS_PARAM: z
    .enum(['auto', 'max_tokens', 'max_completion_tokens'], {
      error: 'LLM_MAX_TOKENS_PARAM must be auto, max_tokens or max_completion_tokens',
    })
    .default('auto'),
  LLM_MAX_TOOL_ROUNDS: int('LLM_MAX_TOOL_ROUNDS', 1, 4),
  LLM_CACHE_MARKS: z.enum(CACHE_MARKS, { error: 'LLM_CACHE_MARKS must be none or anthropic' }).default('none'),
  LLM_PRICES_FILE: text.optional(),
  LLM_STREAM_USAGE: z.enum(STREAM_USAGE_MODES, { error: 'LLM_STREAM_USAGE must be auto, true or false' }).default('auto'),
  TOOL_HOLD_MS: int('TOOL_HOLD_MS', 0, 500, ' of milliseconds'),
  TOOL_HOLD_REPEAT_MS: int('TOOL_HOLD_REPEAT_MS', 500, 5000, ' of milliseconds'),
  TOOL_TIMEOUT_MS: int('TOOL_TIMEOUT_MS', 100, 5000, ' of milliseconds'),
  TOOL_RESULT_MAX_CHARS: int('TOOL_RESULT_MAX_CHARS', 100, 2000, ' of characters'),
  LLM_CHECK_AT_START: boolean('LLM_CHECK_AT_START', true),
  REPLY_MAX_CHARS: int('REPLY_MAX_CHARS', 1, 1000, ' of characters'),
  THINKING_FILLER_MS: int('THINKING_FILLER_MS', 0, 2500, ' of milliseconds'),
  DEMO_TTFT_MS: int('DEMO_TTFT_MS', 0, 300, ' of milliseconds'),
  DEMO_TOKEN_DELAY_MS: int('DEMO_TOKEN_DELAY_MS', 0, 15, ' of milliseconds'),
});

export interface LlmConfig {
  llm: {
    /** 'demo' runs the built-in scripted model through the same SDK code path. */
    mode: 'remote' | 'demo';
    apiKey: string | undefined;
    baseURL: string | undefined;
    model: string;
    temperature: number | undefined;
    /** No first token (answer or reasoning) within this: the turn fails. */
    timeoutMs: number;
    /** A model still only reasoning after this has nothing to say: the turn fails. */
    thinkingTimeoutMs: number;
    totalTimeoutMs: number;
    maxFailures: number;
    /** Budget of the history sent per request, in characters; the transcript on disk stays whole. */
    historyMaxChars: number;
    /** Sent as `maxTokensParam`; undefined sends no cap. */
    maxTokens: number | undefined;
    maxTokensParam: 'max_tokens' | 'max_completion_tokens';
    /** LLM requests one turn may make while the model calls tools. */
    maxToolRounds: number;
    /** Anthropic-style cache marks after the static system prompt and the tools, for gateways that cache only where marked. */
    cacheMarks: CacheMarks;
    /** A JSON price table over the built-in list prices (src/llm/prices.ts). */
    pricesFile: string | undefined;
    /** Whether each request asks for its token usage (`stream_options.include_usage`). */
    streamUsage: StreamUsageMode;
    /** A cheap request at startup tells whether the LLM is reachable and the key accepted. */
    checkAtStart: boolean;
  };
  /** The longest reply spoken, in characters; the LLM stream is closed there. */
  replyMaxChars: number;
  /** A reasoning model silent this long: WebSocket callers hear prompts/thinking.md; 0 never. */
  thinkingFillerMs: number;
  tools: {
    /** A tool still running this long after the model's call: the caller hears its hold line. */
    holdMs: number;
    /** While it runs on, another hold line this long after the last one has played. */
    holdRepeatMs: number;
    /** Defaults of tool files and MCP servers that set none. */
    timeoutMs: number;
    resultMaxChars: number;
  };
  demo: { ttftMs: number; tokenDelayMs: number };
}

/** OpenAI itself wants max_completion_tokens (its reasoning models refuse max_tokens); every other server knows max_tokens. */
function maxTokensParamFor(baseURL: string | undefined): 'max_tokens' | 'max_completion_tokens' {
  if (!baseURL) return 'max_completion_tokens';
  const host = new URL(baseURL).hostname;
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'max_completion_tokens' : 'max_tokens';
}

/** The LLM part of the configuration; in production, no LLM configured is refused rather than answered by the demo. */
export function llmConfigOf(e: z.infer<typeof LlmEnv>, production: boolean): LlmConfig {
  const mode = e.OPENAI_API_KEY || e.OPENAI_BASE_URL ? 'remote' : 'demo';
  if (mode === 'demo' && production) {
    throw new ConfigError(
      'No LLM configured: set OPENAI_API_KEY (OpenAI) and/or OPENAI_BASE_URL (Azure, Ollama, vLLM or any ' +
        'OpenAI-compatible endpoint), and LLM_MODEL. The built-in demo model is refused when NODE_ENV=production.',
    );
  }
  return {
    llm: {
      mode,
      apiKey: e.OPENAI_API_KEY,
      baseURL: e.OPENAI_BASE_URL,
      model: mode === 'demo' ? 'hotline-demo' : e.LLM_MODEL,
      temperature: e.LLM_TEMPERATURE,
      timeoutMs: e.LLM_TIMEOUT_MS,
      thinkingTimeoutMs: e.LLM_THINKING_TIMEOUT_MS,
      totalTimeoutMs: e.LLM_TOTAL_TIMEOUT_MS,
      maxFailures: e.LLM_MAX_FAILURES,
      historyMaxChars: e.LLM_HISTORY_MAX_CHARS,
      maxTokens: e.LLM_MAX_TOKENS > 0 ? e.LLM_MAX_TOKENS : undefined,
      maxTokensParam: e.LLM_MAX_TOKENS_PARAM === 'auto' ? maxTokensParamFor(e.OPENAI_BASE_URL) : e.LLM_MAX_TOKENS_PARAM,
      maxToolRounds: e.LLM_MAX_TOOL_ROUNDS,
      cacheMarks: e.LLM_CACHE_MARKS,
      pricesFile: e.LLM_PRICES_FILE,
      streamUsage: e.LLM_STREAM_USAGE,
      checkAtStart: e.LLM_CHECK_AT_START,
    },
    replyMaxChars: e.REPLY_MAX_CHARS,
    thinkingFillerMs: e.THINKING_FILLER_MS,
    tools: {
      holdMs: e.TOOL_HOLD_MS,
      holdRepeatMs: e.TOOL_HOLD_REPEAT_MS,
      timeoutMs: e.TOOL_TIMEOUT_MS,
      resultMaxChars: e.TOOL_RESULT_MAX_CHARS,
    },
    demo: { ttftMs: e.DEMO_TTFT_MS, tokenDelayMs: e.DEMO_TOKEN_DELAY_MS },
  };
}
