import { eachOnItsOwn, keepWords, type CallerLines, type Redact } from '../call/ports/redaction.js';
import { callerLinesOf } from './caller-lines.js';
import { createRedactor, type RedactionOptions } from './redaction.js';

/** The configuration's redaction as the call core takes it: the words in, the words to write out. */
export function redactorOf(options: RedactionOptions): Redact {
  const redactor = createRedactor(options);
  if (!redactor.active) return keepWords;
  return (text) => redactor.redact(text).text;
}

/** The configuration's redaction of a call's caller utterances, read one after another (caller-lines.ts); a reader per call. */
export function callerRedactionOf(options: RedactionOptions): () => CallerLines {
  const redactor = createRedactor(options);
  return redactor.active ? callerLinesOf(redactor) : eachOnItsOwn(keepWords);
}
