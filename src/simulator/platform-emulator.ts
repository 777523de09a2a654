import { startFakeAiFlowApi, type FakeFlow, type RecordedOutboundCall } from '../testing/fake-aiflow-api.js';
import { LineSource } from './line-source.js';
import { DEFAULT_FLOW_NUMBER, type HotlineTarget, type VoiceSettings } from './options.js';
import { runCall } from './run-call.js';

export interface PlatformEmulatorOptions {
  /** 0 for any free port. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Hotline's WebSocket URL (its webhook URL with `ring: { kind: 'webhook' }`). A function is
   * asked when a call rings, so Hotline can start after the emulator (it needs the emulator's URL).
   */
  hotlineUrl: string | (() => string);
  /** How a placed call reaches Hotline; default the WebSocket, without token. */
  ring?: { kind: 'websocket'; token?: string } | { kind: 'webhook'; secret?: string };
  /** The only access token accepted; without it any `Authorization: Bearer …` is. */
  platformToken?: string;
  /** The AI flow's number: from_phone_number of its calls. Default 4930000000. */
  flowNumber?: string;
  /** Flows that answer 400 (no phone number configured). */
  flowsWithoutNumber?: string[];
  /** Flows that answer 404 (do not exist). Every other flow exists and has a number. */
  unknownFlows?: string[];
  voice?: Partial<VoiceSettings>;
  /** The lines the person called says. */
  input: NodeJS.ReadableStream;
  output: (line: string) => void;
  /** A person at a terminal; default: whether `input` is a TTY. */
  interactive?: boolean;
}

export interface PlatformEmulator {
  /** The base URL to give Hotline as AIFLOW_API_URL. */
  url: string;
  port: number;
  /** Every request to the outbound endpoint, whatever it was answered. */
  requests: RecordedOutboundCall[];
  /**
   * The exit code, once the emulator is done: with piped input when its input has
   * ended and the calls placed so far are over; at a terminal on Ctrl-D.
   */
  done: Promise<number>;
  /** Hangs up a call in progress and stops listening. */
  close(): Promise<void>;
}

interface PlacedCall {
  aiFlowId: string;
  toPhoneNumber: string;
}

const DEFAULT_VOICE: VoiceSettings = { wpm: 180, speed: 1, answerTimeoutMs: 15_000, noWait: false, verbose: false };

/**
 * Plays the voice service's side of outbound calls: answers POST
 * /v3/ai-flows/:id/call like the service, then rings Hotline with the
 * outbound session_start and lets the terminal play the person called.
 */
export async function startPlatformEmulator(options: PlatformEmulatorOptions): Promise<PlatformEmulator> {
  const { output } = options;
  const interactive = options.interactive ?? (options.input as { isTTY?: boolean }).isTTY === true;
  const voice = { ...DEFAULT_VOICE, ...options.voice };
  const flows: Record<string, FakeFlow> = {};
  for (const id of options.flowsWithoutNumber ?? []) flows[id] = { phoneNumber: false };
  for (const id of options.unknownFlows ?? []) flows[id] = { exists: false };

  const queue: PlacedCall[] = [];
  let busy = false;
  let closed = false;
  let wake: (() => void) | undefined;
  const hangUpActive = new AbortController();

  const api = await startFakeAiFlowApi({
    port: options.port,
    host: options.host ?? '127.0.0.1',
    defaultFlow: { phoneNumber: true },
    flows,
    ...(options.platformToken === undefined ? { requireBearer: true } : { token: options.platformToken }),
    onAnswered(request) {
      const aiFlowId = request.aiFlowId ?? '';
      if (request.status !== 201) {
        output(`refused ${request.method} ${request.path}: HTTP ${request.status}${reasonOf(request)}`);
        return;
      }
      const { toPhoneNumber } = request.body as { toPhoneNumber: string };
      const waiting = busy || queue.length > 0;
      output(`call to ${toPhoneNumber} placed by flow ${aiFlowId}: ${waiting ? 'queued until the call in progress ends' : 'ringing Hotline…'}`);
      queue.push({ aiFlowId, toPhoneNumber });
      wake?.();
    },
  });

  const lines = new LineSource(options.input);
  const shownUrl = `http://${displayHost(options.host ?? '127.0.0.1')}:${api.port}`;
  output(`emulating the voice service's API at ${shownUrl} — set AIFLOW_API_URL=${shownUrl} on Hotline`);
  output(
    options.platformToken === undefined
      ? 'any access token is accepted (set --platform-token or AIFLOW_ACCESS_TOKEN to require one)'
      : 'only the configured access token is accepted',
  );

  /** The next placed call; undefined when the emulator should stop. */
  async function nextCall(): Promise<PlacedCall | undefined> {
    for (;;) {
      const queued = queue.shift();
      if (queued) return queued;
      if (closed) return undefined;
      const arrived = new Promise<'call'>((resolve) => (wake = () => resolve('call')));
      if (!interactive) {
        await arrived;
        continue;
      }
      // At a terminal, Ctrl-D between calls ends the emulator; a line typed then has nobody to hear it.
      const stopReading = new AbortController();
      const read = lines.next(stopReading.signal);
      const first = await Promise.race([arrived, read]);
      if (first === 'call') {
        stopReading.abort();
        const late = await read;
        if (late.kind === 'line') lines.putBack(late.text);
        continue;
      }
      if (first.kind === 'end') return undefined;
      if (first.kind === 'line') output('no call in progress: place one through Hotline (npm run call -- <number>); Ctrl-D quits');
    }
  }

  async function serve(): Promise<number> {
    let code = 0;
    for (;;) {
      const call = await nextCall();
      if (!call) break;
      busy = true;
      const hotlineUrl = typeof options.hotlineUrl === 'function' ? options.hotlineUrl() : options.hotlineUrl;
      const ring = options.ring ?? { kind: 'websocket' };
      const target: HotlineTarget =
        ring.kind === 'webhook'
          ? { kind: 'webhook', url: hotlineUrl, ...(ring.secret === undefined ? {} : { secret: ring.secret }) }
          : { kind: 'websocket', url: hotlineUrl, ...(ring.token === undefined ? {} : { token: ring.token }) };
      const result = await runCall(
        {
          target,
          direction: 'outbound',
          from: options.flowNumber ?? DEFAULT_FLOW_NUMBER,
          to: call.toPhoneNumber,
          voice,
          interactive,
          signal: hangUpActive.signal,
        },
        lines,
        output,
      );
      busy = false;
      code = Math.max(code, result);
      // Piped input plays one script: once its call is over and no other call waits, the emulator's work is done.
      if (closed || (!interactive && queue.length === 0)) break;
    }
    return code;
  }

  const done = serve();
  let closing: Promise<void> | undefined;
  return {
    url: api.url,
    port: api.port,
    requests: api.calls,
    done,
    close() {
      closing ??= (async () => {
        closed = true;
        hangUpActive.abort();
        wake?.();
        lines.close();
        await done;
        await api.close();
      })();
      return closing;
    },
  };
}

function reasonOf(request: RecordedOutboundCall): string {
  let message: unknown;
  try {
    // The fake answers with the service's error shape, {message}.
    message = (JSON.parse(request.responseBody) as { message?: unknown } | null)?.message;
  } catch {
    message = request.responseBody;
  }
  return typeof message === 'string' && message !== '' ? ` (${message})` : '';
}

function displayHost(host: string): string {
  if (host === '127.0.0.1' || host === '0.0.0.0' || host === '::' || host === '::1') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
