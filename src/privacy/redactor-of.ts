import { keepWords, type Redact } from '../call/ports/redaction.js';
import { createRedactor, type RedactionOptions } from './redaction.js';

/** The configuration's redaction as the call core takes it: the words in, the words to write out. */
export function redactorOf(options: RedactionOptions): Redact {
  const redactor = createRedactor(options);
  if (!redactor.active) return keepWords;
  return (text) => redactor.redact(text).text;
}
