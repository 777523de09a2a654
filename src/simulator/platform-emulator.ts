import { Readable } from 'node:stream';
import { startFakeAiFlowApi, type FakeFlow, type RecordedOutboundCall } from '../testing/fake-aiflow-api.js';
import { reportBusy } from './busy-line.js';
import type { CallEnd } from './caller.js';
import { LineSource } from './line-source.js';
import { runMailbox } from './mailbox.js';
import { DEFAULT_FLOW_NUMBER, type HotlineTarget, type VoiceSettings } from './options.js';
import { answerFor, MAILBOX_GREETINGS, type PersonAnswer, type PlacedCallEnd, type PlacedCallRecord } from './person-called.js';
import { runCall } from './run-call.js';

export { MAILBOX_GREETINGS, type PersonAnswer, type PlacedCallEnd, type PlacedCallRecord } from './person-called.js';

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
  /** How the call to a number (digits, as the service writes them) is answered; others as `defaultAnswer`. */
  answers?: Record<string, PersonAnswer>;
  /** Default 'person': you, at the terminal (or the piped lines). */
  defaultAnswer?: PersonAnswer;
  /** What a mailbox says, sentence by sentence; default MAILBOX_GREETINGS.en. */
  mailboxGreeting?: string;
  /** How long a mailbox records after its beep before it hangs up by itself; default 60 s. */
  mailboxLimitMs?: number;
  /**
   * What the person called says on every call, line by line, instead of `input`. No call then
   * waits for another: they run side by side, as the service runs them, until `close()`.
   */
  personScript?: readonly string[];
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
  /** Every call placed (answered 201), in order: how it was answered, what Hotline said, how it ended. */
  calls: readonly PlacedCallRecord[];
  /**
   * The exit code, once the emulator is done: with piped input when a call the
   * person answered (and so played the input) is over and no other call waits;
   * at a terminal on Ctrl-D. Calls the person never answers (mailbox, no
   * answer, busy) leave the input for the next call. With `personScript`, once
   * closed and every call is over.
   */
  done: Promise<number>;
  /** The index-th call placed (from 0), once it has ended; rejects if the emulator closes before such a call is placed. */
  callEnded(index: number): Promise<PlacedCallRecord>;
  /** Hangs up a call in progress and stops listening. */
  close(): Promise<void>;
}

const DEFAULT_VOICE: VoiceSettings = { wpm: 180, speed: 1, answerTimeoutMs: 15_000, noWait: false, verbose: false };
const DEFAULT_MAILBOX_LIMIT_MS = 60_000;

/** What the terminal says about a call just placed, by how it will be answered. */
const PLACED: Record<PersonAnswer, string> = {
  person: 'ringing Hotline…',
  mailbox: 'the mailbox will answer; ringing Hotline…',
  no_answer: 'nobody answers; Hotline is not rung',
  busy: 'the line is busy; Hotline is not rung',
};

/**
 * Plays the voice service's side of outbound calls: answers POST
 * /v3/ai-flows/:id/call like the service, then, one call after another,
 * rings Hotline with the outbound session_start and lets the terminal play
 * the person called; or, as `answers` says for the number, their mailbox
 * answers, nobody does, or the line is busy. With a `personScript` nobody
 * waits for the terminal, so every call rings at once.
 */
