/**
 * What one run of an eval talks to: a real Hotline on port 0 answering from
 * the prompt folder under test, the eval's stubbed tools, and the scripted
 * models of the roles no real model plays. A fresh stack per run: runs in
 * parallel share nothing, and a run's calls are the only ones it sees.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { CallSummary, ToolRunSummary } from '../call/ports/call-summary.js';
import { loadConfig } from '../config.js';
import { startScriptedLlmServer, type Script } from '../llm/scripted-server.js';
import type { Logger } from '../logger.js';
import { LANGUAGE_SETTINGS, languageDetectionReady } from '../scenarios/language-check.js';
import { inProcessHotlineEnv } from '../scenarios/stack.js';
import { ToolStubs } from '../scenarios/tool-stubs.js';
import { startHotline } from '../server.js';
import type { Eval } from './eval-schema.js';
import type { EvalModels, ModelEndpoint } from './eval-models.js';
import type { TranscriptLine } from './heard-transcript.js';
import { promptUse, type PromptUse } from './prompt-lines.js';
import { scriptedAgent, scriptedCaller, scriptedJudge } from './scripted-roles.js';

export interface EvalStack {
  readonly wsUrl: string;
  /** The caller and judge models of this run: the configured ones, or this run's scripted ones. */
  readonly caller: ModelEndpoint;
  readonly judge: ModelEndpoint;
  /** Resolves with the record Hotline keeps of the call, once it has ended. */
  callRecord(sessionId: string): Promise<CallSummary>;
  /** Which of the prompt folder's files a call used: its lines heard, its tools run. */
  promptUse(transcript: readonly TranscriptLine[], toolRuns: readonly ToolRunSummary[]): PromptUse;
  close(): Promise<void>;
}

export interface EvalStackOptions {
  evaluation: Eval;
  promptsDir: string;
  models: EvalModels;
  /** 1-based: scripted rules with `replies` answer by it. */
  run: number;
  logger?: Logger;
}

export async function startEvalStack(options: EvalStackOptions): Promise<EvalStack> {
  const { evaluation, models, run } = options;
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const serve = async (script: Script): Promise<ModelEndpoint> => {
      const server = await startScriptedLlmServer({ script, host: '127.0.0.1', ttftMs: 0, tokenDelayMs: 0, record: false });
      cleanups.push(() => server.close());
      return { baseURL: server.baseURL, apiKey: 'scripted', model: 'hotline-demo', temperature: undefined };
    };
    const { scripted } = evaluation;
    const caller = models.caller.kind === 'remote' ? models.caller.endpoint : await serve(scriptedCaller(scripted.caller, run));
    const judge = models.judge.kind === 'remote' ? models.judge.endpoint : await serve(scriptedJudge(scripted.judge));
    const agentEnv: Record<string, string> =
      models.agent.kind === 'remote'
        ? { ...models.agentEnv }
        : await serve(scriptedAgent(scripted.agent, run)).then((agent) => ({
            OPENAI_API_KEY: agent.apiKey,
            OPENAI_BASE_URL: agent.baseURL ?? '',
            LLM_MODEL: agent.model,
          }));

    const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-eval-'));
    cleanups.push(() => rm(transcriptsDir, { recursive: true, force: true }));

    const ended = new Map<string, CallSummary>();
    const waiting = new Map<string, (summary: CallSummary) => void>();
    const config = loadConfig({
      ...inProcessHotlineEnv(transcriptsDir),
      ...evaluation.env,
      // A caller in a language: the call is in the language it detects, and tells the recogniser.
      ...(evaluation.language === undefined ? {} : Object.fromEntries(LANGUAGE_SETTINGS.map((name) => [name, 'true']))),
      ...agentEnv,
      PROMPTS_DIR: options.promptsDir,
    });
    const tools = new ToolStubs(evaluation.tools);
    cleanups.push(async () => tools.close());
    const hotline = await startHotline(config, options.logger ?? pino({ level: 'silent' }), {
      watchPrompts: false,
      env: { ...evaluation.env },
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
    cleanups.push(() => hotline.close());
    // The caller's first words must be able to switch the call, on every run alike: detection's data is loaded first.
    if (config.languages.perCall) await languageDetectionReady();

    return {
      wsUrl: hotline.wsUrl,
      caller,
      judge,
      callRecord: (sessionId) => {
        const known = ended.get(sessionId);
        if (known) return Promise.resolve(known);
        return new Promise((resolve) => waiting.set(sessionId, resolve));
      },
      promptUse: (transcript, toolRuns) =>
        promptUse({
          prompts: hotline.prompts.current,
          promptFiles: hotline.prompts.status.files,
          fileTools: hotline.tools.files.tools(),
          stubbed: new Set(Object.keys(evaluation.tools)),
          transcript,
          toolRuns,
        }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
