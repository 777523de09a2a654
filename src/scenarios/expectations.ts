/**
 * Checks one `expect` step against the actions Hotline sent. Each check
 * resolves with undefined when it holds, or with a message that says what was
 * expected and what arrived instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { spokenText } from '../simulator/action-summary.js';
import type { ReceivedAction } from '../testing/voice-service-client.js';
import { describeAction, describeActions, quote, type ActionLog } from './action-log.js';
import type { ModelLog } from './model.js';
import { describeSpeakMatcher, describeTransferMatcher, speakMatches, transferMatches } from './matchers.js';
import type { Expectation } from './schema.js';
import { expectToolCall } from './tool-expectation.js';
import type { ToolCallLog } from './tool-stubs.js';

export interface ExpectContext {
  log: ActionLog;
  timeoutMs: number;
  /** What max_latency_ms counts from: the latest say or finish_speech, else the session_start. */
  since: { at: number; what: string };
  /** The latest say, for no_stale_speech. */
  lastSay: { at: number } | undefined;
  model: ModelLog | undefined;
  /** The scenario's tool stubs; undefined against a Hotline the runner did not start. */
  tools: ToolCallLog | undefined;
}

/** How long after the LLM went idle a stale sentence could still be on its way. */
const STALE_SETTLE_MS = 150;

export function checkExpectation(expectation: Expectation, context: ExpectContext): Promise<string | undefined> {
  if ('speak' in expectation) {
    const matcher = expectation.speak === true ? {} : expectation.speak;
    return expectAction(context, describeSpeakMatcher(matcher), (a) => a.type === 'speak' && speakMatches(a, matcher), expectation);
  }
  if ('transfer' in expectation) {
    const matcher = expectation.transfer === true ? {} : expectation.transfer;
    return expectAction(context, describeTransferMatcher(matcher), (a) => a.type === 'transfer' && transferMatches(a, matcher), expectation);
  }
  if ('hangup' in expectation) return expectAction(context, 'a hangup', (a) => a.type === 'hangup', expectation);
  if ('reply' in expectation) return expectReply(context, expectation.reply, expectation);
  if ('actions' in expectation) return expectActionTypes(context, expectation.actions, expectation);
  if ('no_stale_speech' in expectation) return expectNoStaleSpeech(context, expectation.timeout_ms);
  if ('tool' in expectation) {
    return expectToolCall(expectation.tool, { log: context.log, tools: context.tools, timeoutMs: expectation.timeout_ms ?? context.timeoutMs });
  }
  return expectNoAction(context, expectation.no_action_within_ms);
}

interface Timing {
  max_latency_ms?: number | undefined;
  timeout_ms?: number | undefined;
}

/** The next action (skipping those that do not match) that matches. */
async function expectAction(
  context: ExpectContext,
  description: string,
  predicate: (action: ReceivedAction) => boolean,
  timing: Timing,
): Promise<string | undefined> {
  const { log } = context;
  const timeoutMs = timing.timeout_ms ?? context.timeoutMs;
  const found = await log.until(() => log.unread().find(predicate), timeoutMs);
  if (!found) return `expected ${description} within ${timeoutMs} ms, got ${describeActions(log.unread())}${closedNote(log)}`;
  log.takeThrough(found);
  return latencyProblem(context, found, timing.max_latency_ms);
}

/** Consecutive speaks from the cursor on that together say exactly `equals`. */
async function expectReply(
  context: ExpectContext,
  reply: { equals: string; min_speaks?: number | undefined },
  timing: Timing,
): Promise<string | undefined> {
  const { log } = context;
  const timeoutMs = timing.timeout_ms ?? context.timeoutMs;
  const target = normalize(reply.equals);
  type Outcome = { ok: true; speaks: ReceivedAction[] } | { ok: false; problem: string };
  const outcome = await log.until((): Outcome | undefined => {
    const speaks: ReceivedAction[] = [];
    let joined = '';
    for (const action of log.unread()) {
      if (action.type !== 'speak') {
        return { ok: false, problem: `expected the reply ${quote(target)}, got ${describeActions([...speaks, action])}` };
      }
      speaks.push(action);
      const said = normalize(spokenText(action));
      joined = joined === '' ? said : `${joined} ${said}`;
      if (joined === target) return { ok: true, speaks };
      if (!target.startsWith(joined)) {
        return { ok: false, problem: `expected the reply ${quote(target)}, got ${describeActions(speaks)}` };
      }
    }
    return undefined;
  }, timeoutMs);
  if (!outcome) {
    return `expected the reply ${quote(target)} within ${timeoutMs} ms, got ${describeActions(log.unread())}${closedNote(log)}`;
  }
  if (!outcome.ok) return outcome.problem;
  const last = outcome.speaks.at(-1);
  if (last) log.takeThrough(last);
  if (reply.min_speaks !== undefined && outcome.speaks.length < reply.min_speaks) {
    return `expected the reply in at least ${reply.min_speaks} speaks, got ${outcome.speaks.length}: ${describeActions(outcome.speaks)}`;
  }
  const first = outcome.speaks[0];
  return first ? latencyProblem(context, first, timing.max_latency_ms) : undefined;
}

