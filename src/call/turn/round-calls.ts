/**
 * What one LLM request's tool calls come to once its stream has ended: speech the stream could not
 * carry, the call-ending tool, business tools to run, and errors for what the model made up. Apart
 * from the turn, which streams; this only sorts what was streamed, by the rules of the tools on offer.
 */
import type { LlmRequest } from '../../llm/llm.js';
import type { BusinessTool } from '../ports/business-tools.js';
import type { ToolCallRecord } from '../speech/reply.js';
import type { ToolCallStream } from './tool-call-assembler.js';
import type { ToolCallRequest } from './tool-loop.js';
import { HANGUP, SPEAK, TRANSFER } from './tools.js';

export type FinalAction = { name: 'transfer' | 'hangup'; record: ToolCallRecord };

export interface RoundCalls {
  finalAction?: FinalAction;
  /** Some call was answered with an error: the model is asked again, so it can carry on within the turn. */
  unknownTools: boolean;
  toolCalls: ToolCallRequest[];
}

/** What the round's calls are written into, in the order the model made them. */
export interface RoundCallsHost {
  /** A speak call whose text could not be streamed: what is left of it is said now. */
  recoverSpeech(call: ToolCallStream): void;
  /** Any other call, recorded in the reply (its result filled in here or by the tool's run). */
  record(record: ToolCallRecord): void;
}

/** Only speech, or a hangup or transfer: nothing is asked again, so what is said now ends the turn. */
export function endsTurn(calls: readonly ToolCallStream[]): boolean {
  return calls.every((c) => !c.overflow && (c.name === SPEAK || c.name === TRANSFER || c.name === HANGUP));
}

/** Sorts a finished request's tool calls; `requestTools` and `business` are what was on offer to it. */
export function sortRoundCalls(
  calls: readonly ToolCallStream[],
  requestTools: LlmRequest['tools'],
  business: readonly BusinessTool[],
  host: RoundCallsHost,
): RoundCalls {
  let finalAction: FinalAction | undefined;
  let unknownTools = false;
  const toolCalls: ToolCallRequest[] = [];
  const offered = [...requestTools.flatMap((t) => (t.type === 'function' ? [t.function.name] : [])), ...business.map((t) => t.name)];
  for (const call of calls) {
    if (call.name === SPEAK && !call.overflow) {
      host.recoverSpeech(call);
      continue;
    }
    const record: ToolCallRecord = { id: call.id, name: call.name || 'unnamed', arguments: validJson(call.args), result: '' };
    host.record(record);
    const tool = call.overflow ? undefined : business.find((t) => t.name === call.name);
    if (call.overflow) {
      record.result = 'error: the arguments were too long; nothing was done';
      unknownTools = true;
    } else if (tool) {
      toolCalls.push({ record, tool });
    } else if (call.name !== TRANSFER && call.name !== HANGUP) {
      // Answered as an error, so the model can carry on within this turn instead of the caller hearing an apology.
      record.result = `error: there is no tool named "${call.name}"; the tools are ${offered.join(', ')}`;
      unknownTools = true;
    } else if (finalAction) {
      record.result = `not done: ${finalAction.name} was already chosen in this reply`;
    } else {
      finalAction = { name: call.name, record };
    }
  }
  return finalAction ? { finalAction, unknownTools, toolCalls } : { unknownTools, toolCalls };
}

/** The history must carry valid JSON arguments, or the next request is refused. */
function validJson(args: string): string {
  if (args.trim() === '') return '{}';
  try {
    JSON.parse(args);
    return args;
  } catch {
    return '{}';
  }
}
