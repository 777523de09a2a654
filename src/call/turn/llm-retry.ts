import { APIConnectionError, APIError, APIUserAbortError } from 'openai';

/** Rate limits, server errors and broken connections are worth one retry; a bad request is not. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof APIConnectionError) return !(error instanceof APIUserAbortError);
  return error instanceof APIError && (error.status === 429 || (error.status ?? 0) >= 500);
}

/**
 * How long the server asked to wait before trying again, in milliseconds:
 * `retry-after-ms` (OpenAI, Azure) or `Retry-After` in seconds or as an HTTP
 * date; 0 when it said nothing usable.
 */
export function retryAfterMs(error: unknown, now: number = Date.now()): number {
  if (!(error instanceof APIError)) return 0;
  const headers: unknown = error.headers;
  if (!(headers instanceof Headers)) return 0;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers.get('retry-after')?.trim();
  if (!value) return 0;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - now);
}
