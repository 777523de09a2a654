/**
 * One eval call, played from the voice service's side over the real
 * WebSocket: the greeting, then turn by turn the caller's move (a fixed one
 * from the eval, else the caller model's), the agent's answer played to its
 * end — or cut off where the eval says to interrupt — until either side hangs
 * up or the caller runs out of turns.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallEnd, Caller } from '../simulator/caller.js';
import type { CallRecord } from '../simulator/call-record.js';
import { startCall } from '../simulator/run-call.js';
import { speakingTimeMs } from '../simulator/speech-playback.js';
import type { Eval, Interruption } from './eval-schema.js';
import { HeardTranscript } from './heard-transcript.js';
import type { CallerTurn, SimulatedCaller } from './simulated-caller.js';

const BUSINESS_NUMBER = '4930123456';

export interface PlayOptions {
  wsUrl: string;
  /** Speaking rate of the emulated voice, and how much faster than real time it plays. */
  wpm: number;
  speed: number;
  /** How long one answer may take, tools and all. */
  answerTimeoutMs: number;
}

export interface PlayedCall {
  sessionId: string;
  transcript: HeardTranscript;
  /** The caller's moves made (turns). */
  turns: number;
  end: CallEnd;
  /** From each input of the caller (the session_start for the greeting) to the first speak answering it. */
  firstSpeakMs: number[];
  /** Answers that did not end within answerTimeoutMs. */
  timeouts: number;
}

export async function playEvalCall(evaluation: Eval, brain: SimulatedCaller, options: PlayOptions, signal: AbortSignal): Promise<PlayedCall> {
  const transcript = new HeardTranscript();
  const sessionId = `eval-${evaluation.name}-${randomUUID().slice(0, 8)}`;
  const problems: string[] = [];
  const started = await startCall(
    {
      target: { kind: 'websocket', url: options.wsUrl },
      direction: 'inbound',
      from: evaluation.caller.from,
      to: BUSINESS_NUMBER,
      voice: { wpm: options.wpm, speed: options.speed, answerTimeoutMs: options.answerTimeoutMs, noWait: false, verbose: false },
      sessionId,
      heard: (text) => transcript.agentSpoke(text),
      cut: (text, words) => transcript.agentCut(text, words),
    },
    (line) => problems.push(line),
  );
  if (!started) throw new Error(`the call could not be placed: ${problems.join('; ')}`);
  const { caller, record } = started;
  const hangUp = (): void => void caller.hangUp();
  signal.addEventListener('abort', hangUp, { once: true });
  let timeouts = 0;
  const awaitAnswer = async (): Promise<void> => {
    if ((await caller.waitForAnswer(options.answerTimeoutMs)) === 'timeout') timeouts++;
  };

  let turn = 0;
  try {
    await awaitAnswer();
    while (!caller.isOver && turn < evaluation.caller.max_turns) {
      turn++;
      const move = await nextMove(evaluation, turn, brain, transcript, false, caller.overSignal);
      if (caller.isOver) break;
      if ('hang_up' in move) {
        await caller.hangUp();
        break;
      }
      await perform(caller, move, transcript);
      const interruption = evaluation.interruptions.find((i) => i.reply === turn);
      if (interruption && turn < evaluation.caller.max_turns) {
        turn = await interrupt(interruption, turn, { evaluation, brain, transcript, caller, options });
      }
      await awaitAnswer();
      if (move.thenHangUp && !caller.isOver) await caller.hangUp();
    }
    // Out of turns: the caller gives up, as a person would.
    if (!caller.isOver) await caller.hangUp();
  } finally {
    signal.removeEventListener('abort', hangUp);
    if (!caller.isOver) await caller.hangUp();
  }
  return { sessionId, transcript, turns: turn, end: await caller.ended, firstSpeakMs: firstSpeaks(record), timeouts };
}

/** Cuts the agent's answer short after the words the eval allows; returns the turn count, one more if the caller cut in. */
async function interrupt(
  interruption: Interruption,
  turn: number,
  deps: { evaluation: Eval; brain: SimulatedCaller; transcript: HeardTranscript; caller: Caller; options: PlayOptions },
): Promise<number> {
  const { evaluation, brain, transcript, caller, options } = deps;
  // An answer that never comes (a tool-only reply, a lost call) interrupts nothing.
  const spokeOrGaveUp = AbortSignal.any([caller.overSignal, AbortSignal.timeout(options.answerTimeoutMs)]);
  if (!(await transcript.nextAgentSpeech(spokeOrGaveUp))) return turn;
  // The words it lets the agent say, in the voice's (sped-up) time.
  await sleep(speakingTimeMs(Array(interruption.after_words).fill('word').join(' '), options.wpm, options.speed));
  if (!caller.speaking || caller.isOver) return turn;
  const cutIn = interruption.say !== undefined ? { say: interruption.say } : await nextMove(evaluation, turn + 1, brain, transcript, true, caller.overSignal);
  if ('say' in cutIn && !caller.isOver) {
    caller.say(cutIn.say);
    transcript.callerSaid(cutIn.say);
  }
  return turn + 1;
}

async function nextMove(
  evaluation: Eval,
  turn: number,
  brain: SimulatedCaller,
  transcript: HeardTranscript,
  interrupting: boolean,
  signal: AbortSignal,
): Promise<CallerTurn> {
  const fixed = evaluation.turns[String(turn)];
  if (fixed) return fixed;
  if (turn === 1 && evaluation.caller.opening !== undefined) return { say: evaluation.caller.opening };
  return brain.next(transcript.lines, interrupting, signal);
}

async function perform(caller: Caller, move: Exclude<CallerTurn, { hang_up: true }>, transcript: HeardTranscript): Promise<void> {
  if ('say' in move) {
    caller.say(move.say);
    transcript.callerSaid(move.say);
  } else if ('dtmf' in move) {
    transcript.callerPressed(move.dtmf);
    await caller.pressKeys(move.dtmf);
  } else {
    transcript.callerSilent();
    await caller.staySilent();
  }
}

const CALLER_INPUTS = new Set(['session_start', 'user_speak', 'dtmf_received', 'user_input_timeout']);

/** From each input of the caller to the first speak after it; an input nothing answered counts nothing. */
function firstSpeaks(record: CallRecord): number[] {
  const inputs = record.events.filter(({ event }) => CALLER_INPUTS.has(typeOf(event))).map(({ at }) => at);
  const speaks = record.actions.filter(({ action }) => typeOf(action) === 'speak').map(({ at }) => at);
  const latencies: number[] = [];
  inputs.forEach((at, index) => {
    const next = inputs[index + 1] ?? Number.POSITIVE_INFINITY;
    const speak = speaks.find((s) => s >= at && s < next);
    if (speak !== undefined) latencies.push(speak - at);
  });
  return latencies;
}

function typeOf(value: unknown): string {
  return value && typeof value === 'object' && 'type' in value && typeof value.type === 'string' ? value.type : '';
}
