import { describeNetworkError } from '../net-errors.js';
import { FakeVoiceService, WebSocketRefusedError, type ReceivedAction } from '../testing/voice-service-client.js';

/** An event as the emulated service sends it. */
export interface ServiceEvent {
  type: string;
  session: { id: string; [field: string]: unknown };
  [field: string]: unknown;
}

export interface TransportListener {
  action(action: ReceivedAction): void;
  /** The connection is gone without the call having ended (Hotline stopped, the network failed). */
  lost(detail: string): void;
  warning(message: string): void;
}

export interface Transport {
  readonly kind: 'websocket' | 'webhook';
  /** Where it talks to, fit to print: no secrets. */
  readonly target: string;
  /** Webhook requests still waiting for their answer: one may still carry an action. Always 0 over WebSocket. */
  readonly inFlight: number;
  listen(listener: TransportListener): void;
  /** Resolves once the event is delivered (webhook: answered); rejects with ConnectionRefusedError on a refusal. */
  send(event: ServiceEvent): Promise<void>;
  close(): Promise<void>;
}

/** Hotline would not talk to us at all: wrong token or secret, wrong URL, not running. */
export class ConnectionRefusedError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ConnectionRefusedError';
  }
}

/** The URL with a token query parameter masked, for printing. */
function printable(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has('token')) parsed.searchParams.set('token', '***');
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return url;
  }
}

export async function connectWebSocket(url: string, token: string | undefined): Promise<Transport> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ConnectionRefusedError(`"${url}" is not a URL; give Hotline's WebSocket URL, e.g. ws://localhost:3000/ws`);
  }
  if (target.protocol !== 'ws:' && target.protocol !== 'wss:') {
    throw new ConnectionRefusedError(`${url} is not a ws:// or wss:// URL (for the webhook, use --webhook <url>)`);
  }
  if (token !== undefined) target.searchParams.set('token', token);
  let service: FakeVoiceService;
  try {
    service = await FakeVoiceService.connect(target.href, { playback: { kind: 'none' } });
  } catch (error) {
    throw refusal(error, printable(target.href));
  }
  return new WebSocketTransport(service, printable(target.href));
}

function refusal(error: unknown, where: string): ConnectionRefusedError {
  if (error instanceof WebSocketRefusedError) {
    const hint = error.status === 401 ? ' — check --token (or WS_TOKEN)' : error.status === 404 ? ' — check the path (/ws)' : '';
    const body = error.body ? ` ${error.body}` : '';
    return new ConnectionRefusedError(`Hotline refused the WebSocket connection to ${where}: HTTP ${error.status}${body}${hint}`, error.status);
  }
  return new ConnectionRefusedError(`could not connect to ${where}: ${describeNetworkError(error)} — is Hotline running?`);
}

class WebSocketTransport implements Transport {
  readonly kind = 'websocket';
  readonly inFlight = 0;
  private closing = false;
  private listener: TransportListener | undefined;

  constructor(
    private readonly service: FakeVoiceService,
    readonly target: string,
  ) {
    service.socket.on('error', (error: Error) => this.listener?.warning(`WebSocket error: ${error.message}`));
    void service.closed.then((code) => {
      if (!this.closing) this.listener?.lost(`Hotline closed the WebSocket (code ${code})`);
    });
  }

  listen(listener: TransportListener): void {
    this.listener = listener;
    this.service.onAction((action) => listener.action(action));
  }

  send(event: ServiceEvent): Promise<void> {
    if (this.service.socket.readyState === this.service.socket.OPEN) this.service.send(event);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.service.close();
  }
}

export function webhookTransport(url: string, secret: string | undefined): Transport {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ConnectionRefusedError(`"${url}" is not a URL; give Hotline's webhook URL, e.g. http://localhost:3000/webhook`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new ConnectionRefusedError(`${url} is not an http:// or https:// URL`);
  }
  return new WebhookTransport(target.href, secret);
}

/** Playback reports must reach Hotline in the order they happened; separate HTTP requests could overtake each other. */
const ORDERED = new Set(['assistant_speak', 'assistant_speech_ended']);

class WebhookTransport implements Transport {
  readonly kind = 'webhook';
  inFlight = 0;
  private listener: TransportListener | undefined;
  private ordered: Promise<unknown> = Promise.resolve();
  private readonly aborter = new AbortController();

  constructor(
    readonly target: string,
    private readonly secret: string | undefined,
  ) {}

  listen(listener: TransportListener): void {
    this.listener = listener;
  }

  send(event: ServiceEvent): Promise<void> {
    if (!ORDERED.has(event.type)) return this.post(event);
    const delivered = this.ordered.then(() => this.post(event));
    this.ordered = delivered.catch(() => undefined);
    return delivered;
  }

  async close(): Promise<void> {
    // Requests still waiting (a long-polled reply) have nobody left to play their answer.
    this.aborter.abort();
    await this.ordered;
  }

  private async post(event: ServiceEvent): Promise<void> {
    if (this.aborter.signal.aborted) return;
    this.inFlight++;
    try {
      let response: Response;
      let body: string;
      try {
        response = await fetch(this.target, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'hotline-simulator',
            ...(this.secret === undefined ? {} : { 'x-api-token': this.secret }),
          },
          body: JSON.stringify(event),
          signal: this.aborter.signal,
        });
        body = await response.text();
      } catch (error) {
        if (this.aborter.signal.aborted) return;
        throw new ConnectionRefusedError(
          `could not reach the webhook at ${printable(this.target)}: ${describeNetworkError(error)} — is Hotline running?`,
        );
      }
      const receivedAt = performance.now();
      if (response.status === 204) return;
      if (response.status === 200) return this.deliver(body, receivedAt, event.type);
      const hint = response.status === 401 ? ' — check --secret (or WEBHOOK_SECRET)' : '';
      throw new ConnectionRefusedError(
        `Hotline answered ${event.type} with HTTP ${response.status}${body.trim() ? ` ${body.trim()}` : ''}${hint}`,
        response.status,
      );
    } finally {
      this.inFlight--;
    }
  }

  private deliver(body: string, receivedAt: number, eventType: string): void {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      this.listener?.warning(`the answer to ${eventType} is not JSON: ${body.slice(0, 200)}`);
      return;
    }
    // The production service takes an array of actions in one answer and carries them out in order.
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.length === 0) this.listener?.warning(`the answer to ${eventType} is an empty array: no action`);
    for (const item of values) {
      if (!isRecord(item) || typeof item.type !== 'string') {
        const what = Array.isArray(value) ? `holds something that is not an action: ${JSON.stringify(item)}` : `is not an action: ${body}`;
        this.listener?.warning(`the answer to ${eventType} ${what.slice(0, 240)}`);
        continue;
      }
      const sessionId = typeof item.session_id === 'string' ? item.session_id : '';
      this.listener?.action({ ...item, type: item.type, session_id: sessionId, receivedAt });
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

