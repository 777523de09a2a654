/**
 * Takes personal data (card numbers, IBANs, the business's own patterns) out of words before they
 * are written anywhere: the transcript, the call's record, the live view, the log. The core owns the
 * shape; `server.ts` wires in the redactor of the configuration (src/privacy/redaction.ts).
 */
export type Redact = (text: string) => string;

/** No redaction: the words as they are. */
export const keepWords: Redact = (text) => text;
