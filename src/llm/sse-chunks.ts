import { StringDecoder } from 'node:string_decoder';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { abortError } from './http-fetch.js';

/** The LLM reported an error inside an already open stream. */
export class LlmStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmStreamError';
  }
}

/**
 * Chat Completions chunks from a server-sent-events body (a Node stream or a
 * web stream). Hotline reads the raw response itself: the SDK's generic stream
 * layers cost several times more per token than all of Hotline's own work on it.
 */
export async function* sseChunks(body: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncGenerator<ChatCompletionChunk> {
  // Keeps multi-byte characters split across chunks whole, and decodes Buffers faster than TextDecoder's stream mode.
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let data: string | undefined;
  let done = false;
  try {
    for await (const bytes of body) {
      // Like the SDK, read on to the end after [DONE]: leaving the body early would destroy a keep-alive socket.
      if (done) continue;
      const text = rest + decoder.write(bytes);
      let start = 0;
      let newline = text.indexOf('\n');
      while (newline >= 0) {
        const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
        if (end === start) {
          // A blank line ends an event.
          if (data !== undefined) {
            const payload = data;
            data = undefined;
            if (payload === '[DONE]') {
              done = true;
              break;
            }
            const chunk = JSON.parse(payload) as ChatCompletionChunk & { error?: { message?: string } };
            if (chunk.error) throw new LlmStreamError(chunk.error.message ?? 'the LLM reported an error in the stream');
            yield chunk;
          }
        } else if (text.startsWith('data:', start)) {
          const value = text.slice(start + (text.charCodeAt(start + 5) === 32 ? 6 : 5), end);
          data = data === undefined ? value : `${data}\n${value}`;
        }
        // Comments (":"), "event:", "id:" and "retry:" lines carry nothing Hotline needs.
        start = newline + 1;
        newline = text.indexOf('\n', start);
      }
      rest = start === 0 ? text : text.slice(start);
    }
  } catch (error) {
    // A body closed by an abort fails as a premature close: the reader must see the abort.
    if (signal?.aborted) throw abortError(signal);
    throw error;
  }
  // Should a closed body ever end quietly instead, the abort must not pass for the reply's end.
  if (signal?.aborted) throw abortError(signal);
}
