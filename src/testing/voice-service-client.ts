import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';

/** An action as received, with the time it arrived. */
export interface ReceivedAction {
  type: string;
  session_id: string;
  text?: string;
  target?: string;
  receivedAt: number;
  [field: string]: unknown;
}

export type PlaybackMode =
  /** Like the service: assistant_speak, then assistant_speech_ended after a speaking time. */
  | { kind: 'auto'; msPerChar?: number }
  /** The test ends each speech itself with finishSpeech(). */
  | { kind: 'manual' }
  /** Like a TTS voice that reports nothing. */
  | { kind: 'none' };

/** The server answered the WebSocket upgrade with an HTTP status instead of switching protocols (e.g. 401). */
export class WebSocketRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`Unexpected server response: ${status}${body ? ` ${body}` : ''}`);
    this.name = 'WebSocketRefusedError';
  }
}

type Waiter = { predicate: (a: ReceivedAction) => boolean; resolve: (a: ReceivedAction) => void; from: number };

/**
 * Plays the voice service over a real WebSocket: sends events, records the
 * actions Hotline sends, and plays speech the way the service reports it.
 */
export class FakeVoiceService {
  readonly actions: ReceivedAction[] = [];
  readonly sessionId: string;
  private waiters: Waiter[] = [];
  private readonly listeners = new Set<(action: ReceivedAction) => void>();
  private cursor = 0;
  private readonly queue: ReceivedAction[] = [];
  private playing: ReceivedAction | undefined;
  private playTimer: NodeJS.Timeout | undefined;
  readonly closed: Promise<number>;

  private constructor(
    private readonly ws: WebSocket,
    private readonly playback: PlaybackMode,
    sessionId: string,
  ) {
    this.sessionId = sessionId;
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
    ws.on('message', (data) => this.onMessage(String(data)));
  }

