/**
 * Runs one scenario: rings a Hotline, plays the steps over the fake voice
 * service, and reports the first step that failed.
 *
 *   runScenario(scenario, options)          starts its own Hotline (and scripted LLM), runs, stops
 *   playScenario(scenario, target, model)   against a Hotline that is already running
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeVoiceService, ReceivedAction } from '../testing/voice-service-client.js';
import { ActionLog, describeActions } from './action-log.js';
import { checkExpectation, type ExpectContext } from './expectations.js';
import { languageProblem } from './language-check.js';
import type { ModelLog } from './model.js';
import type { ToolCallLog } from './tool-stubs.js';
import { ring, type RungCall } from './ring.js';
import type { CallSpec, Scenario, Step } from './schema.js';
import { startScenarioStack, type CallTarget, type ScenarioStack, type StackOptions } from './stack.js';

export const DEFAULT_STEP_TIMEOUT_MS = 5000;

export interface RunOptions extends StackOptions {
  /** Wait of a step that sets none itself (the scenario's timeout_ms wins). */
  stepTimeoutMs?: number;
}

export interface ScenarioResult {
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  /** From ringing to the end of the last step played. */
  durationMs: number;
  /** Why it failed (`step 4: expected …`) or was skipped. */
  message?: string;
  /** 1-based number of the step that failed. */
  failedStep?: number;
  /** Everything Hotline sent, for a closer look at a failure. */
  actions: ReceivedAction[];
  /** The call's session, once it was placed. */
  sessionId?: string;
}

export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<ScenarioResult> {
  if (options.live && scenario.requires === 'scripted') {
    return { name: scenario.name, status: 'skipped', durationMs: 0, message: 'requires: scripted', actions: [] };
  }
  let stack: ScenarioStack;
  try {
    stack = await startScenarioStack(scenario, options);
  } catch (error) {
    return failed(scenario, 0, `could not start Hotline: ${messageOf(error)}`);
  }
  try {
    const result = await playScenario(scenario, stack.target, stack.model, { ...options, tools: stack.tools });
    if (result.status !== 'passed' || scenario.language === undefined || result.sessionId === undefined) return result;
    // The call has ended (its connection is closed): its record says the language it ended in.
    const timeoutMs = scenario.timeout_ms ?? options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
    const record = await stack.callRecord(result.sessionId, timeoutMs);
    const problem = record
      ? languageProblem(record.language, scenario.language)
      : `Hotline kept no record of the call within ${timeoutMs} ms after its steps, so its language could not be checked`;
    return problem === undefined ? result : { ...result, status: 'failed', message: `language: ${problem}` };
  } finally {
    await stack.close();
  }
}

interface PlayState {
  log: ActionLog;
  since: ExpectContext['since'];
  lastSay: ExpectContext['lastSay'];
}

export async function playScenario(
  scenario: Scenario,
  target: CallTarget,
  model: ModelLog | undefined,
  options: { stepTimeoutMs?: number; tools?: ToolCallLog } = {},
): Promise<ScenarioResult> {
  const timeoutMs = scenario.timeout_ms ?? options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  const startedAt = performance.now();
  let call: RungCall;
  try {
    call = await ring(target, scenario.call, scenario.name, scenario.language);
  } catch (error) {
    return failed(scenario, performance.now() - startedAt, `could not place the call: ${messageOf(error)}`);
  }
  const { service, session } = call;
  const state: PlayState = { log: new ActionLog(service), since: { at: performance.now(), what: 'the session_start' }, lastSay: undefined };
  try {
    for (const [index, step] of scenario.steps.entries()) {
      let problem: string | undefined;
      try {
        problem = await playStep(step, state, { service, session, model, tools: options.tools, timeoutMs, playback: scenario.call.playback });
      } catch (error) {
        problem = messageOf(error);
      }
      if (problem !== undefined) {
        return {
          ...failed(scenario, performance.now() - startedAt, `step ${index + 1}: ${problem}`),
          failedStep: index + 1,
          actions: [...service.actions],
          sessionId: service.sessionId,
        };
      }
    }
    return { name: scenario.name, status: 'passed', durationMs: performance.now() - startedAt, actions: [...service.actions], sessionId: service.sessionId };
  } finally {
    await service.close();
  }
}

interface StepDeps {
  service: FakeVoiceService;
  session: Record<string, string>;
  model: ModelLog | undefined;
  tools: ToolCallLog | undefined;
  timeoutMs: number;
  playback: CallSpec['playback'];
}

