import OpenAI from 'openai';
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
}

export class OpenAiLlm implements Llm {
  private readonly client: OpenAI;
  readonly model: string;
  private readonly temperature: number | undefined;

  constructor(options: OpenAiLlmOptions) {
    this.client = new OpenAI({
      // Self-hosted endpoints (Ollama, vLLM) need no key, but the SDK insists on one.
      apiKey: options.apiKey ?? 'not-needed',
      baseURL: options.baseURL ?? null,
      // Retrying costs the caller seconds of silence; failures are handled per turn.
      maxRetries: 0,
    });
    this.model = options.model;
    this.temperature = options.temperature;
  }

  get baseURL(): string {
    return this.client.baseURL;
  }

  async stream(request: LlmRequest, signal: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    // The SDK builds and authenticates the request and turns error statuses into its typed errors;
    // the body of a successful answer is read by Hotline's own lean SSE reader.
    const response = await this.client.chat.completions
      .create(
        {
          model: request.model ?? this.model,
          messages: request.messages,
          tools: request.tools,
          stream: true,
          ...((request.temperature ?? this.temperature) === undefined
            ? {}
            : { temperature: request.temperature ?? this.temperature }),
        },
        { signal },
      )
      .asResponse();
    if (!response.body) throw new LlmStreamError('the LLM answered without a body');
    return sseChunks(response.body);
  }
}
