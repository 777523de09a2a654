import { randomUUID } from 'node:crypto';
import { CallRecord } from './call-record.js';
import { Caller, type CallEnd } from './caller.js';
import { converse } from './conversation.js';
import type { LineSource } from './line-source.js';
import type { HotlineTarget, VoiceSettings } from './options.js';
import { formatWarning } from './output.js';
import { ConnectionRefusedError, connectWebSocket, webhookTransport, type Transport } from './transports.js';

/** What a call needs to start: where Hotline is, and who calls whom. */
export interface CallStart {
  target: HotlineTarget;
  direction: 'inbound' | 'outbound';
  /** from_phone_number: who calls. */
  from: string;
  /** to_phone_number: who is called. */
  to: string;
  voice: VoiceSettings;
  sessionId?: string;
  /** Told the words of each of Hotline's speeches as it starts playing. */
  heard?: (text: string) => void;
  /** Told when the caller cuts one off: its words, and how many had been heard. */
  cut?: (text: string, wordsHeard: number) => void;
}

export interface CallPlan extends CallStart {
  /** A person at a terminal rather than piped input. */
  interactive: boolean;
  jsonFile?: string;
  /** Aborting it hangs up (Ctrl-C, the emulator closing). */
  signal?: AbortSignal;
  /** Told how the call ended, before the exit code is returned. */
  ended?: (end: CallEnd) => void;
}

export interface StartedCall {
  caller: Caller;
  record: CallRecord;
  sessionId: string;
}

/** One whole call: connect, session_start, the conversation, session_end. Returns the exit code. */
export async function runCall(plan: CallPlan, lines: LineSource, output: (line: string) => void): Promise<number> {
  const started = await startCall(plan, output, () => {
    if (!plan.interactive) return;
    output(
      'type what the caller says and press Enter; /dtmf 4711# presses keys, /silence stays silent, ' +
        '/bargein interrupts; /hangup or Ctrl-D ends the call',
    );
  });
  if (started === undefined) return 1;
  const { caller, record } = started;

  const hangUp = () => void caller.hangUp();
  if (plan.signal?.aborted) hangUp();
  plan.signal?.addEventListener('abort', hangUp, { once: true });
  const end = await converse(caller, lines, {
    interactive: plan.interactive,
    waitForAnswers: !plan.interactive && !plan.voice.noWait,
    answerTimeoutMs: plan.voice.answerTimeoutMs,
    output,
  });
  plan.signal?.removeEventListener('abort', hangUp);
  output(describeEnd(end));
  plan.ended?.(end);

  let code = end.reason === 'lost' ? 1 : 0;
  if (plan.jsonFile !== undefined) {
    try {
      await record.save(plan.jsonFile);
      output(`call written to ${plan.jsonFile}`);
    } catch (error) {
      output(formatWarning(`could not write ${plan.jsonFile}: ${error instanceof Error ? error.message : String(error)}`));
      code = 1;
    }
  }
  return code;
}

/**
 * Connects and sends session_start; undefined, once the reason is shown,
 * when Hotline refused the call or could not be reached. `announced` runs
 * after the line that says which call this is, before session_start.
 */
export async function startCall(plan: CallStart, output: (line: string) => void, announced?: () => void): Promise<StartedCall | undefined> {
  let transport: Transport;
  try {
    transport = await openTransport(plan.target);
  } catch (error) {
    refused(error, output);
    return undefined;
  }
  const sessionId = plan.sessionId ?? randomUUID();
  const record = new CallRecord(sessionId, transport.kind);
  const { wpm, speed, verbose, smsFails } = plan.voice;
  const caller = new Caller(transport, { sessionId, wpm, speed, output, record, verbose, heard: plan.heard, cut: plan.cut, smsFails });

  output(`calling Hotline at ${transport.target} (${transport.kind}): ${plan.direction} call ${plan.from} → ${plan.to}, session ${sessionId}`);
  announced?.();
  try {
    await caller.start({
      account_id: 'simulator',
      // The AI flow's own number: the one called inbound, the caller ID outbound.
      phone_number: plan.direction === 'inbound' ? plan.to : plan.from,
      direction: plan.direction,
      from_phone_number: plan.from,
      to_phone_number: plan.to,
    });
  } catch (error) {
    await transport.close().catch(() => undefined);
    refused(error, output);
    return undefined;
  }
  return { caller, record, sessionId };
}

export function openTransport(target: HotlineTarget): Promise<Transport> {
  if (target.kind === 'webhook') return Promise.resolve(webhookTransport(target.url, target.secret));
  return connectWebSocket(target.url, target.token);
}

function refused(error: unknown, output: (line: string) => void): number {
  if (!(error instanceof ConnectionRefusedError)) throw error;
  output(`✗ ${error.message}`);
  return 1;
}

export function describeEnd(end: CallEnd): string {
  switch (end.reason) {
    case 'hangup':
      return 'call ended: Hotline hung up';
    case 'transferred':
      return 'call ended: Hotline transferred the call';
    case 'caller_hangup':
      return 'call ended: the caller hung up';
    case 'lost':
      return `✗ call lost: ${end.detail}`;
  }
}