export async function startPlatformEmulator(options: PlatformEmulatorOptions): Promise<PlatformEmulator> {
  const { output } = options;
  const interactive = options.interactive ?? (options.input as { isTTY?: boolean }).isTTY === true;
  const voice = { ...DEFAULT_VOICE, ...options.voice };
  const flows: Record<string, FakeFlow> = {};
  for (const id of options.flowsWithoutNumber ?? []) flows[id] = { phoneNumber: false };
  for (const id of options.unknownFlows ?? []) flows[id] = { exists: false };

  const queue: PlacedCallRecord[] = [];
  const calls: PlacedCallRecord[] = [];
  /** Calls that waited for another: what becomes of them is said when their turn comes. */
  const queued = new WeakSet<PlacedCallRecord>();
  const endWaiters: { index: number; resolve: (call: PlacedCallRecord) => void; reject: (error: Error) => void }[] = [];
  /** Tells whoever waits for this call's end; the emulator closed, also whoever waits for a call that never came. */
  const settleWaiters = (): void => {
    for (const waiter of [...endWaiters]) {
      const call = calls[waiter.index];
      if (call?.ended === undefined && !closed) continue;
      endWaiters.splice(endWaiters.indexOf(waiter), 1);
      if (call?.ended !== undefined) waiter.resolve(call);
      else waiter.reject(new Error(`the emulator closed before call ${waiter.index} ended`));
    }
  };
  const answers = options.answers ?? {};
  const script = options.personScript;
  /** Calls ringing side by side (with a script), each resolving its exit code. */
  const running = new Set<Promise<number>>();
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
      const answeredAs = answerFor(toPhoneNumber, answers, options.defaultAnswer ?? 'person');
      const waiting = script === undefined && (busy || queue.length > 0);
      output(`call to ${toPhoneNumber} placed by flow ${aiFlowId}: ${waiting ? 'queued until the call in progress ends' : PLACED[answeredAs]}`);
      const call: PlacedCallRecord = { aiFlowId, toPhoneNumber, answeredAs, sessionId: undefined, hotlineSaid: [], message: [], ended: undefined };
      calls.push(call);
      if (script !== undefined) {
        if (closed) call.ended = 'emulator_closed';
        else ringAtOnce(call, script);
        return;
      }
      if (waiting) queued.add(call);
      queue.push(call);
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
  async function nextCall(): Promise<PlacedCallRecord | undefined> {
    for (;;) {
      const next = queue.shift();
      if (next) return next;
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

  /** Plays a call with its own copy of the script and its lines tagged with the number, beside any other call. */
  function ringAtOnce(call: PlacedCallRecord, lines: readonly string[]): void {
    const said = new LineSource(Readable.from(lines.map((line) => `${line}\n`)));
    const tagged = (line: string): void => output(`[${call.toPhoneNumber}] ${line}`);
    const playing: Promise<number> = answer(call, said, tagged, false)
      .catch((error: unknown) => {
        tagged(`✗ the call failed: ${error instanceof Error ? error.message : String(error)}`);
        call.ended ??= 'lost';
        return 1;
      })
      .finally(() => {
        said.close();
        running.delete(playing);
        settleWaiters();
      });
    running.add(playing);
  }

  async function serveScripted(): Promise<number> {
    await new Promise<void>((resolve) => (wake = resolve));
    const codes = await Promise.all([...running]);
    settleWaiters();
    return Math.max(0, ...codes);
  }

  async function serve(): Promise<number> {
    if (script !== undefined) return serveScripted();
    let code = 0;
    for (;;) {
      const call = await nextCall();
      if (!call) break;
      busy = true;
      code = Math.max(code, await answer(call, lines, output, interactive));
      busy = false;
      settleWaiters();
      // Piped input plays one script: once the person has played it and no other call waits, the emulator's work is done.
      if (closed || (!interactive && call.answeredAs === 'person' && queue.length === 0)) break;
    }
    // Calls still waiting when the emulator closed never rang.
    for (const call of calls) call.ended ??= 'emulator_closed';
    settleWaiters();
    return code;
  }

  /** Plays one placed call to its end, as the person called answers it with `said`; returns its exit code. */
  async function answer(call: PlacedCallRecord, said: LineSource, output: (line: string) => void, interactive: boolean): Promise<number> {
    const hotlineUrl = typeof options.hotlineUrl === 'function' ? options.hotlineUrl() : options.hotlineUrl;
    const ring = options.ring ?? { kind: 'websocket' };
    const target: HotlineTarget =
      ring.kind === 'webhook'
        ? { kind: 'webhook', url: hotlineUrl, ...(ring.secret === undefined ? {} : { secret: ring.secret }) }
        : { kind: 'websocket', url: hotlineUrl, ...(ring.token === undefined ? {} : { token: ring.token }) };
    const from = options.flowNumber ?? DEFAULT_FLOW_NUMBER;
    const to = call.toPhoneNumber;
    switch (call.answeredAs) {
      case 'no_answer':
        // Not even a session_end: Hotline never had a session, and the service's API has no status to ask.
        call.ended = 'no_answer';
        if (queued.has(call)) output(`call to ${to}: ${PLACED.no_answer}`);
        return 0;
      case 'busy':
        if (queued.has(call)) output(`call to ${to}: ${PLACED.busy}`);
        call.sessionId = await reportBusy({ target, from, to }, output);
        call.ended = 'busy';
        return 0;
      case 'mailbox': {
        const mailbox = await runMailbox(
          {
            target,
            direction: 'outbound',
            from,
            to,
            voice,
            greeting: options.mailboxGreeting ?? MAILBOX_GREETINGS.en,
            limitMs: options.mailboxLimitMs ?? DEFAULT_MAILBOX_LIMIT_MS,
            signal: hangUpActive.signal,
            heardInto: call,
          },
          output,
        );
        call.sessionId = mailbox.sessionId;
        call.ended = mailbox.end === undefined ? 'refused' : mailbox.timeUp ? 'mailbox_time_up' : endOf(mailbox.end, closed);
        return mailbox.end === undefined || mailbox.end.reason === 'lost' ? 1 : 0;
      }
      case 'person': {
        let end: CallEnd | undefined;
        const code = await runCall(
          {
            target,
            direction: 'outbound',
            from,
            to,
            voice,
            interactive,
            signal: hangUpActive.signal,
            heard: (text) => call.hotlineSaid.push(text),
            ended: (callEnd) => (end = callEnd),
          },
          said,
          output,
        );
        call.ended = end === undefined ? 'refused' : endOf(end, closed);
        return code;
      }
    }
  }

  const done = serve();
  let closing: Promise<void> | undefined;
  return {
    url: api.url,
    port: api.port,
    requests: api.calls,
    calls,
    done,
    callEnded(index) {
      const call = calls[index];
      if (call?.ended !== undefined) return Promise.resolve(call);
      if (closed) return Promise.reject(new Error(`the emulator closed before call ${index} ended`));
      return new Promise((resolve, reject) => endWaiters.push({ index, resolve, reject }));
    },
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

/** A call's end as the emulator records it; `closed` tells the emulator closing from the person hanging up. */
function endOf(end: CallEnd, closed: boolean): PlacedCallEnd {
  switch (end.reason) {
    case 'hangup':
      return 'hotline_hung_up';
    case 'transferred':
      return 'transferred';
    case 'caller_hangup':
      return closed ? 'emulator_closed' : 'person_hung_up';
    case 'lost':
      return 'lost';
  }
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
