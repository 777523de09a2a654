import OpenAI from 'openai';
import { createHttpFetch, type HttpFetch } from './http-fetch.js';
import { LlmStreamError, sseChunks } from './sse-chunks.js';
import type {
  ChatCompletionChunk,
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
}

/** A streaming chat model. The one real implementation is the OpenAI SDK; the demo model is served to it over HTTP. */
export interface Llm {
  readonly model: string;
  stream(request: LlmRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>>;
}

export interface OpenAiLlmOptions {
  apiKey: string | undefined;
  baseURL: string | undefined;
  model: string;
  temperature?: number | undefined;
  /** Which request field carries the token cap: OpenAI's reasoning models accept only max_completion_tokens, other servers know max_tokens. */
  maxTokensParam?: 'max_tokens' | 'max_completion_tokens';
}

export class OpenAiLlm implements Llm {
  private readonly client: OpenAI;
  private readonly http: HttpFetch = createHttpFetch();
  readonly model: string;
  private readonly temperature: number | undefined;
  private readonly maxTokensParam: 'max_tokens' | 'max_completion_tokens';

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
    this.model = options.model;
    this.temperature = options.temperature;
    this.maxTokensParam = options.maxTokensParam ?? 'max_completion_tokens';
  }

  get baseURL(): string {
    return this.client.baseURL;
  }

  /** Closes the LLM connections kept alive between turns; call it once no turn runs any more. */
  close(): void {
    this.http.close();
  }

  async stream(request: LlmRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    // The SDK builds and authenticates the request and turns error statuses into its typed errors;
    // the body of a successful answer is read, as Node's own stream, by Hotline's lean SSE reader.
    // The SDK hears of an abort only while the request is pending: once the body is Hotline's, a
    // barge-in closes it directly, without the SDK's AbortError and the socket error that follows it.
    const pending = new AbortController();
    const forward = (): void => pending.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    const temperature = request.temperature ?? this.temperature;
    let response: Response;
    try {
      response = await this.client.chat.completions
        .create(
          {
            model: request.model ?? this.model,
            messages: request.messages,
            tools: request.tools,
            stream: true,
            ...(temperature === undefined ? {} : { temperature }),
            ...(request.maxTokens === undefined ? {} : { [this.maxTokensParam]: request.maxTokens }),
          },
          { signal: pending.signal },
        )
        .asResponse();
    } catch (error) {
      signal.removeEventListener('abort', forward);
      throw error;
    }
    signal.removeEventListener('abort', forward);
    // Every 2xx answer of this client carries its body as a Node stream; error statuses the SDK has thrown.
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
