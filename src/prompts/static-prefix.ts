/**
 * The part of system.md that is the same on every call of a prompt version.
 *
 * Providers cache the longest prefix of a request they have seen before
 * (OpenAI from 1,024 tokens on, in steps of 128; Anthropic up to a cache
 * mark), and the system prompt comes first: everything up to its first
 * placeholder can be cached across calls, nothing after it — a call's date or
 * number differs from the next call's, and so does all that follows. Hotline
 * sends the author's text as written; what it knows is where the shared part
 * ends (for a cache mark), and what an early placeholder costs (prompts:check).
 */
import type { PlaceholderPart, Template } from './template.js';

/** One call's system prompt, and how many of its leading characters every call of its prompt version shares. */
export interface SystemPrompt {
  readonly text: string;
  readonly staticChars: number;
}

/**
 * The template's text before the line that holds its first placeholder (all
 * of it without one). Cut at a line start, so that a cache mark never splits
 * a sentence: the part after it begins with the line the call's values are in.
 */
export function staticHead(template: Template): string {
  let head = '';
  for (const part of template.parts) {
    if (part.kind === 'placeholder') return head.slice(0, head.lastIndexOf('\n') + 1);
    head += part.text;
  }
  return head;
}

/**
 * The system prompt of a call, `text` rendered (and trimmed) from the
 * template whose `head` is given: its shared part is the head as the text
 * starts with it — all of it for a template without placeholders.
 */
export function systemPrompt(text: string, head: string, placeholders: boolean): SystemPrompt {
  if (!placeholders) return { text, staticChars: text.length };
  const shared = head.trimStart();
  return { text, staticChars: shared.trim() !== '' && text.startsWith(shared) ? shared.length : 0 };
}

/** Below one OpenAI cache step (128 tokens, about 512 bytes) an early placeholder costs next to nothing. */
export const LOST_PREFIX_WARNING_BYTES = 512;

export interface EarlyPlaceholder {
  readonly placeholder: PlaceholderPart;
  /** UTF-8 bytes of the shared part as written. */
  readonly prefixBytes: number;
  /** UTF-8 bytes of the lines without a placeholder that follow the first placeholder's line: shared text no cache reaches. */
  readonly lostBytes: number;
}

/** The first placeholder when lines without placeholders follow it, with what that costs the cache; undefined otherwise. */
export function earlyPlaceholder(template: Template): EarlyPlaceholder | undefined {
  const first = template.parts.find((part): part is PlaceholderPart => part.kind === 'placeholder');
  if (!first) return undefined;
  // The template as lines, each placeholder a mark: a line with a mark differs from call to call.
  const MARK = '\u0000';
  const lines = template.parts.map((part) => (part.kind === 'literal' ? part.text : MARK)).join('').split('\n');
  const firstLine = lines.findIndex((line) => line.includes(MARK));
  let lostBytes = 0;
  for (const line of lines.slice(firstLine + 1)) {
    if (!line.includes(MARK) && line.trim() !== '') lostBytes += Buffer.byteLength(`${line}\n`);
  }
  return lostBytes === 0 ? undefined : { placeholder: first, prefixBytes: Buffer.byteLength(staticHead(template).trimStart()), lostBytes };
}