async function playStep(step: Step, state: PlayState, deps: StepDeps): Promise<string | undefined> {
  const { service, timeoutMs } = deps;
  if ('say' in step) {
    const problem = await waitBeforeInterrupting(step, state, deps, `to say ${JSON.stringify(step.say)} after`);
    if (problem) return problem;
    interrupted(state, 'the say');
    service.say(step.say, { bargedIn: step.barge_in ?? false });
    return undefined;
  }
  if ('barge_in' in step) {
    const words = step.barge_in === true ? undefined : step.barge_in;
    const problem = await waitBeforeInterrupting(step, state, deps, 'to barge in on');
    if (problem) return problem;
    interrupted(state, 'the barge_in');
    service.bargeIn(words);
    return undefined;
  }
  if ('dtmf' in step) {
    state.since = { at: performance.now(), what: 'the dtmf' };
    service.dtmf(step.dtmf);
    return undefined;
  }
  if ('silence' in step) {
    // The service reports silence only once the playback has ended.
    if (deps.playback === 'manual' && service.isPlaying) {
      return 'silence: a speech is still playing (the service reports silence only after the playback): add finish_speech first';
    }
    let timer: NodeJS.Timeout | undefined;
    const quiet = await Promise.race([
      service.whenQuiet().then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!quiet) return `silence: the playback did not end within ${timeoutMs} ms`;
    state.since = { at: performance.now(), what: 'the silence' };
    service.inputTimeout();
    return undefined;
  }
  if ('expect' in step) {
    return checkExpectation(step.expect, {
      log: state.log,
      timeoutMs,
      since: state.since,
      lastSay: state.lastSay,
      model: deps.model,
      tools: deps.tools,
    });
  }
  if ('send' in step) {
    service.send(withSession(step.send, service.sessionId));
    return undefined;
  }
  if ('end' in step) {
    service.end(step.end === true ? 'hangup' : step.end);
    return undefined;
  }
  if ('start' in step) {
    service.start(deps.session);
    return undefined;
  }
  if ('finish_speech' in step) {
    // Playback starts when a speak arrives; wait for one if none is playing yet.
    const playing = await state.log.until(() => (service.isPlaying ? true : undefined), timeoutMs);
    if (!playing) return `finish_speech: nothing was playing within ${timeoutMs} ms`;
    service.finishSpeech();
    // What follows (a held-back hangup or transfer) answers this event, not the say before it.
    state.since = { at: performance.now(), what: 'the finish_speech' };
    return undefined;
  }
  await sleep(step.wait_ms);
  return undefined;
}

/**
 * A say or barge_in with `wait_for: speak` waits for a speak (and takes it); with
 * `wait_for: request`, until the model has been asked for a reply since the last
 * say, so that the words reach a model that is thinking however slow the machine.
 * `after_ms` then waits on.
 */
async function waitBeforeInterrupting(
  step: { wait_for?: 'speak' | 'request' | undefined; after_ms?: number | undefined },
  state: PlayState,
  deps: StepDeps,
  purpose: string,
): Promise<string | undefined> {
  const { timeoutMs } = deps;
  if (step.wait_for === 'speak') {
    const speak = await state.log.until(() => state.log.unread().find((a) => a.type === 'speak'), timeoutMs);
    if (!speak) return `expected a speak ${purpose} within ${timeoutMs} ms, got ${describeActions(state.log.unread())}`;
    state.log.takeThrough(speak);
  }
  if (step.wait_for === 'request') {
    if (!deps.model) return 'wait_for: request needs the scripted model: mark the scenario `requires: scripted`';
    const asked = await deps.model.askedSince(state.lastSay?.at ?? 0, timeoutMs);
    if (!asked) return `wait_for: request: the model was not asked for a reply within ${timeoutMs} ms`;
  }
  if (step.after_ms) await sleep(step.after_ms);
  return undefined;
}

/** What the caller just did may interrupt a reply: latencies count from now, and no_stale_speech looks from here. */
function interrupted(state: PlayState, what: string): void {
  const at = performance.now();
  state.since = { at, what };
  state.lastSay = { at };
}

/** Fills "{session}" with the session id, in a raw frame or in every string of an event. */
function withSession(value: unknown, sessionId: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{session}', sessionId);
  if (Array.isArray(value)) return value.map((item) => withSession(item, sessionId));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withSession(item, sessionId)]));
  }
  return value;
}

function failed(scenario: Scenario, durationMs: number, message: string): ScenarioResult {
  return { name: scenario.name, status: 'failed', durationMs, message, actions: [] };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
