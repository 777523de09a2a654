/** Builds the server-sent-events body of a streamed Chat Completion, chunk by chunk, for hostile or unusual shapes. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** `data:` events for each chunk (objects are JSON-encoded, strings sent as they are), then [DONE]. */
export function sseOf(chunks: readonly (Record<string, unknown> | string)[]): string {
  return `${chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
}
