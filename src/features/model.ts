/**
 * The model every turn asks: the configured OpenAI-compatible endpoint, or, with none configured,
 * the built-in demo model served over loopback HTTP so it runs through the same SDK path.
 */
import type { Config } from '../config.js';
import { demoScript } from '../demo/demo-script.js';
import { OpenAiLlm } from '../llm/llm.js';
import { startScriptedLlmServer } from '../llm/scripted-server.js';
import type { Logger } from '../logger.js';
import type { OpenedStack } from './opened.js';

export interface Model {
  readonly llm: OpenAiLlm;
  /** Where the model is reached, for the parts that ask it beside the turns (the report, the voicemail judge). */
  readonly apiKey: string | undefined;
  readonly baseURL: string | undefined;
}

export async function openModel(config: Config, logger: Logger, opened: OpenedStack): Promise<Model> {
  let { apiKey, baseURL } = config.llm;
  if (config.llm.mode === 'demo') {
    const demo = await startScriptedLlmServer({
      script: demoScript,
      host: '127.0.0.1',
      ttftMs: config.demo.ttftMs,
      tokenDelayMs: config.demo.tokenDelayMs,
      record: false,
    });
    opened.push('the demo model', { close: () => demo.close() });
    apiKey = 'demo';
    baseURL = demo.baseURL;
  }
  const llm = new OpenAiLlm({
    apiKey,
    baseURL,
    model: config.llm.model,
    temperature: config.llm.temperature,
    maxTokensParam: config.llm.maxTokensParam,
    cacheMarks: config.llm.cacheMarks,
    streamUsage: config.llm.streamUsage,
    onStreamUsageRefused: () =>
      logger.warn('the LLM refused stream_options; token usage is recorded only where the server sends it unasked (LLM_STREAM_USAGE=false spares the first request after each start this refusal)'),
  });
  // Closed once every turn has ended: only idle keep-alive sockets are left by then.
  opened.push('the model', { close: () => llm.close() });
  return { llm, apiKey, baseURL };
}
