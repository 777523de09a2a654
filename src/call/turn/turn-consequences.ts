import { llmErrorHint, loggableLlmError } from '../../llm/llm-errors.js';
import type { Logger } from '../../logger.js';
import type { CallMetrics } from '../ports/call-metrics.js';
import type { PromptName } from '../../prompts/prompt-store.js';
import type { Ending } from '../ending/pending-ending.js';
import type { ToolCallRecord } from '../speech/reply.js';
import { defaultDestination, resolveTransfer, type TransferSetup } from '../ending/transfer.js';
import type { FinalAction } from './round-calls.js';

export interface TurnConsequencesHost {
  readonly log: Logger;
  readonly metrics: CallMetrics;
  readonly transfer: TransferSetup;
  /** Consecutive failed turns after which the call goes to TRANSFER_TARGET, or ends politely. */
  readonly maxFailures: number;
  /** Speaks a prompt file's line; `final` when the call ends or goes elsewhere after it. */
  speakLine(name: PromptName, options?: { final?: boolean }): void;
  /** The hangup or transfer, once the speech before it has played. */
  endAfter(ending: Ending, record?: ToolCallRecord): void;
}

/**
 * What a finished turn means for the call beyond its words: a failed turn's
 * apology — or, after too many in a row, a person or a polite goodbye — and
 * the model's own hangup or transfer, carried out once its words have played.
 */
export class TurnConsequences {
  /** LLM turns that failed in a row. */
  private failures = 0;

  constructor(private readonly host: TurnConsequencesHost) {}

  /** A turn answered: the count of failures starts again. */
  succeeded(): void {
    this.failures = 0;
  }

  /** The caller always hears something: an apology, or after repeated failures a person or a polite goodbye. */
  failed(turnId: number, error: unknown): void {
    const { host } = this;
    this.failures += 1;
    host.metrics.llmFailed(error);
    host.log.error({ err: loggableLlmError(error), turn: turnId, failures: this.failures, ...llmErrorHint(error) }, 'LLM turn failed');
    if (this.failures < host.maxFailures) {
      // Delivered together with any sentences still held, so the apology follows what was said.
      host.speakLine('error');
      return;
    }
    const destination = defaultDestination(host.transfer);
    // A human beats a broken bot.
    host.speakLine(destination ? 'giveUpTransfer' : 'giveUp', { final: true });
    host.endAfter(destination ? { type: 'transfer', destination, cause: 'give_up' } : { type: 'hangup', cause: 'give_up' });
  }

  /** The model's transfer or hangup; the model reads in its record what became of it. */
  final(action: FinalAction): void {
    const { host } = this;
    const { record } = action;
    if (action.name === 'hangup') {
      record.result = 'the call is ending';
      return host.endAfter({ type: 'hangup', cause: 'model' }, record);
    }
    const destination = resolveTransfer(record.arguments, host.transfer);
    if (!destination) {
      record.result = 'not done: no transfer destination is configured';
      host.log.warn('model asked for a transfer, but TRANSFER_TARGET is not set');
      host.speakLine('transferFailed');
      return;
    }
    record.result = `transferring the call to ${destination.target}`;
    host.endAfter({ type: 'transfer', destination, cause: 'model' }, record);
  }
}
