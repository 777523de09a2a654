/**
 * What every call reads and writes on disk: the prompt files (watched, so an edit reaches the next
 * call), the price table, and the transcripts folder, with the redaction every written word passes.
 */
import type { Redact } from '../call/ports/redaction.js';
import type { Config } from '../config.js';
import { loadPriceTable, type PriceTable } from '../llm/prices.js';
import type { Logger } from '../logger.js';
import { redactorOf } from '../privacy/redactor-of.js';
import { PromptStore } from '../prompts/prompt-store.js';
import { TranscriptStore } from '../transcripts/transcript-store.js';
import type { OpenedStack } from './opened.js';

export interface CallFiles {
  readonly prompts: PromptStore;
  /** Card numbers, IBANs and the business's own patterns never reach a transcript, the store, the dashboard or a report. */
  readonly redact: Redact;
  readonly prices: PriceTable;
  readonly transcripts: TranscriptStore;
}

export async function openCallFiles(config: Config, logger: Logger, watch: boolean, opened: OpenedStack): Promise<CallFiles> {
  const prompts = await PromptStore.open(config.promptsDir, logger, { watch });
  opened.push('prompts', { close: () => prompts.close() });
  const redact = redactorOf(config.privacy.redaction);
  // Read before anything starts: a price file that cannot be used stops the start with what to fix.
  const prices = await loadPriceTable(config.llm.pricesFile);
  const transcripts = new TranscriptStore(config.transcriptsDir, redact);
  await transcripts.init();
  return { prompts, redact, prices, transcripts };
}