/** The next actions from the cursor on, consecutive, are of exactly these types. */
async function expectActionTypes(context: ExpectContext, types: readonly string[], timing: Timing): Promise<string | undefined> {
  const { log } = context;
  const timeoutMs = timing.timeout_ms ?? context.timeoutMs;
  const wanted = `the actions ${types.join(', ')}`;
  type Outcome = { ok: true; actions: ReceivedAction[] } | { ok: false; problem: string };
  const outcome = await log.until((): Outcome | undefined => {
    const unread = log.unread();
    const mismatch = unread.slice(0, types.length).findIndex((action, index) => action.type !== types[index]);
    if (mismatch >= 0) return { ok: false, problem: `expected ${wanted}, got ${describeActions(unread.slice(0, mismatch + 1))}` };
    return unread.length >= types.length ? { ok: true, actions: unread.slice(0, types.length) } : undefined;
  }, timeoutMs);
  if (!outcome) return `expected ${wanted} within ${timeoutMs} ms, got ${describeActions(log.unread())}${closedNote(log)}`;
  if (!outcome.ok) return outcome.problem;
  const last = outcome.actions.at(-1);
  if (last) log.takeThrough(last);
  const first = outcome.actions[0];
  return first ? latencyProblem(context, first, timing.max_latency_ms) : undefined;
}

/**
 * Nothing from the reply the latest say interrupted arrives after it. Which
 * reply that was, and what it would have said, only the scripted model knows.
 */
async function expectNoStaleSpeech(context: ExpectContext, timeoutMs: number | undefined): Promise<string | undefined> {
  const { model, lastSay, log } = context;
  if (!model) return 'no_stale_speech needs the scripted model: mark the scenario `requires: scripted`';
  if (!lastSay) return 'no_stale_speech needs an earlier say';
  // A stale sentence would be in flight while the interrupted request ends; give it the chance to arrive.
  await model.idle(timeoutMs ?? context.timeoutMs);
  await sleep(STALE_SETTLE_MS);
  const interrupted = model.replies.filter((reply) => reply.at < lastSay.at).at(-1);
  if (!interrupted) return undefined;
  const interruptedText = normalize(interrupted.text);
  const newer = model.replies.filter((reply) => reply.at >= lastSay.at).map((reply) => normalize(reply.text));
  const stale = log.all.filter((action) => {
    if (action.type !== 'speak' || action.receivedAt < lastSay.at) return false;
    const text = normalize(spokenText(action));
    return text !== '' && interruptedText.includes(text) && !newer.some((reply) => reply.includes(text));
  });
  if (stale.length === 0) return undefined;
  return `expected no stale speech after the barge-in, got ${stale.map((a) => quote(spokenText(a))).join(', ')}`;
}

/** No action beyond those already taken, now or within the window. */
async function expectNoAction(context: ExpectContext, windowMs: number): Promise<string | undefined> {
  const { log } = context;
  const startedAt = performance.now();
  const arrived = await log.until(() => log.unread()[0], windowMs);
  if (!arrived) return undefined;
  const after = Math.max(0, Math.round(arrived.receivedAt - startedAt));
  return `expected no action within ${windowMs} ms, got ${describeAction(arrived)} after ${after} ms`;
}

function latencyProblem(context: ExpectContext, action: ReceivedAction, maxMs: number | undefined): string | undefined {
  if (maxMs === undefined) return undefined;
  const latency = Math.round(action.receivedAt - context.since.at);
  if (latency <= maxMs) return undefined;
  return `${describeAction(action)} came ${latency} ms after ${context.since.what}, over max_latency_ms ${maxMs}`;
}

function closedNote(log: ActionLog): string {
  return log.closed ? ' (the connection closed)' : '';
}

function normalize(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
