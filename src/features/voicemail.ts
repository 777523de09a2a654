/**
 * Telling a mailbox from a person on an outbound call: the phrases of `<PROMPTS_DIR>/voicemail.yaml`
 * (watched) and, where the words are unsure, the model's judgement. Off unless VOICEMAIL is on.
 */
import type { CallDeps } from '../call/call-deps.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createVoicemailDetector } from '../voicemail/detector.js';
import { VoicemailPhrasesStore } from '../voicemail/phrases-store.js';
import type { Model } from './model.js';
import type { OpenedStack } from './opened.js';

export async function openVoicemail(config: Config, logger: Logger, model: Model, watch: boolean, opened: OpenedStack): Promise<CallDeps['voicemail']> {
  if (!config.voicemail.enabled) return undefined;
  const phrases = await VoicemailPhrasesStore.open(config.promptsDir, logger, { watch });
  opened.push('the voicemail phrases', { close: () => phrases.close() });
  return {
    detector: createVoicemailDetector({
      phrases: () => phrases.current,
      // The demo model cannot judge: unsure words are taken for a person's.
      llm:
        config.llm.mode === 'demo'
          ? undefined
          : { apiKey: model.apiKey, baseURL: model.baseURL, model: config.voicemail.model ?? config.llm.model, timeoutMs: config.voicemail.judgeMs },
      logger,
    }),
    timing: { judgeMs: config.voicemail.judgeMs, quietMs: config.voicemail.quietMs },
  };
}
