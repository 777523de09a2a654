/**
 * The voice service's side of a call, lean enough to run a thousand of them
 * in the process that is being measured: one JSON.parse per action, events
 * built from pre-serialised pieces, one timer per playing sentence.
 */
import { WebSocket } from 'ws';

/** `tts`: the speak's voice, when it names one (a language folder's system.md sets it). */
export type SpeakListener = (caller: Caller, text: string, at: number, tts: { language?: unknown } | undefined) => void;

export interface CallerOptions {
  /** Speaking time of a sentence per character, as the service's TTS would report it. */
  msPerChar: number;
  onSpeak: SpeakListener;
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

export class Caller {
  private readonly session: string;
  private readonly queue: string[] = [];
  private playing = false;
  private timer: NodeJS.Timeout | undefined;
  private drainWaiters: (() => void)[] = [];
  private greetedResolve: (() => void) | undefined;
  /** Resolves when the first untagged speak (the greeting) has arrived. */
  readonly greeted: Promise<void>;
  readonly closed: Promise<void>;

  private constructor(
    readonly id: string,
    private readonly ws: WebSocket,
    private readonly options: CallerOptions,
    private readonly isGreeting: (text: string) => boolean,
  ) {
    this.session = JSON.stringify({ id });
    this.greeted = new Promise((resolve) => (this.greetedResolve = resolve));
    this.closed = new Promise((resolve) => ws.once('close', () => resolve()));
    ws.on('message', (data: Buffer) => this.onMessage(data));
    // A socket torn down by Hotline's shutdown must not surface as an unhandled error.
    ws.on('error', () => undefined);
  }

  static connect(
    url: string,
    id: string,
    options: CallerOptions,
    isGreeting: (text: string) => boolean = () => true,
  ): Promise<Caller> {
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true });
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        ws.off('error', reject);
        resolve(new Caller(id, ws, options, isGreeting));
      });
      ws.once('error', reject);
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  start(): void {
    this.send(
      `{"type":"session_start","session":{"id":${JSON.stringify(this.id)},"direction":"inbound",` +
        `"from_phone_number":"4915112345678","to_phone_number":"4930123456"}}`,
    );
  }

  /** A user_speak; with `bargedIn` the service has stopped playback first, as the real one does. */
  say(text: string, bargedIn = false): void {
    if (bargedIn) this.stopPlayback();
    this.send(
      `{"type":"user_speak","session":${this.session},"text":${JSON.stringify(text)},"barged_in":${bargedIn}}`,
    );
  }

  /** Resolves once everything received has been played. */
  drained(): Promise<void> {
    if (!this.playing) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Ends the session and closes the socket. */
  end(): Promise<void> {
    this.stopPlayback();
    if (this.open) {
      this.send(`{"type":"session_end","session":${this.session},"reason":"hangup"}`);
      this.ws.close();
    }
    return this.closed;
  }

  stopPlayback(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.setIdle();
  }

  private onMessage(data: Buffer): void {
    const at = now();
    const action = JSON.parse(data.toString('utf8')) as { type?: unknown; text?: unknown; tts?: { language?: unknown } };
    if (action.type !== 'speak' || typeof action.text !== 'string') return;
    const text = action.text;
    if (this.greetedResolve && this.isGreeting(text)) {
      this.greetedResolve();
      this.greetedResolve = undefined;
    }
    this.options.onSpeak(this, text, at, action.tts);
    this.queue.push(text);
    if (!this.playing) this.playNext();
  }

  private playNext(): void {
    const text = this.queue.shift();
    if (text === undefined) return this.setIdle();
    this.playing = true;
    const durationMs = Math.round(text.length * this.options.msPerChar);
    this.send(
      `{"type":"assistant_speak","session":${this.session},"text":${JSON.stringify(text)},"duration_ms":${durationMs}}`,
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send(`{"type":"assistant_speech_ended","session":${this.session}}`);
      this.playNext();
    }, durationMs);
  }

  private setIdle(): void {
    this.playing = false;
    const waiters = this.drainWaiters;
    if (waiters.length === 0) return;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private send(text: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }
}

/**
 * Opens `count` calls at `perSecond`, each started and greeted, its greeting
 * played. Connections go out in small batches so a thousand handshakes never
 * land in one tick.
 */
export async function openCallers(
  url: string,
  count: number,
  perSecond: number,
  idPrefix: string,
  options: CallerOptions,
  isGreeting?: (text: string) => boolean,
): Promise<Caller[]> {
  const batchMs = 10;
  const perBatch = Math.max(1, Math.round((perSecond * batchMs) / 1000));
  const pending: Promise<Caller>[] = [];
  for (let i = 0; i < count; i += perBatch) {
    for (let j = i; j < Math.min(count, i + perBatch); j++) {
      pending.push(
        Caller.connect(url, `${idPrefix}-${j}`, options, isGreeting).then(async (caller) => {
          caller.start();
          await caller.greeted;
          await caller.drained();
          return caller;
        }),
      );
    }
    if (i + perBatch < count) await new Promise((resolve) => setTimeout(resolve, batchMs));
  }
  return Promise.all(pending);
}
