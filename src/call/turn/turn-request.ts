import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { PromptSettings } from '../../prompts/system-settings.js';
import type { CallDeps } from '../call-deps.js';
import type { TurnOptions } from './turn.js';

/**
 * What a turn asks the LLM for, and within which limits: the call's settings
 * and its prompt version's model, temperature and SSML, for `messages` —
 * whose system message starts with `staticSystemChars` characters every call
 * of the prompt version shares.
 */
export function turnRequest(
  deps: Pick<CallDeps, 'llm' | 'tools' | 'settings' | 'pacing'>,
  prompt: PromptSettings,
  messages: ChatCompletionMessageParam[],
  staticSystemChars = 0,
): Pick<TurnOptions, 'llm' | 'request' | 'limits' | 'ssml'> {
  const { settings } = deps;
  return {
    llm: deps.llm,
    request: {
      messages,
      tools: deps.tools,
      model: prompt.model,
      temperature: prompt.temperature,
      maxTokens: settings.llmMaxTokens,
      staticSystemChars,
    },
    limits: {
      firstTokenTimeoutMs: settings.llmTimeoutMs,
      thinkingTimeoutMs: settings.llmThinkingTimeoutMs,
      totalTimeoutMs: settings.llmTotalTimeoutMs,
      maxChars: settings.replyMaxChars,
      maxRounds: settings.llmMaxToolRounds,
      // The "let me think" line only where it can reach the caller while the model still thinks.
      fillerMs: deps.pacing === 'stream' ? settings.thinkingFillerMs : 0,
    },
    ssml: prompt.ssml,
  };
}