  static async connect(
    url: string,
    options: { playback?: PlaybackMode; sessionId?: string } = {},
  ): Promise<FakeVoiceService> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      // Without this listener ws reports only the status; the body says why (e.g. which token is missing).
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          reject(new WebSocketRefusedError(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8').trim()));
          ws.off('error', reject);
          ws.on('error', () => undefined);
          ws.terminate();
        });
      });
    });
    return new FakeVoiceService(ws, options.playback ?? { kind: 'auto', msPerChar: 2 }, options.sessionId ?? randomUUID());
  }

  get socket(): WebSocket {
    return this.ws;
  }

  send(event: unknown): void {
    this.ws.send(typeof event === 'string' ? event : JSON.stringify(event));
  }

  start(session: Record<string, unknown> = {}): void {
    this.send({
      type: 'session_start',
      session: {
        id: this.sessionId,
        account_id: 'acc-1',
        phone_number: '4930123456',
        direction: 'inbound',
        from_phone_number: '4915112345678',
        to_phone_number: '4930123456',
        ...session,
      },
    });
  }

  say(text: string, options: { bargedIn?: boolean } = {}): void {
    // A barge-in stops playback on the service's side.
    if (options.bargedIn) this.stopPlayback();
    this.send({ type: 'user_speak', session: { id: this.sessionId }, text, barged_in: options.bargedIn ?? false });
  }

  /** The caller types on the keypad: one dtmf_received per key, as the service sends them. */
  dtmf(keys: string): void {
    for (const digit of keys) this.send({ type: 'dtmf_received', session: { id: this.sessionId }, digit });
  }

  /** The caller said nothing for the user_input_timeout_seconds a speak asked for. */
  inputTimeout(): void {
    this.send({ type: 'user_input_timeout', session: { id: this.sessionId } });
  }

  /** The older interruption event: playback stops; with text, those are the caller's words. */
  bargeIn(text?: string): void {
    this.stopPlayback();
    this.send({ type: 'user_barge_in', session: { id: this.sessionId }, ...(text === undefined ? {} : { text }) });
  }

  end(reason = 'hangup'): void {
    this.stopPlayback();
    this.send({ type: 'session_end', session: { id: this.sessionId }, reason });
  }

  /** Resolves with the next action (after those already taken) that matches. */
  next(predicate: (a: ReceivedAction) => boolean = () => true): Promise<ReceivedAction> {
    for (let i = this.cursor; i < this.actions.length; i++) {
      const action = this.actions[i]!;
      if (predicate(action)) {
        this.cursor = i + 1;
        return Promise.resolve(action);
      }
    }
    return new Promise((resolve) => {
      this.waiters.push({ predicate, resolve, from: this.cursor });
    });
  }

  /** Calls the listener with every action from now on, as it arrives; returns the unsubscribe function. */
  onAction(listener: (action: ReceivedAction) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  nextOfType(type: string): Promise<ReceivedAction> {
    return this.next((a) => a.type === type);
  }

  /** Manual playback: the speech playing now ends (assistant_speech_ended). */
  finishSpeech(): void {
    const current = this.playing;
    if (!current) throw new Error('nothing is playing');
    // Ended by hand under automatic playback: its timer must not end it a second time.
    clearTimeout(this.playTimer);
    this.playing = undefined;
    this.send({ type: 'assistant_speech_ended', session: { id: this.sessionId } });
    this.playNext();
  }

  get isPlaying(): boolean {
    return this.playing !== undefined;
  }

  /** Resolves once nothing is playing or queued (at once if nothing is). */
  whenQuiet(): Promise<void> {
    if (!this.playing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.quietWaiters.push(resolve));
  }

  private quietWaiters: (() => void)[] = [];

  private notifyQuiet(): void {
    if (this.playing || this.queue.length > 0) return;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const resolve of waiters) resolve();
  }

  close(): Promise<number> {
    this.stopPlayback();
    this.ws.close();
    return this.closed;
  }

  /** Frames received that held several actions (the production service's arrays). */
  readonly arrays: ReceivedAction[][] = [];

  private onMessage(raw: string): void {
    const parsed = parseActions(raw);
    const received = parsed.map((action) => this.receive(action));
    if (received.length > 1) this.arrays.push(received);
  }

  private receive(parsed: { type: string; session_id: string; [field: string]: unknown }): ReceivedAction {
    const action: ReceivedAction = { ...parsed, receivedAt: performance.now() };
    this.actions.push(action);
    const index = this.actions.length - 1;
    const waiter = this.waiters.find((w) => w.from <= index && w.predicate(action));
    if (waiter) {
      this.waiters = this.waiters.filter((w) => w !== waiter);
      this.cursor = index + 1;
      waiter.resolve(action);
    }
    for (const listener of this.listeners) listener(action);
    // Hotline stops its own playback with the barge_in action.
    if (action.type === 'barge_in') this.stopPlayback();
    if ((action.type === 'speak' || action.type === 'audio') && this.playback.kind !== 'none') {
      this.queue.push(action);
      if (!this.playing) this.playNext();
    }
    return action;
  }

  private playNext(): void {
    const action = this.queue.shift();
    if (!action) return this.notifyQuiet();
    this.playing = action;
    const said = action.text ?? (typeof action.ssml === 'string' ? action.ssml.replace(/<[^>]*>/g, '') : '');
    // A clip lasts as long as its samples: 32,000 bytes a second at 16 kHz, 16 bits, mono.
    const clipMs = typeof action.audio === 'string' ? Math.round((action.audio.length * 3) / 4 / 32) : 0;
    const durationMs = action.type === 'audio' ? clipMs : said.length * (this.playback.kind === 'auto' ? (this.playback.msPerChar ?? 2) : 60);
    this.send({
      type: 'assistant_speak',
      session: { id: this.sessionId },
      ...(action.type === 'speak' ? { text: said } : {}),
      duration_ms: durationMs,
      speech_started_at: Date.now(),
    });
    if (this.playback.kind === 'auto') {
      this.playTimer = setTimeout(() => {
        if (this.ws.readyState !== WebSocket.OPEN) return;
        this.finishSpeech();
      }, durationMs);
    }
  }

  private stopPlayback(): void {
    clearTimeout(this.playTimer);
    this.queue.length = 0;
    this.playing = undefined;
    this.notifyQuiet();
  }
}

/** The actions of one frame: one, or an array of them. A frame that is not an action is Hotline's bug to show, not a reason to crash the client. */
function parseActions(raw: string): { type: string; session_id: string; [field: string]: unknown }[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return [];
  }
  const values: unknown[] = Array.isArray(value) ? value : [value];
  return values.flatMap((v) => {
    const action = parseAction(v);
    return action ? [action] : [];
  });
}

function parseAction(value: unknown): { type: string; session_id: string; [field: string]: unknown } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { type, session_id: sessionId } = value as Record<string, unknown>;
  if (typeof type !== 'string') return undefined;
  return { ...(value as Record<string, unknown>), type, session_id: typeof sessionId === 'string' ? sessionId : '' };
}
