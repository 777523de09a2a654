/**
 * LLM errors as they may be logged. The SDK puts a failed answer's whole body
 * into the error's message — a proxy's or a web server's HTML page of many
 * kilobytes when the address is wrong — and the stack repeats the message. A
 * log line gets the status and a short excerpt, never the body whole.
 */
import { APIError } from 'openai';

/** The most characters of an upstream answer (or any error message) a log line carries. */
export const LOGGED_BODY_MAX_CHARS = 300;

/** A text fit for one log line: an HTML page by its title, anything else with whitespace collapsed and cut. */
export function bodyExcerpt(text: string, max = LOGGED_BODY_MAX_CHARS): string {
  const trimmed = text.trim();
  if (/^(?:\d{3}\s+)?<(?:!doctype\s+html|html|head|body)\b/i.test(trimmed)) {
    const status = /^\d{3}\s+/.exec(trimmed)?.[0] ?? '';
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1]?.replace(/\s+/g, ' ').trim();
    const page = `an HTML page${title ? ` titled "${title.slice(0, 80)}"` : ''} of ${trimmed.length - status.length} characters`;
    return `${status}${page}`;
  }
  const flat = trimmed.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max)}… (${flat.length - max} more characters)`;
}

/**
 * What a log line says of a failed LLM request: type, status and an excerpt (`detail`), a stack only
 * where it is Hotline's own. No `message` key, so pino's error serializer passes it on as it is.
 */
export function loggableLlmError(error: unknown): Record<string, unknown> {
  if (error instanceof APIError) {
    return {
      type: error.constructor.name,
      ...(error.status !== undefined ? { status: error.status } : {}),
      detail: bodyExcerpt(error.message),
      ...(error.requestID ? { requestId: error.requestID } : {}),
    };
  }
  if (error instanceof Error) {
    const message = bodyExcerpt(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    const frames = error.stack?.indexOf('\n    at ') ?? -1;
    return {
      type: error.constructor.name,
      detail: message,
      ...(code !== undefined ? { code } : {}),
      // The stack starts with the message: keep its frames under the short one.
      ...(frames >= 0 ? { stack: `${error.name}: ${message}${error.stack!.slice(frames)}` } : {}),
    };
  }
  return { detail: bodyExcerpt(String(error)) };
}

/** The error's message cut for a log line or a stored record (a report's fields_error). */
export function shortErrorMessage(error: unknown): string {
  return bodyExcerpt(error instanceof Error ? error.message : String(error));
}

/** What to check when the endpoint says the address or the model does not exist (the usual missing /v1). */
export function llmErrorHint(error: unknown): { hint?: string } {
  if (!(error instanceof APIError) || error.status !== 404) return {};
  return { hint: 'the LLM endpoint answered 404: check OPENAI_BASE_URL (it often needs /v1 at the end) and LLM_MODEL' };
}
