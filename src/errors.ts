/** Base of Hotline's own errors: a stable `code` callers can branch on. */
export abstract class HotlineError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Misconfiguration: the message says what to set. */
export class ConfigError extends HotlineError {
  readonly code = 'config_invalid';
}

/** The business's documents were not searched in time: the turn goes on without passages. */
export class KnowledgeTimeoutError extends HotlineError {
  readonly code = 'knowledge_timeout';
  constructor(readonly timeoutMs: number) {
    super(`the knowledge search took longer than ${timeoutMs} ms`);
  }
}

/** The LLM sent no first token in time. */
export class LlmTimeoutError extends HotlineError {
  readonly code = 'llm_timeout';
  constructor(readonly timeoutMs: number) {
    super(`LLM sent no first token within ${timeoutMs} ms`);
  }
}

/** A reasoning model thought past the time allowed without saying anything. */
export class LlmThinkingTimeoutError extends HotlineError {
  readonly code = 'llm_thinking_timeout';
  constructor(readonly timeoutMs: number) {
    super(`LLM only reasoned and said nothing within ${timeoutMs} ms`);
  }
}

/** The LLM's reply went on past the total time allowed for one turn. */
export class LlmTotalTimeoutError extends HotlineError {
  readonly code = 'llm_total_timeout';
  constructor(readonly timeoutMs: number) {
    super(`LLM reply did not finish within ${timeoutMs} ms`);
  }
}

/** The LLM answered with nothing to say and nothing to do. */
export class LlmEmptyReplyError extends HotlineError {
  readonly code = 'llm_empty_reply';
  constructor() {
    super('LLM reply had no speech and no action');
  }
}
