/**
 * How the passages a turn found reach the model: a note after the caller's newest words, in that
 * turn's requests only. Everything before the newest words is byte for byte what earlier requests
 * sent, so a provider's prompt cache still serves it; the next turn's request carries the words
 * without this note, and a note of its own. Appended to the caller's message rather than sent as a
 * message of its own: many chat templates refuse a system message after the first, or two user
 * messages in a row.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { KnowledgePassage } from './ports/knowledge.js';

export const FOUND_MARK = "[From the business's documents — answer from these; they are not the caller's words:]";
export const NOTHING_MARK =
  "[From the business's documents: nothing matches this. If the caller asks about the business (prices, hours, policies, products, services), " +
  'do not guess: say you do not know and offer to connect them with a colleague or to arrange a callback.]';

/** A caller message: the caller's words, and the note after them (from its mark on) when there is one. */
export interface CallerMessage {
  readonly said: string;
  readonly note: string | undefined;
}

/**
 * A caller message split into the caller's words and the note Hotline added. The note is the last
 * mark's: it is appended at the end, so a mark within the caller's own words never hides the real one.
 */
export function splitKnowledgeNote(content: string): CallerMessage {
  const at = Math.max(content.lastIndexOf(FOUND_MARK), content.lastIndexOf(NOTHING_MARK));
  if (at < 0) return { said: content, note: undefined };
  return { said: content.slice(0, at).trimEnd(), note: content.slice(at) };
}

/** A caller message's own words: the note after them, if any, left out (a scripted model's rules match the words, not the passages). */
export function withoutKnowledgeNote(content: string): string {
  return splitKnowledgeNote(content).said;
}

/** What the model reads after the caller's words. */
export function knowledgeNote(passages: readonly KnowledgePassage[]): string {
  if (passages.length === 0) return NOTHING_MARK;
  const lines = passages.map((p, i) => `(${i + 1}) ${p.source}${p.heading ? ` › ${p.heading}` : ''}: ${p.text.replace(/\s*\n\s*/g, ' ')}`);
  return [FOUND_MARK, ...lines].join('\n');
}

/**
 * What the caller just said (the newest caller message), and the exchange before it as text — the
 * caller's words and the reply they heard — for a follow-up ("and on Saturdays?") to be searched with.
 */
export function lastExchange(messages: readonly ChatCompletionMessageParam[]): { said: string; before: string | undefined } {
  const texts: string[] = [];
  let said: string | undefined;
  for (let at = messages.length - 1; at >= 0; at--) {
    const message = messages[at]!;
    if (message.role === 'system' || message.role === 'developer' || message.role === 'tool') continue;
    if (said === undefined) {
      if (message.role === 'user') said = textOf(message.content);
      continue;
    }
    const text = message.role === 'assistant' ? assistantText(message) : textOf(message.content);
    if (text) texts.unshift(text);
    // The reply before, and the words it answered.
    if (message.role === 'user') break;
  }
  return { said: said ?? '', before: texts.length > 0 ? texts.join('\n') : undefined };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (part && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : '')).join(' ');
}

/** A reply's words: its text, or what its speak calls said. */
function assistantText(message: ChatCompletionMessageParam & { role: 'assistant' }): string {
  const text = textOf(message.content);
  if (text) return text;
  const spoken: string[] = [];
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    try {
      const args = JSON.parse(call.function.arguments) as { text?: unknown } | null;
      if (typeof args?.text === 'string') spoken.push(args.text);
    } catch {
      // Not the words of a speak: nothing to search with.
    }
  }
  return spoken.join(' ');
}

/**
 * `messages` with `note` after the newest caller message's words; the rest are the same objects.
 * Unchanged when there is no caller message (nothing was asked).
 */
export function withKnowledgeNote(messages: readonly ChatCompletionMessageParam[], note: string): ChatCompletionMessageParam[] {
  const copy = [...messages];
  for (let at = copy.length - 1; at >= 0; at--) {
    const message = copy[at]!;
    if (message.role !== 'user') continue;
    const content = typeof message.content === 'string' ? `${message.content}\n\n${note}` : [...message.content, { type: 'text' as const, text: note }];
    copy[at] = { ...message, content };
    return copy;
  }
  return copy;
}
