import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/** The LLM reported an error inside an already open stream. */
export class LlmStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmStreamError';
  }
}

/**
 * Chat Completions chunks from a server-sent-events body. Hotline reads the
 * SDK's raw response itself: the SDK's generic stream layers cost several
 * times more per token than all of Hotline's own work on it.
 */
export async function* sseChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<ChatCompletionChunk> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      let line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        // A blank line ends an event.
        if (data.length === 0) continue;
        const payload = data.join('\n');
        data = [];
        if (payload === '[DONE]') return;
        const chunk = JSON.parse(payload) as ChatCompletionChunk & { error?: { message?: string } };
        if (chunk.error) throw new LlmStreamError(chunk.error.message ?? 'the LLM reported an error in the stream');
        yield chunk;
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
      }
      // Comments (":"), "event:", "id:" and "retry:" lines carry nothing Hotline needs.
    }
  }
}
