import { describe, expect, test } from 'vitest';
import { LlmStreamError, sseChunks } from '../src/llm/sse-chunks.js';

function body(...pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const chunk of sseChunks(stream)) out.push(chunk);
  return out;
}

describe('sseChunks', () => {
  test('events split anywhere, CRLF line ends, comments and other fields; stops at [DONE]', async () => {
    const events = await collect(
      body(': keep-alive\r\n\r\nevent: message\r\nid: 1\r\nda', 'ta: {"id":"a","choi', 'ces":[]}\r\n\r\n', 'data:{"id":"b","choices":[]}\n\n', 'data: [DONE]\n\ndata: {"id":"after"}\n\n'),
    );
    expect(events).toEqual([
      { id: 'a', choices: [] },
      { id: 'b', choices: [] },
    ]);
  });

  test('multi-line data is joined with newlines; a multi-byte character split across pieces survives', async () => {
    const bytes = new TextEncoder().encode('data: {"id":"é",\ndata: "choices":[]}\n\n');
    const cut = bytes.indexOf(0xc3) + 1;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, cut));
        controller.enqueue(bytes.slice(cut));
        controller.close();
      },
    });
    expect(await collect(stream)).toEqual([{ id: 'é', choices: [] }]);
  });

  test('an error event inside the stream throws a typed error', async () => {
    await expect(collect(body('data: {"error":{"message":"overloaded"}}\n\n'))).rejects.toThrow(LlmStreamError);
  });
});
