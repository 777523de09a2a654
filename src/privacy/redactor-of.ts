import { eachOnItsOwn, keepWords, type CallerLines, type Redact } from '../call/ports/redaction.js';
import { callerLinesOf } from './caller-lines.js';
import { createRedactor, type RedactionOptions } from './redaction.js';

/**
 * The same words are redacted several times as a reply ends (for the call's record, its history and
 * its transcript): the last few answers are remembered, so a reply's words are read once.
 */
const REMEMBERED = 16;

/** The configuration's redaction as the call core takes it: the words in, the words to write out. */
export function redactorOf(options: RedactionOptions): Redact {
  const redactor = createRedactor(options);
  if (!redactor.active) return keepWords;
  const recent = new Map<string, string>();
  return (text) => {
    const known = recent.get(text);
    if (known !== undefined) return known;
    const redacted = redactor.redact(text).text;
    if (recent.size >= REMEMBERED) recent.delete(recent.keys().next().value!);
    recent.set(text, redacted);
    return redacted;
  };
}

/** The configuration's redaction of a call's caller utterances, read one after another (caller-lines.ts); a reader per call. */
export function callerRedactionOf(options: RedactionOptions): () => CallerLines {
  const redactor = createRedactor(options);
  return redactor.active ? callerLinesOf(redactor) : eachOnItsOwn(keepWords);
}
