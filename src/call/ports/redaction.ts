/**
 * Takes personal data (card numbers, IBANs, the business's own patterns) out of words before they
 * are written anywhere: the transcript, the call's record, the live view, the log. The core owns the
 * shape; `server.ts` wires in the redactor of the configuration (src/privacy/redaction.ts).
 */
export type Redact = (text: string) => string;

/** No redaction: the words as they are. */
export const keepWords: Redact = (text) => text;

/**
 * One caller utterance as it may be written, read with the caller's utterances before it in the same
 * call: a card or IBAN may be said across two of them ("4242 4242" … "4242 4242"), neither holding a
 * number on its own.
 */
export interface CallerLine {
  /** Its number within the call, from 1: what `amended` and `heldFrom` name it by. */
  readonly seq: number;
  /** What the record and the transcript keep: its own numbers out, and its part of a number it completes with the words before it. */
  readonly text: string;
  /**
   * What is shown or sent at once and never again (the log, a trace, the live view): `text`, and the
   * digits at its end that the next utterance may still turn into a number masked too.
   */
  readonly provisional: string;
  /** Earlier utterances whose end began the number this one completed: what they are to be kept as now. */
  readonly amended: readonly { readonly seq: number; readonly text: string }[];
  /**
   * The first utterance whose words may still be amended (this one, or one before it that a number
   * goes on from): what is written where it can still be changed waits from there. None: nothing waits.
   */
  readonly heldFrom: number | undefined;
}

/** A call's caller utterances, read one after another; one per call. */
export interface CallerLines {
  said(text: string): CallerLine;
}

/** Each utterance on its own: what the call core does with a plain Redact. */
export function eachOnItsOwn(redact: Redact): () => CallerLines {
  return () => {
    let seq = 0;
    return {
      said(text) {
        const redacted = redact(text);
        return { seq: ++seq, text: redacted, provisional: redacted, amended: [], heldFrom: undefined };
      },
    };
  };
}
