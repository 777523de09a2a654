import { setTimeout as sleep } from 'node:timers/promises';
import type { CallEnd } from './caller.js';
import { greetingSegments } from './person-called.js';
import { describeEnd, startCall, type CallStart } from './run-call.js';
import { speakingTimeMs } from './speech-playback.js';

export interface MailboxPlan extends CallStart {
  /** Said sentence by sentence, each as a user_speak once it has been spoken (wpm, speed). */
  greeting: string;
  /** How long the mailbox records after the beep before it hangs up by itself (not scaled by speed). */
  limitMs: number;
  /** Aborting it hangs up (the emulator closing). */
  signal?: AbortSignal;
  /** Filled as the call goes on. */
  heardInto: {
    /** Every speech of Hotline's that started playing, greeting time included. */
    hotlineSaid: string[];
    /** What started playing after the beep: the recorded message. */
    message: string[];
  };
}

export interface MailboxCall {
  /** undefined when Hotline refused the call or could not be reached. */
  sessionId: string | undefined;
  /** undefined when the call never started. */
  end: CallEnd | undefined;
  /** The mailbox hung up at its time limit. */
  timeUp: boolean;
}

/**
 * A mailbox answers the call: its greeting arrives as the service's speech
 * recogniser would send it, one user_speak per sentence, and cuts off
 * whatever Hotline says meanwhile, as any caller's words do. Then the beep,
 * which no event reports (the service has none: the words simply stop), and
 * the mailbox records Hotline's speech until Hotline hangs up or the time is up.
 */
export async function runMailbox(plan: MailboxPlan, output: (line: string) => void): Promise<MailboxCall> {
  let recording = false;
  const { hotlineSaid, message } = plan.heardInto;
  const result: MailboxCall = { sessionId: undefined, end: undefined, timeUp: false };
  const started = await startCall(
    {
      ...plan,
      heard: (text) => {
        hotlineSaid.push(text);
        if (recording) message.push(text);
      },
    },
    output,
    () => output('the mailbox answers'),
  );
  if (started === undefined) return result;
  const { caller } = started;
  result.sessionId = started.sessionId;

  const hangUp = () => void caller.hangUp();
  if (plan.signal?.aborted) hangUp();
  plan.signal?.addEventListener('abort', hangUp, { once: true });
  const { wpm, speed } = plan.voice;
  for (const segment of greetingSegments(plan.greeting)) {
    if (!(await waitUnlessOver(speakingTimeMs(segment, wpm, speed), caller.overSignal))) break;
    caller.say(segment);
    output(`mailbox: ${segment}`);
  }
  if (!caller.isOver) {
    recording = true;
    output('mailbox: beep (recording)');
    if (await waitUnlessOver(plan.limitMs, caller.overSignal)) {
      result.timeUp = true;
      output(`mailbox: ${plan.limitMs} ms recorded; the mailbox hangs up`);
      await caller.hangUp();
    }
  }
  const end = await caller.ended;
  plan.signal?.removeEventListener('abort', hangUp);
  result.end = end;
  output(message.length > 0 ? `mailbox recorded: ${JSON.stringify(message.join(' '))}` : 'mailbox recorded nothing');
  output(describeEnd(end));
  return result;
}

/** True once `ms` have passed; false as soon as the call is over. */
async function waitUnlessOver(ms: number, over: AbortSignal): Promise<boolean> {
  if (over.aborted) return false;
  try {
    await sleep(ms, undefined, { signal: over });
    return true;
  } catch {
    return false;
  }
}
