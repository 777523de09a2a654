/**
 * Sends a turn's chat request as the openai SDK would, without the SDK's per-request machinery.
 *
 * The SDK builds every request anew: its options, URL and headers through a chain of awaits and
 * `Headers` objects, which this client's `fetch` then turns back into plain headers. That costs
 * about half a millisecond on the caller's time, every turn (measured with the network bench). The
 * URL and headers are the same for every request of a client (its key is a string, it has no
 * per-request options), so they are learned once from the SDK's own `buildRequest` — auth, its
 * identifying headers and any gateway's quirks stay the SDK's — and each turn only adds its body.
 * Failures become the SDK's own error classes, as its `create` would throw them, so retries,
 * metrics and messages tell no difference.
 */
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import type { HttpFetch } from '../net/http-fetch.js';

interface Template {
  url: string;
  headers: Record<string, string>;
}

export class ChatSender {
  private template: Template | undefined;
  private learning: Promise<Template> | undefined;

  constructor(
    private readonly client: OpenAI,
    private readonly http: HttpFetch,
  ) {
    // Learned now, so the first turn does not wait for it; a failure here is met again, and thrown, by that turn.
    this.learn().catch(() => undefined);
  }

  /** POSTs a chat completion's JSON body; resolves with a 2xx response, or rejects with the SDK's error for it. */
  async post(body: string, signal: AbortSignal): Promise<Response> {
    const template = this.template ?? (await this.learn());
    if (signal.aborted) throw new APIUserAbortError();
    let response: Response;
    try {
      response = await this.http.fetch(template.url, { method: 'POST', headers: template.headers, body, signal });
    } catch (error) {
      if (signal.aborted) throw new APIUserAbortError();
      throw new APIConnectionError({ message: undefined, cause: error instanceof Error ? error : new Error(String(error)) });
    }
    if (response.ok) return response;
    const text = await response.text().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    const json = parseJson(text);
    throw APIError.generate(response.status, json, json === undefined ? text : undefined, response.headers);
  }

  private learn(): Promise<Template> {
    this.learning ??= this.client
      .buildRequest({ method: 'post', path: '/chat/completions', body: {}, stream: true })
      .then(({ req, url }) => {
        const headers: Record<string, string> = {};
        new Headers(req.headers).forEach((value, name) => {
          // Each request's own length is its body's.
          if (name !== 'content-length') headers[name] = value;
        });
        this.template = { url, headers };
        return this.template;
      })
      .finally(() => (this.learning = undefined));
    return this.learning;
  }
}

function parseJson(text: string): object | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
