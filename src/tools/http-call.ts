import type { BusinessConnections } from '../call/ports/business-tools.js';
import { createHttpFetch } from '../net/http-fetch.js';
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

/**
 * The connections to business systems, shared by every call: kept as long as each server allows,
 * and opened ahead of a turn that may need them (BusinessConnections). This client follows no
 * redirect: one to another host would carry the headers (and their secrets) along.
 */
const businessSystems = createHttpFetch({ rawBodies: 'all' });

export const businessConnections: BusinessConnections = {
  expect: (holder, origin) => businessSystems.expect(holder, origin),
  spent: (holder) => businessSystems.spent(holder),
};

/** Rejects on network failures and when `signal` aborts, as fetch does. */
export async function sendRequest(request: RenderedRequest, signal: AbortSignal, maxBytes = MAX_ANSWER_BYTES): Promise<HttpAnswer> {
  const response = await businessSystems.fetch(request.url, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    signal,
  });
  const raw = businessSystems.rawBody(response);
  const { body, cut } = raw ? await readStream(raw, maxBytes) : { body: new Uint8Array(0), cut: false };
  return { status: response.status, ok: response.ok, body, cut };
}

/** An answer's body, as Node's stream, read up to the cap. */
async function readStream(raw: AsyncIterable<Uint8Array> & { destroy(): void }, maxBytes: number): Promise<{ body: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const value of raw) {
    const room = maxBytes - size;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      size += room;
      // Enough read: the rest is not worth the connection.
      raw.destroy();
      return { body: concat(chunks, size), cut: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { body: concat(chunks, size), cut: false };
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
