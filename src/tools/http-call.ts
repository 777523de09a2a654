import type { RenderedRequest } from './request-template.js';

/**
 * One request to a business system, its answer read with a hard cap: a
 * system that answers with a gigabyte must not take the process's memory
 * with it. Beyond the cap reading stops and the prefix is used.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  /** The body as text, at most `maxBytes` of it. */
  readonly text: string;
  /** True if the body went on past the cap. */
  readonly cut: boolean;
}

/** Rejects on network failures and when `signal` aborts, as fetch does. */
export async function sendRequest(request: RenderedRequest, signal: AbortSignal, maxBytes = MAX_ANSWER_BYTES): Promise<HttpAnswer> {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal,
    // A redirect to another host would carry the headers (and their secrets) along.
    redirect: 'manual',
  });
  const { text, cut } = await readCapped(response, maxBytes);
  return { status: response.status, ok: response.ok, text, cut };
}

async function readCapped(response: Response, maxBytes: number): Promise<{ text: string; cut: boolean }> {
  if (response.body === null) return { text: '', cut: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - size;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      size += room;
      cut = true;
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  if (cut) await reader.cancel().catch(() => undefined);
  // Lenient decoding: a prefix may end inside a character, and a business system's bad byte is no reason to fail.
  return { text: new TextDecoder().decode(concat(chunks, size)), cut };
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}

/** A JSON answer as its value, anything else (or a cut answer) as its text. */
export function answerValue(answer: HttpAnswer): { json: true; value: unknown } | { json: false; text: string } {
  if (!answer.cut) {
    try {
      return { json: true, value: JSON.parse(answer.text) as unknown };
    } catch {
      // Not JSON, whatever the content type claims: the text is still worth reading.
    }
  }
  return { json: false, text: answer.text };
}
