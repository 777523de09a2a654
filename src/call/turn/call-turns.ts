/**
 * The turns of one call as they are made and run: each given the conversation, the tools and the
 * hold lines, its time, tokens and retries counted into the call's record and metrics, its span
 * ended with its outcome. The call decides when a turn starts and what its outcome means; this
 * keeps the making of one, and which turn a speak belongs to, out of the call's state machine.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { loggableLlmError } from '../../llm/llm-errors.js';
import type { Logger } from '../../logger.js';
import type { CallDeps } from '../call-deps.js';
import type { CallPrompts } from '../call-prompts.js';
import type { CallRecord } from '../call-record.js';
import type { CallTrace, SpeechParent } from '../ports/tracing.js';
import type { SpokenChunk } from '../speech/reply.js';
import type { CallTools } from './call-tools.js';
import { Turn, type SpeakExtra, type TurnOutcome } from './turn.js';
import { turnRequest } from './turn-request.js';
import { knowledgeNote, lastExchange } from '../knowledge-note.js';
import { passagePlace, type KnowledgeLookup, type KnowledgePassage } from '../ports/knowledge.js';

export interface CallTurnsHost {
  readonly log: Logger;
  readonly deps: CallDeps;
  readonly prompts: CallPrompts;
  readonly tools: CallTools;
  readonly record: CallRecord;
  readonly trace: CallTrace;
  /** The conversation as the next LLM request will see it. */
  messages(): ChatCompletionMessageParam[];
  /** The turn the call waits for now: only its first token marks the call's record. */
  current(): Turn | undefined;
  /** The single gate every streamed chunk passes (the call's). */
  speak(turn: Turn, text: string, extra: SpeakExtra): void;
  /** The turn has an outcome; its span ends after this returns. */
  done(turn: Turn, outcome: TurnOutcome): void;
}

export class CallTurns {
  private made = 0;
  /** The latest turn: its words may still go out after it has settled (its last sentence, a paced one). */
  private latest: Turn | undefined;
  // Rendered once, at the first turn: the variables they use are known by then and do not change.
  private fillerText: string | undefined;
  private fillerAgainText: string | undefined;
  /** The passages each running turn was given, until its reply is known. */
  private readonly given = new Map<Turn, readonly KnowledgePassage[]>();

  constructor(private readonly host: CallTurnsHost) {}

  /** How many turns the call has had. */
  get count(): number {
    return this.made;
  }

  /** A new turn for the caller's words (`callerText`, as the trace may show them); not yet running. */
  make(callerText: string): Turn {
    const { host } = this;
    const { deps, prompts, record } = host;
    const id = ++this.made;
    // The hold line: for a reasoning model over a live connection, or for any slow answer a webhook request waits for.
    this.fillerText ??= prompts.render('thinking');
    this.fillerAgainText ??= prompts.render('thinkingAgain');
    const messages = host.messages();
    const { knowledge } = deps;
    const turn: Turn = new Turn({
      id,
      ...turnRequest(deps, prompts.settings, messages, prompts.system.staticChars),
      ...(knowledge?.active ? { knowledge: () => this.lookUp(knowledge, turn, messages) } : {}),
      businessTools: () => host.tools.offered(),
      runTools: (calls, signal, say, trace) => host.tools.run(calls, signal, say, trace),
      trace: host.trace.turn(id, callerText),
      ...(this.fillerText ? { fillerText: this.fillerText } : {}),
      ...(this.fillerAgainText ? { fillerAgainText: this.fillerAgainText } : {}),
      speak: (t, text, extra) => host.speak(t, text, extra),
      onFirstToken: (t) => {
        deps.metrics.llmFirstTokenArrived(performance.now() - t.startedAt);
        if (t === host.current()) record.mark('llmFirstTokenMs');
      },
      // Each request's tokens, counted with the turn's: they reach the store with the record's next write.
      onUsage: (t, usage) => {
        const model = prompts.settings.model ?? deps.llm.model;
        const cost = deps.prices?.costOf(model, usage);
        record.tokensUsed(t.reply, usage, model, cost);
        deps.metrics.llmUsed(model, usage, cost);
        return cost;
      },
      onRetry: (t, error, delayMs) => {
        // Nothing was said yet, so a retry costs the caller less than an apology.
        host.log.warn({ err: loggableLlmError(error), turn: t.id, delayMs }, 'LLM request failed; retrying once');
        deps.metrics.llmFailed(error);
      },
    });
    this.latest = turn;
    return turn;
  }

  /** Runs `turn`; its outcome goes to the call, then ends the turn's span. */
  run(turn: Turn): void {
    const { host } = this;
    turn
      .run()
      // run() reports failures as outcomes; the catches are only safety nets.
      .catch((error: unknown): TurnOutcome => ({ status: 'failed', error }))
      .then((outcome) => {
        try {
          host.done(turn, outcome);
        } finally {
          this.knowledgeUsed(turn);
          // After done: the turn's last words, sent there, are spoken within its span.
          turn.trace.end(
            outcome.status === 'failed'
              ? { status: 'failed', error: outcome.error }
              : { status: outcome.status, action: outcome.status === 'completed' ? outcome.finalAction?.name : undefined },
          );
        }
      })
      .catch((error: unknown) => host.log.error({ err: error, turn: turn.id }, 'turn completion failed'));
  }

  /**
   * The passages for the caller's newest words (and the exchange before, for a follow-up): on the
   * turn's record, trace and transcript, and as the note the model reads after those words.
   */
  private async lookUp(knowledge: KnowledgeLookup, turn: Turn, messages: readonly ChatCompletionMessageParam[]): Promise<string> {
    const { said, before } = lastExchange(messages);
    const finding = await knowledge.find(said, before);
    const places = finding.passages.map(passagePlace);
    this.given.set(turn, finding.passages);
    this.host.record.knowledgeGiven(turn.reply, finding);
    turn.trace.knowledge(places, finding.ms);
    this.host.deps.transcript.append({ role: 'event', text: 'knowledge', passages: places, ms: Math.round(finding.ms * 1000) / 1000 });
    return knowledgeNote(finding.passages);
  }

  /** Which of the passages a finished turn was given its reply drew on, by what the model wrote (heard or cut off later). */
  private knowledgeUsed(turn: Turn): void {
    const given = this.given.get(turn);
    this.given.delete(turn);
    const { knowledge } = this.host.deps;
    if (!given || given.length === 0 || !knowledge) return;
    const used = knowledge.used(given, turn.reply.generatedText());
    this.host.record.knowledgeUsed(turn.reply, used);
    turn.trace.knowledgeUsed(used.map(passagePlace));
    if (used.length > 0) this.host.deps.transcript.append({ role: 'event', text: 'knowledge_used', passages: used.map(passagePlace) });
  }

  /** A speak is traced under the turn whose words it carries; a line of the call's own (a greeting, an apology) under the call. */
  speechParentOf(chunks: readonly SpokenChunk[]): SpeechParent {
    const turn = this.latest;
    if (turn) for (const chunk of chunks) if (chunk.reply === turn.reply) return turn.trace;
    return this.host.trace;
  }
}
