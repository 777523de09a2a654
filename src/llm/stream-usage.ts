/**
 * Whether a streamed request asks for its token usage (`stream_options:
 * {include_usage: true}`). OpenAI, Azure and most servers send the counts
 * only when asked; Mistral refuses the field (422, "Extra inputs are not
 * permitted") and sends them anyway, and other servers may refuse it too —
 * Azure's "on your data", older self-hosted ones. A refusal must never cost
 * a call its turns, so `auto` learns it: a request refused with 400 or 422
 * before any request with the field has succeeded is sent again at once
 * without it, and if that one succeeds the field is never sent again.
 */
import { APIError } from 'openai';

/** `auto`: ask, unless the server is known or found to refuse it. `true`: always ask. `false`: never ask. */
export const STREAM_USAGE_MODES = ['auto', 'true', 'false'] as const;
export type StreamUsageMode = (typeof STREAM_USAGE_MODES)[number];

/** Hosts that refuse the field and send usage unasked. */
const REFUSING_HOSTS = new Set(['api.mistral.ai']);

type State = 'unknown' | 'works' | 'trying-without' | 'refused';

export class StreamUsage {
  private state: State;

  constructor(
    private readonly mode: StreamUsageMode,
    baseURL: string | undefined,
    /** Told once, when a server turns out to refuse the field. */
    private readonly onRefused: () => void = () => {},
  ) {
    const host = baseURL && URL.canParse(baseURL) ? new URL(baseURL).hostname : '';
    this.state = mode === 'auto' && REFUSING_HOSTS.has(host) ? 'refused' : 'unknown';
  }

  /** Whether the next request asks for its usage. */
  get asking(): boolean {
    if (this.mode !== 'auto') return this.mode === 'true';
    return this.state === 'unknown' || this.state === 'works';
  }

  /** A request succeeded, `asked` for its usage or not. */
  succeeded(asked: boolean): void {
    if (asked && this.state === 'unknown') this.state = 'works';
    else if (!asked && this.state === 'trying-without') {
      this.state = 'refused';
      this.onRefused();
    }
  }

  /** A request failed: true when it is worth sending again, at once, without the field. */
  failed(asked: boolean, error: unknown): boolean {
    if (this.mode !== 'auto') return false;
    if (!asked) {
      // The same failure without the field: the field was not what the server refused.
      if (this.state === 'trying-without') this.state = 'unknown';
      return false;
    }
    if (this.state !== 'unknown' || !(error instanceof APIError) || (error.status !== 400 && error.status !== 422)) return false;
    this.state = 'trying-without';
    return true;
  }
}
