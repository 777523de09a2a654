import OpenAI from 'openai';
import { createHttpFetch, type HttpFetch } from '../net/http-fetch.js';
import { LlmStreamError, sseChunks } from './sse-chunks.js';
import { ChatSender } from './chat-sender.js';
import { withCacheMarks, type CacheMarks } from './cache-marks.js';
import { StreamUsage, type StreamUsageMode } from './stream-usage.js';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';

export interface LlmRequest {
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  /** Per-call overrides, from the system prompt's front matter. */
  model?: string | undefined;
  temperature?: number | undefined;
  /** The most tokens the reply may take; a looping model stops there (and at Hotline's character limit). */
  maxTokens?: number | undefined;
  /** The leading characters of the system message every call of its prompt version shares: where a cache mark goes. */
  staticSystemChars?: number | undefined;
}

/** A streaming chat model. The one real implementation is the OpenAI SDK; the demo model is served to it over HTTP. */
export interface Llm {
  readonly model: string;
  stream(request: LlmRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>>;
  /** `holder` (a call) will soon ask: a connection to the model is opened now unless one is idle. */
  expect?(holder: object): void;
  /** `holder`'s request has gone out, or it needs none any more. */
  spent?(holder: object): void;
}

export interface OpenAiLlmOptions {
  apiKey: string | undefined;
  baseURL: string | undefined;
  model: string;
  temperature?: number | undefined;
  /** Which request field carries the token cap: OpenAI's reasoning models accept only max_completion_tokens, other servers know max_tokens. */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
  /** Anthropic-style cache marks on every request (LLM_CACHE_MARKS); default none. */
  cacheMarks?: CacheMarks;
  /** Whether requests ask for their token usage (LLM_STREAM_USAGE); default auto. */
  streamUsage?: StreamUsageMode;
  /** Told once if the server turns out to refuse `stream_options`. */
  onStreamUsageRefused?: () => void;
}

export class OpenAiLlm implements Llm {
  private readonly client: OpenAI;
  private readonly http: HttpFetch = createHttpFetch();
  private readonly sender: ChatSender;
  private origin: URL | undefined;
  readonly model: string;
  private readonly temperature: number | undefined;
  private readonly maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  private readonly cacheMarks: CacheMarks;
  private readonly usage: StreamUsage;

  constructor(options: OpenAiLlmOptions) {
    this.client = new OpenAI({
      // Self-hosted endpoints (Ollama, vLLM) need no key, but the SDK insists on one.
      apiKey: options.apiKey ?? 'not-needed',
      baseURL: options.baseURL ?? null,
      // Retrying costs the caller seconds of silence; failures are handled per turn.
      maxRetries: 0,
      // node:http instead of undici: its fetch and web streams cost more per token than Hotline itself.
      fetch: this.http.fetch,
    });
    this.sender = new ChatSender(this.client, this.http);
    this.model = options.model;
    this.temperature = options.temperature;
    this.maxTokensParam = options.maxTokensParam ?? 'max_completion_tokens';
    this.cacheMarks = options.cacheMarks ?? 'none';
    this.usage = new StreamUsage(options.streamUsage ?? 'auto', options.baseURL, options.onStreamUsageRefused);
  }

  get baseURL(): string {
    return this.client.baseURL;
  }

  expect(holder: object): void {
    this.origin ??= new URL(this.client.baseURL);
    this.http.expect(holder, this.origin);
  }

  spent(holder: object): void {
    this.http.spent(holder);
  }

  /** Connections opened ahead of need, and how many of them a request took. */
  get spareCounts(): { opened: number; taken: number } {
    return this.http.spareCounts;
  }

  /** Closes the LLM connections kept alive between turns; call it once no turn runs any more. */
  close(): void {
    this.http.close();
  }

  async stream(request: LlmRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    // The request goes out as the SDK would send it (ChatSender), failures as its typed errors; the
    // body of a successful answer is read, as Node's own stream, by Hotline's lean SSE reader. The
    // sender hears of an abort only while the request is pending: once the body is Hotline's, a
    // barge-in closes it directly, without an AbortError and the socket error that follows it.
    const pending = new AbortController();
    const forward = (): void => pending.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    const temperature = request.temperature ?? this.temperature;
    const askUsage = this.usage.asking;
    const body = JSON.stringify({
      model: request.model ?? this.model,
      ...withCacheMarks(this.cacheMarks, request),
      stream: true,
      ...(askUsage ? { stream_options: { include_usage: true } } : {}),
      ...(temperature === undefined ? {} : { temperature }),
      ...(request.maxTokens === undefined ? {} : { [this.maxTokensParam]: request.maxTokens }),
    } satisfies ChatCompletionCreateParamsStreaming);
    let response: Response;
    try {
      response = await this.sender.post(body, pending.signal);
    } catch (error) {
      signal.removeEventListener('abort', forward);
      // A server that refuses stream_options is asked again at once without it (see StreamUsage).
      if (this.usage.failed(askUsage, error) && !signal.aborted) return this.stream(request, signal);
      throw error;
    }
    signal.removeEventListener('abort', forward);
    this.usage.succeeded(askUsage);
    // Every 2xx answer of this client carries its body as a Node stream; the sender threw for the rest.
    const raw = this.http.rawBody(response);
    if (!raw) throw new LlmStreamError('the LLM answered without a body');
    const close = (): void => {
      // Without an error: Node formats the stack of an error a stream is destroyed with, which
      // under source maps costs more than the rest of a barge-in. The reader learns of the abort
      // from the signal.
      raw.destroy();
    };
    if (signal.aborted) close();
    else {
      signal.addEventListener('abort', close, { once: true });
      raw.once('close', () => signal.removeEventListener('abort', close));
    }
    return sseChunks(raw, signal);
  }
}
