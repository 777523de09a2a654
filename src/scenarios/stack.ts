/**
 * Everything one scenario talks to: a real Hotline on port 0, the scripted
 * LLM it asks (or, live, the LLM configured in the environment), and a fake
 * of the voice service's outbound API. A fresh stack per scenario: it starts
 * in milliseconds and no scenario can leak into another.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../llm/scripted-server.js';
import type { Logger } from '../logger.js';
import { startHotline } from '../server.js';
import type { CallSummary } from '../call/ports/call-summary.js';
import { startFakeAiFlowApi } from '../testing/fake-aiflow-api.js';
import { LANGUAGE_SETTINGS, languageDetectionReady } from './language-check.js';
import { scenarioModel, type ModelLog } from './model.js';
import type { Scenario } from './schema.js';
import { ToolStubs, type ToolCallLog } from './tool-stubs.js';

/** Where a transfer without a named target goes in scenarios. */
export const SCENARIO_TRANSFER_TARGET = '4930999999';
export const SCENARIO_AI_FLOW = 'scenario-flow';

/** The LLM settings a live run takes from the environment; nothing else of it, so runs stay reproducible. */
const LIVE_LLM_VARIABLES = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'LLM_MODEL', 'LLM_TEMPERATURE', 'LLM_TIMEOUT_MS'] as const;

export interface LlmTiming {
  ttftMs?: number;
  tokenDelayMs?: number;
}

export interface StackOptions {
  /** Use the LLM configured in `env` instead of the scripted one. */
  live?: boolean;
  /** Read for the LLM settings of a live run. */
  env?: Record<string, string | undefined>;
  /** Default delays of the scripted model; a rule's own ttft_ms / token_delay_ms win. */
  llmTiming?: LlmTiming;
  logger?: Logger;
}

/** What a scenario needs to place and drive its call. */
export interface CallTarget {
  /** http://host:port */
  url: string;
  wsUrl: string;
  adminToken: string;
}

export interface ScenarioStack {
  target: CallTarget;
  /** Undefined on a live run: a real LLM's replies are not known in advance. */
  model: ModelLog | undefined;
  /** The calls of the scenario's stubbed tools (`tools:`), live runs too. */
  tools: ToolCallLog;
  /** Hotline's record of the call, once it has ended; undefined when none came within `timeoutMs`. */
  callRecord(sessionId: string, timeoutMs: number): Promise<CallSummary | undefined>;
  close(): Promise<void>;
}

/**
 * The settings of a Hotline a runner starts in-process (scenarios, evals): on loopback, a port of its
 * own, quiet, its record in a folder of its own. No report fields: the model under test answers the
 * call, and a report's request would reach its rules too.
 */
export function inProcessHotlineEnv(transcriptsDir: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    TRANSCRIPTS_DIR: transcriptsDir,
    TRANSFER_TARGET: SCENARIO_TRANSFER_TARGET,
    REPORT_FIELDS: 'false',
  };
}

export async function startScenarioStack(scenario: Scenario, options: StackOptions = {}): Promise<ScenarioStack> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    const secret = (): string => randomBytes(12).toString('hex');
    const adminToken = secret();
    const aiFlowToken = secret();

    const aiflow = await startFakeAiFlowApi({ token: aiFlowToken, flows: { [SCENARIO_AI_FLOW]: { phoneNumber: true } } });
    cleanups.push(() => aiflow.close());

    const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-scenario-'));
    cleanups.push(() => rm(transcriptsDir, { recursive: true, force: true }));

    let model: ModelLog | undefined;
    const llmEnv: Record<string, string | undefined> = {};
    if (options.live) {
      for (const name of LIVE_LLM_VARIABLES) llmEnv[name] = options.env?.[name];
    } else {
      const { script, replies, askedSince } = scenarioModel(scenario.model);
      const started = await startScriptedLlmServer({ script, host: '127.0.0.1', ...options.llmTiming });
      cleanups.push(() => started.close());
      model = { replies, askedSince, idle: (timeoutMs) => allEnded(started, timeoutMs) };
      Object.assign(llmEnv, { OPENAI_API_KEY: 'scenario', OPENAI_BASE_URL: started.baseURL, LLM_MODEL: 'hotline-demo' });
    }

    const config = loadConfig({
      ...inProcessHotlineEnv(transcriptsDir),
      ADMIN_TOKEN: adminToken,
      AIFLOW_API_URL: aiflow.url,
      AIFLOW_ACCESS_TOKEN: aiFlowToken,
      AIFLOW_ID: SCENARIO_AI_FLOW,
      AIFLOW_BILLING_DEVICE: 'scenario-device',
      // The schema keeps the scenario off the runner's own settings (hotline-env.ts); TRANSFER_TARGET it may change.
      ...scenario.env,
      // A call in a language: the call chooses and switches its language, and tells the recogniser.
      ...(scenario.language === undefined ? {} : Object.fromEntries(LANGUAGE_SETTINGS.map((name) => [name, 'true']))),
      ...llmEnv,
    });
    if (options.live && config.llm.mode !== 'remote') {
      throw new Error('--live needs an LLM in the environment: set OPENAI_API_KEY and/or OPENAI_BASE_URL, and LLM_MODEL');
    }
    const tools = new ToolStubs(scenario.tools ?? {});
    cleanups.push(async () => tools.close());
    const ended = new Map<string, CallSummary>();
    const waiting = new Map<string, (summary: CallSummary) => void>();
    const hotline = await startHotline(config, options.logger ?? pino({ level: 'silent' }), {
      watchPrompts: false,
      // Tool files' ${NAME} see the scenario's settings only: a run must not depend on the shell it starts from.
      env: { ...scenario.env },
      extraTools: tools,
      callObservers: [
        {
          callEnded: (summary) => {
            ended.set(summary.sessionId, summary);
            waiting.get(summary.sessionId)?.(summary);
          },
        },
      ],
    });
    // Cleanups run in reverse: Hotline closes before the LLM server, so no call waits on a vanished LLM.
    cleanups.push(() => hotline.close());
    // A caller's first words must be able to switch the call: the language detector's data is loaded first.
    if (scenario.language !== undefined) await languageDetectionReady();

    const callRecord = async (sessionId: string, timeoutMs: number): Promise<CallSummary | undefined> => {
      const known = ended.get(sessionId);
      if (known) return known;
      let timer: NodeJS.Timeout | undefined;
      try {
        return await new Promise<CallSummary | undefined>((resolve) => {
          waiting.set(sessionId, resolve);
          timer = setTimeout(() => resolve(undefined), timeoutMs);
        });
      } finally {
        clearTimeout(timer);
        waiting.delete(sessionId);
      }
    };
    return { target: { url: hotline.url, wsUrl: hotline.wsUrl, adminToken }, model, tools, callRecord, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function allEnded(llm: ScriptedLlmServer, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([Promise.all(llm.requests.map((request) => request.ended)), timeout]);
  clearTimeout(timer);
}
