/**
 * `expect: { tool: … }`: a stubbed tool was called — with these arguments,
 * this often so far — and the caller heard (or did not hear) something while
 * it ran. Resolves with undefined when that holds, else with what was
 * expected and what happened instead.
 */
import { spokenText } from '../simulator/action-summary.js';
import { describeActions, quote, type ActionLog } from './action-log.js';
import { describeText, textMatches } from './matchers.js';
import type { ToolCallMatcher } from './schema.js';
import type { StubCall, ToolCallLog } from './tool-stubs.js';

export interface ToolExpectContext {
  log: ActionLog;
  /** Undefined when the scenario plays against a Hotline the runner did not start. */
  tools: ToolCallLog | undefined;
  timeoutMs: number;
}

export async function expectToolCall(matcher: ToolCallMatcher, context: ToolExpectContext): Promise<string | undefined> {
  const { tools } = context;
  if (!tools) return `expect tool needs the scenario's tools: stubs, and only a Hotline the scenario runner starts has them`;
  const matching = (): StubCall[] => tools.calls.filter((call) => call.name === matcher.name && argumentsMatch(call.arguments, matcher.arguments));
  const wanted = describeWanted(matcher);
  const others = (): string => describeCalls(tools.calls.filter((call) => call.name === matcher.name));

  if (matcher.times === 0) {
    const calls = matching();
    return calls.length === 0 ? undefined : `expected ${wanted}, got ${describeCalls(calls)}`;
  }
  const enough = matcher.times ?? 1;
  const listening = matcher.heard_while_running !== undefined;
  // Enough calls — and, to say what was heard while one ran, that run over.
  const calls = await tools.until(() => {
    const found = matching();
    if (found.length > enough) return found;
    if (found.length < enough) return undefined;
    return listening && found.at(-1)?.endedAt === undefined ? undefined : found;
  }, context.timeoutMs);
  if (!calls) {
    const found = matching();
    const last = found.at(-1);
    if (found.length >= enough && last) return `expected ${wanted}, but ${describeCall(last)} was still running after ${context.timeoutMs} ms`;
    return `expected ${wanted} within ${context.timeoutMs} ms, got ${others()}`;
  }
  if (calls.length > enough) return `expected ${wanted}, got ${calls.length}: ${describeCalls(calls)}`;
  const call = calls.at(-1);
  if (!listening || call?.endedAt === undefined) return undefined;
  return heardProblem(call, matcher.heard_while_running, context.log);
}

function heardProblem(call: StubCall, wanted: ToolCallMatcher['heard_while_running'], log: ActionLog): string | undefined {
  const endedAt = call.endedAt ?? Number.POSITIVE_INFINITY;
  const heard = log.all.filter((a) => a.type === 'speak' && a.receivedAt >= call.startedAt && a.receivedAt <= endedAt);
  const ran = `while ${call.name} ran (${Math.round(endedAt - call.startedAt)} ms)`;
  if (wanted === false) return heard.length === 0 ? undefined : `expected to hear nothing ${ran}, heard ${describeActions(heard)}`;
  if (wanted === true || wanted === undefined) return heard.length > 0 ? undefined : `expected to hear a speak ${ran}, heard nothing`;
  if (heard.some((a) => textMatches(spokenText(a), wanted))) return undefined;
  const parts = describeText(wanted);
  return `expected to hear a speak${parts.length > 0 ? ` ${parts.join(', ')}` : ''} ${ran}, heard ${describeActions(heard)}`;
}

/** `a call of order_status with arguments {"order_number":"4711"}`, `2 calls of …` */
function describeWanted(matcher: ToolCallMatcher): string {
  const { times } = matcher;
  const count = times === undefined ? 'a call' : times === 0 ? 'no call' : times === 1 ? 'exactly 1 call' : `exactly ${times} calls`;
  const args = matcher.arguments === undefined ? '' : ` with arguments ${JSON.stringify(matcher.arguments)}`;
  return `${count} of ${matcher.name}${args}`;
}

function describeCall(call: StubCall): string {
  const args = typeof call.arguments === 'string' ? quote(call.arguments) : JSON.stringify(call.arguments);
  return `${call.name} ${args}`;
}

function describeCalls(calls: readonly StubCall[]): string {
  return calls.length === 0 ? 'no call' : calls.map(describeCall).join(', ');
}

/**
 * The model's arguments hold every field the scenario names, compared as
 * JSON values (4711 is not "4711"): mappings in part, lists whole.
 */
/** Only the fields given are compared; nested mappings in part too, lists whole. */
export function argumentsMatch(actual: unknown, wanted: Record<string, unknown> | undefined): boolean {
  return wanted === undefined || containsValue(actual, wanted);
}

function containsValue(actual: unknown, wanted: unknown): boolean {
  if (isRecord(wanted)) {
    return isRecord(actual) && Object.entries(wanted).every(([key, value]) => Object.hasOwn(actual, key) && containsValue(actual[key], value));
  }
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((value, i) => sameValue(actual[i], value));
  }
  return actual === wanted;
}

function sameValue(actual: unknown, wanted: unknown): boolean {
  if (isRecord(wanted)) return isRecord(actual) && Object.keys(actual).length === Object.keys(wanted).length && containsValue(actual, wanted);
  return containsValue(actual, wanted);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
