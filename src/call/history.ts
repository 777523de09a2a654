import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Logger } from '../logger.js';
import type { HeardLine } from './ports/call-summary.js';
import type { Reply } from './speech/reply.js';

type HistoryEntry = { role: 'user'; text: string } | { role: 'assistant'; reply: Reply };

/**
 * The conversation as the LLM sees it. Replies are kept by reference, so a
 * barge-in after generation still cuts what the next request shows.
 */
export class History {
  private readonly entries: HistoryEntry[] = [];

  constructor(
    /** Budget of the history sent to the LLM, in characters; the oldest turns go first. */
    private readonly maxChars: number,
    private readonly log: Logger,
  ) {}

  addUser(text: string): void {
    this.entries.push({ role: 'user', text });
  }

  addReply(reply: Reply): void {
    this.entries.push({ role: 'assistant', reply });
  }

  /** The conversation as the caller heard it, for the call's record. */
  heard(): HeardLine[] {
    const lines: HeardLine[] = [];
    for (const entry of this.entries) {
      const text = entry.role === 'user' ? entry.text : entry.reply.heardText();
      if (text.trim() !== '') lines.push({ role: entry.role, text });
    }
    return lines;
  }

  /**
   * The messages of the next LLM request. Beyond the budget the oldest turns
   * are left out; the system prompt, the greeting and the newest turn always
   * stay. Whole entries go, so every tool call keeps its result.
   */
  messages(systemPrompt: string): ChatCompletionMessageParam[] {
    const groups = this.entries.map((entry): ChatCompletionMessageParam[] =>
      entry.role === 'user' ? [{ role: 'user', content: entry.text }] : entry.reply.toMessages(),
    );
    const sizeOf = (group: ChatCompletionMessageParam[]) => JSON.stringify(group).length;
    const [greeting = [], ...rest] = groups;
    let budget = this.maxChars - systemPrompt.length - sizeOf(greeting);
    let keepFrom = rest.length;
    while (keepFrom > 0) {
      const size = sizeOf(rest[keepFrom - 1]!);
      if (size > budget && keepFrom < rest.length) break;
      budget -= size;
      keepFrom -= 1;
    }
    if (keepFrom > 0) this.log.debug({ dropped: keepFrom }, 'oldest turns left out of the LLM request');
    return [{ role: 'system', content: systemPrompt }, ...greeting, ...rest.slice(keepFrom).flat()];
  }
}
