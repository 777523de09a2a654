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
import { variableDocs } from './config-sections.js';

export const LlmEnv = z.object({
  OPENAI_API_KEY: text.optional().register(variableDocs, {
    section: 'llm',
    doc: 'API key, sent as the openai SDK sends it. Leave both this and OPENAI_BASE_URL unset for the demo model.',
  }),
  OPENAI_BASE_URL: url('OPENAI_BASE_URL', 'http://localhost:11434/v1').register(variableDocs, {
    section: 'llm',
    doc: 'Endpoint for Azure, Ollama, vLLM, OpenRouter, …',
    example: 'http://localhost:11434/v1',
    unsetMeans: 'OpenAI',
  }),
  LLM_MODEL: text.min(1).default('gpt-4o-mini').register(variableDocs, {
    section: 'llm',
    doc: 'Model name passed to the endpoint.',
  }),
  LLM_TEMPERATURE: z.coerce
    .number({ error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .min(0, { error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .max(2, { error: 'LLM_TEMPERATURE must be a number from 0 to 2' })
    .optional()
    .register(variableDocs, {
      section: 'llm',
      doc: 'Sampling temperature, 0–2.',
      unsetMeans: "the endpoint's default",
    }),
  LLM_TIMEOUT_MS: int('LLM_TIMEOUT_MS', 1, 8000, ' of milliseconds').register(variableDocs, {
    section: 'llm',
    doc: `No first token (answer or reasoning) within this many milliseconds: the caller hears the apology from
      prompts/error.md. A 429's Retry-After is waited out only if the retry still starts within this time.`,
  }),
  LLM_THINKING_TIMEOUT_MS: int('LLM_THINKING_TIMEOUT_MS', 1, 20_000, ' of milliseconds').register(variableDocs, {
    section: 'llm',
    doc: 'A reasoning model that has only thought, said nothing, for this many milliseconds: the apology.',
  }),
  LLM_TOTAL_TIMEOUT_MS: int('LLM_TOTAL_TIMEOUT_MS', 1, 30_000, ' of milliseconds').register(variableDocs, {
    section: 'llm',
    doc: 'A reply still streaming after this many milliseconds is cut: complete sentences stay, then the apology.',
  }),
  LLM_MAX_FAILURES: int('LLM_MAX_FAILURES', 1, 3).register(variableDocs, {
    section: 'llm',
    doc: `After this many failed turns in a row the call goes to TRANSFER_TARGET (prompts/give-up-transfer.md), or
      without one Hotline apologises and hangs up (prompts/give-up.md). 429 and 5xx errors are retried once, quickly,
      while nothing has been said yet.`,
  }),
  LLM_HISTORY_MAX_CHARS: int('LLM_HISTORY_MAX_CHARS', 1, 32_000, ' of characters').register(variableDocs, {
    section: 'llm',
    doc: `Budget of the conversation sent with each LLM request, in characters. Beyond it the oldest turns are left
      out (the system prompt, the greeting and the newest turn always stay); transcripts stay complete. Each cut
      leaves a quarter of the budget free, as a cut changes what a provider can serve from its cache.`,
  }),
  LLM_MAX_TOKENS: int('LLM_MAX_TOKENS', 0, 2048, ' of tokens').register(variableDocs, {
    section: 'llm',
    doc: 'Token cap sent with every request (reasoning models count their thinking in it); 0 sends none.',
  }),
  LLM_MAX_TOKENS_PARAM: z
    .enum(['auto', 'max_tokens', 'max_completion_tokens'], {
      error: 'LLM_MAX_TOKENS_PARAM must be auto, max_tokens or max_completion_tokens',
    })
    .default('auto')
    .register(variableDocs, {
      section: 'llm',
      doc: `The request field of that cap: auto (max_completion_tokens for OpenAI and Azure OpenAI, max_tokens for
        every other endpoint), max_tokens or max_completion_tokens.`,
    }),
  LLM_MAX_TOOL_ROUNDS: int('LLM_MAX_TOOL_ROUNDS', 1, 4).register(variableDocs, {
    section: 'llm',
    doc: `LLM requests one turn may make while the model calls tools: each business tool's result (or an error for a
      tool Hotline does not have) goes back to the model within the same turn. The last request offers only speak,
      transfer and hangup, so the model has to answer with what it knows by then.`,
  }),
  LLM_CACHE_MARKS: z.enum(CACHE_MARKS, { error: 'LLM_CACHE_MARKS must be none or anthropic' }).default('none').register(variableDocs, {
    section: 'llm',
    doc: `Anthropic-style prompt cache marks: none, or anthropic (a cache_control mark after the part of system.md
      every call shares and after the tools, as OpenRouter and LiteLLM take them for Claude and other models that
      cache only where marked). OpenAI, DeepSeek and xAI cache by themselves; a server that does not know the field
      may refuse it, so it is off unless set.`,
  }),
  LLM_PRICES_FILE: text.optional().register(variableDocs, {
    section: 'llm',
    doc: `What the model's tokens cost: list prices of the common models are built in (USD per million tokens); a
      JSON file adds or overrides them, e.g. {"my-model": {"input": 0.2, "cached_input": 0.05, "output": 0.8}}. Each
      turn's cost is on the story page, in the report (cost_usd) and in /metrics (hotline_llm_cost_usd_total).
      npm run eval reads it too.`,
    example: './prices.json',
    unsetMeans: 'the built-in prices',
  }),
  LLM_STREAM_USAGE: z.enum(STREAM_USAGE_MODES, { error: 'LLM_STREAM_USAGE must be auto, true or false' }).default('auto').register(variableDocs, {
    section: 'llm',
    doc: `Ask for each request's token counts (stream_options.include_usage), recorded per turn with the cached ones:
      auto (asks, except Mistral, which sends them anyway; a server that refuses the field is asked once more without
      it and never again), true (always asks) or false (never asks; counts a server sends unasked are still
      recorded).`,
  }),
  TOOL_HOLD_MS: int('TOOL_HOLD_MS', 0, 500, ' of milliseconds').register(variableDocs, {
    section: 'tools',
    doc: `A tool still running this many milliseconds after the model called it: the caller hears its hold line (not
      before speech already on its way has played). 0 says it at once.`,
  }),
  TOOL_HOLD_REPEAT_MS: int('TOOL_HOLD_REPEAT_MS', 500, 5000, ' of milliseconds').register(variableDocs, {
    section: 'tools',
    doc: `While the tool runs on: another hold line (never the same one twice in a row) this many milliseconds after
      the last one has played; at least 500.`,
  }),
  TOOL_TIMEOUT_MS: int('TOOL_TIMEOUT_MS', 100, 5000, ' of milliseconds').register(variableDocs, {
    section: 'tools',
    doc: `Time limit of a tool (or MCP server) that sets no timeout_ms of its own, in milliseconds, at least 100; the
      model then hears it did not answer.`,
  }),
  TOOL_RESULT_MAX_CHARS: int('TOOL_RESULT_MAX_CHARS', 100, 2000, ' of characters').register(variableDocs, {
    section: 'tools',
    doc: `The longest tool result the model sees, in characters (at least 100), for tools that set no max_chars of
      their own.`,
  }),
  SMS_MAX_PER_CALL: int('SMS_MAX_PER_CALL', 0, 0).register(variableDocs, {
    section: 'tools',
    doc: `Text messages one call may send to the person on the line (the caller, or the person called; never another
      number), made from the templates in prompts/sms/ by the send_sms tool (docs/tools.md, "Text messages"). 0 offers no
      such tool. The voice service sends them only once its support has enabled send_sms for the account.`,
    example: '2',
  }),
  LLM_CHECK_AT_START: boolean('LLM_CHECK_AT_START', true).register(variableDocs, {
    section: 'llm',
    doc: `At startup, ask the LLM for its model list (GET /models, 5 s limit, in the background) and log whether it
      can be reached, accepts the key and offers LLM_MODEL.`,
  }),
  REPLY_MAX_CHARS: int('REPLY_MAX_CHARS', 1, 1000, ' of characters').register(variableDocs, {
    section: 'llm',
    doc: 'The longest reply spoken, in characters (about a minute of speech); the LLM stream is closed there.',
  }),
  THINKING_FILLER_MS: int('THINKING_FILLER_MS', 0, 2500, ' of milliseconds').register(variableDocs, {
    section: 'llm',
    doc: `A reasoning model silent for this many milliseconds since the caller spoke: WebSocket callers hear
      prompts/thinking.md once, rather than silence. 0 never.`,
  }),
  DEMO_TTFT_MS: int('DEMO_TTFT_MS', 0, 300, ' of milliseconds').register(variableDocs, {
    section: 'demo',
    doc: "Delay before the demo model's first token, in milliseconds.",
  }),
  DEMO_TOKEN_DELAY_MS: int('DEMO_TOKEN_DELAY_MS', 0, 15, ' of milliseconds').register(variableDocs, {
    section: 'demo',
    doc: "Delay between the demo model's tokens, in milliseconds.",
  }),
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
    /** Text messages one call may send to the person on the line; 0: the send_sms tool is not offered. */
    smsMaxPerCall: number;
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
      smsMaxPerCall: e.SMS_MAX_PER_CALL,
    },
    demo: { ttftMs: e.DEMO_TTFT_MS, tokenDelayMs: e.DEMO_TOKEN_DELAY_MS },
  };
}
