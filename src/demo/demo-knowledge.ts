import { NOTHING_MARK, type CallerMessage } from '../call/knowledge-note.js';
import { SentenceChunker } from '../call/speech/chunker.js';
import type { ScriptedReply } from '../llm/scripted-server.js';

/**
 * The demo model's answers from the business's documents (prompts/knowledge/).
 * Hotline adds a note to the caller's newest message: the passages a search
 * found, or that nothing matched. The demo reads passage (1) aloud, or
 * declines to guess — what a real model is asked to do with the note, so an
 * offline call shows it too.
 */

/** What the demo says to a question the documents do not answer. */
export const UNKNOWN_ANSWER = "I'm sorry, I don't know that, and I'd rather not guess. Shall I connect you with a colleague?";

// At the start of the words or of a clause ("Hi, do you …", "Hallo, haben Sie …"), after an optional filler.
const QUESTION_START = new RegExp(
  String.raw`(?:^|[.,;:!]\s*)(?:(?:and|so|also|but|then|okay|ok|well|hi|hello|und|dann|aber|na|hallo)\s+)?` +
    String.raw`(?:what|when|where|who|why|which|how|do|does|did|can|could|is|are|will|would|should|` +
    String.raw`wann|wo|woher|wohin|was|wer|warum|wieso|welche|welcher|welches|wie|gibt|haben|habt|hat|kann|kannst|können|könnt|` +
    String.raw`darf|ist|sind|liefert|liefern|nehmt|nehmen|machen|verkauft|verkaufen|bietet|bieten)(?![\p{L}\p{N}])`,
  'iu',
);

/** Whether the caller's words ask something: a question mark, or a question word opening a clause. */
export function looksLikeQuestion(said: string): boolean {
  const words = said.trim();
  // "whether"/"ob" ask even in a statement: "I'd like to know whether …", "ich wollte fragen, ob …".
  return words.includes('?') || QUESTION_START.test(words) || /\b(whether|wondering)\b|(?<![\p{L}])ob(?![\p{L}])/iu.test(words);
}

/**
 * The reply the note calls for: the first two sentences of passage (1), or,
 * when nothing matched and the caller asked something, that the demo does
 * not know. Undefined without a note, for a statement nothing matched, and
 * for a note whose passage (1) cannot be read. `language`: how the caller
 * asks, and how the demo says it does not know (demo-languages.ts); English
 * without it.
 */
export function knowledgeReply(
  { said, note }: CallerMessage,
  language: { asks(said: string): boolean; unknown: string } = { asks: looksLikeQuestion, unknown: UNKNOWN_ANSWER },
): ScriptedReply | undefined {
  if (note === undefined) return undefined;
  if (note.startsWith(NOTHING_MARK)) return language.asks(said) ? { content: language.unknown } : undefined;
  // Read out only to a question: a passage found by a stray word of "yes, now is a good time" answers nothing.
  if (!language.asks(said)) return undefined;
  const passage = firstPassage(note);
  if (passage === undefined) return undefined;
  const answer = firstSentences(passage, 2);
  return answer === '' ? undefined : { content: answer };
}

/** Passage (1)'s text, its source and heading left out: "delivery.md › Delivery areas: We deliver …" → "We deliver …". */
export function firstPassage(note: string): string | undefined {
  const match = /(?:^|\n)\(1\)\s+([\s\S]*?)(?=\n\(\d+\)\s|\n\s*\n|$)/.exec(note);
  const line = match?.[1]?.replace(/\s+/g, ' ').trim();
  if (!line) return undefined;
  const arrow = line.indexOf(' › ');
  if (arrow < 0) {
    // No heading: "notes.txt: …". Only a file name (no spaces) before the colon is a source.
    const colon = line.indexOf(': ');
    return colon > 0 && !/\s/.test(line.slice(0, colon)) ? line.slice(colon + 2) : line;
  }
  const rest = line.slice(arrow + ' › '.length);
  // An FAQ passage repeats its question after the heading: the split where it does is the right one,
  // even when the question itself holds a ": ".
  for (let colon = rest.indexOf(': '); colon >= 0; colon = rest.indexOf(': ', colon + 1)) {
    const heading = rest.slice(0, colon);
    const text = rest.slice(colon + 2);
    if (text.startsWith(heading)) return text.slice(heading.length).trim() || undefined;
  }
  const colon = rest.indexOf(': ');
  return colon < 0 ? rest : rest.slice(colon + 2);
}

/** The first `count` sentences, cut where the speech chunker would cut them ("9 a.m. to 6 p.m." stays whole). */
function firstSentences(text: string, count: number): string {
  const chunker = new SentenceChunker();
  const sentences = [...chunker.push(text), ...chunker.flush()];
  return sentences.slice(0, count).join(' ');
}
