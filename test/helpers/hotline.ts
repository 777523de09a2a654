import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { Clock } from '../../src/campaigns/clock.js';
import { loadConfig } from '../../src/config.js';
import { startScriptedLlmServer, type Script, type ScriptedLlmServer } from '../../src/llm/scripted-server.js';
import { startHotline, type RunningHotline } from '../../src/server.js';

export interface TestHotline {
  hotline: RunningHotline;
  llm: ScriptedLlmServer;
  transcriptsDir: string;
  close(): Promise<void>;
}

/** A real Hotline on port 0 talking, through the real openai SDK, to a scripted OpenAI-compatible server. */
export async function startTestHotline(
  script: Script,
  env: Record<string, string> = {},
  llmTiming: { ttftMs?: number; tokenDelayMs?: number } = {},
  hotlineOptions: { campaignClock?: Clock; logger?: Logger; startedRecordWaitMs?: number } = {},
): Promise<TestHotline> {
  const llm = await startScriptedLlmServer({ script, host: '127.0.0.1', ttftMs: 5, tokenDelayMs: 2, ...llmTiming });
  const transcriptsDir = await mkdtemp(path.join(tmpdir(), 'hotline-test-'));
  const vars: Record<string, string> = {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: llm.baseURL,
    LLM_MODEL: 'test-model',
    TRANSCRIPTS_DIR: transcriptsDir,
    TRANSFER_TARGET: '4930999999',
    TRANSFER_TARGETS: 'sales=4930111111,support=4930222222',
    // A call's own tests count the LLM requests of the call; the report's request is tested on its own.
    REPORT_FIELDS: 'false',
    // The requests a test scripts answers for carry the caller's words alone; the knowledge tests turn it on.
    KNOWLEDGE: 'false',
    // Calls stay in the shipped prompts' own language and send nothing but the spec's actions; the language tests turn both on.
    LANGUAGES: 'false',
    CONFIGURE_TRANSCRIPTION: 'false',
    ...env,
  };
  const config = loadConfig(vars);
  const { logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), ...startOptions } = hotlineOptions;
  // Tool files' ${NAME} references see the test's variables, never the environment of whoever runs the tests.
  const hotline = await startHotline(config, logger, { env: vars, ...startOptions });
  return {
    hotline,
    llm,
    transcriptsDir,
    async close() {
      await hotline.close();
      await llm.close();
      await rm(transcriptsDir, { recursive: true, force: true });
    },
  };
}
