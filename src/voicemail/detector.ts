import type { VoicemailDetector } from '../call/ports/call-summary.js';
import type { Logger } from '../logger.js';
import { classifyWords, compilePhrases, type PhraseSet } from './classify.js';
import { createJudge, type JudgeLlmOptions } from './judge.js';
import { NO_EXTRA_PHRASES, type ExtraPhrases } from './phrases.js';

export type { Classification } from './classify.js';
export { DEFAULT_JUDGE_TIMEOUT_MS, type JudgeLlmOptions } from './judge.js';
export type { ExtraPhrases } from './phrases.js';

export interface VoicemailDetectorOptions {
  /**
   * Phrases added to the built-ins. A function is asked at every classify, so
   * a detector made once follows voicemail.yaml's edits (VoicemailPhrasesStore).
   */
  readonly phrases?: ExtraPhrases | (() => ExtraPhrases);
  /** Without it, judge resolves 'human' at once: no model, no guess. */
  readonly llm?: JudgeLlmOptions;
  readonly logger: Logger;
}

/** The phrases first; the model only for what they are unsure of. */
export function createVoicemailDetector(options: VoicemailDetectorOptions): VoicemailDetector {
  const source = options.phrases ?? NO_EXTRA_PHRASES;
  const current = typeof source === 'function' ? source : () => source;
  // The list is compiled again only when another one comes: the store replaces it whole on every change.
  let compiledFrom: ExtraPhrases | undefined;
  let compiled: PhraseSet | undefined;
  const phraseSet = (): PhraseSet => {
    const extra = current();
    if (compiled === undefined || extra !== compiledFrom) {
      compiled = compilePhrases(extra);
      compiledFrom = extra;
    }
    return compiled;
  };
  const judge = options.llm === undefined ? undefined : createJudge(options.llm, options.logger);

  return {
    classify(text) {
      return classifyWords(text, phraseSet());
    },
    judge(text, signal) {
      return judge === undefined ? Promise.resolve('human') : judge(text, signal);
    },
  };
}
