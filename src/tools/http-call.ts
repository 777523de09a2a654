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
  /**
   * The body's bytes, at most `maxBytes` of them, in a buffer of their own:
   * digested (answer-thread.ts) rather than decoded here, as a big one must
   * not be parsed on the event loop.
   */
  readonly body: Uint8Array;
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
  const { body, cut } = await readCapped(response, maxBytes);
  return { status: response.status, ok: response.ok, body, cut };
}

async function readCapped(response: Response, maxBytes: number): Promise<{ body: Uint8Array; cut: boolean }> {
  if (response.body === null) return { body: new Uint8Array(0), cut: false };
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
  return { body: concat(chunks, size), cut };
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
