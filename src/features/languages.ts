/**
 * The language detector, loaded while the rest of Hotline starts: with two or more languages in the
 * prompts, a caller's first words decide their call's language, and a detector still loading then
 * finds nothing. Its data is read on a thread of its own that ends when it has answered: nothing
 * stays open to close.
 */
import type { Config } from '../config.js';
import { prepareLanguageDetection } from '../language/detect.js';
import type { Logger } from '../logger.js';
import type { PromptStore } from '../prompts/prompt-store.js';

/** Resolves once the detector is ready, at once when no call needs it; never rejects (calls go on without switching). */
export function startLanguageDetection(config: Config, logger: Logger, prompts: PromptStore): Promise<void> {
  if (!config.languages.perCall || prompts.current.languages.tags.length < 2) return Promise.resolve();
  return prepareLanguageDetection().catch((error: unknown) => {
    logger.error({ err: error }, "the language detector could not be loaded: calls stay in the language they start in unless the service tags the caller's words");
  });
}
