import { eachOnItsOwn, keepWords, type CallerLines, type Redact } from '../call/ports/redaction.js';
import { callerLinesOf } from './caller-lines.js';
import { createRedactor, type RedactionOptions } from './redaction.js';

/**
 * The same words are redacted several times as a reply ends (for the call's record, its history and
 * its transcript): the last few texts found to hold nothing to redact are remembered, so a reply's
 * words are read once. A text that did hold a number is never kept here, nor is anything written.
 */
const REMEMBERED = 16;

/** The configuration's redaction as the call core takes it: the words in, the words to write out. */
export function redactorOf(options: RedactionOptions): Redact {
  const redactor = createRedactor(options);
  if (!redactor.active) return keepWords;
  const clean = new Set<string>();
  return (text) => {
    if (clean.has(text)) return text;
    const redacted = redactor.redact(text).text;
    if (redacted === text) {
      if (clean.size >= REMEMBERED) clean.delete(clean.values().next().value!);
      clean.add(text);
    }
    return redacted;
  };
}

/** The configuration's redaction of a call's caller utterances, read one after another (caller-lines.ts); a reader per call. */
export function callerRedactionOf(options: RedactionOptions): () => CallerLines {
  const redactor = createRedactor(options);
  return redactor.active ? callerLinesOf(redactor) : eachOnItsOwn(keepWords);
}
