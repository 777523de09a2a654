/**
 * Takes personal data (card numbers, IBANs, the business's own patterns) out of words before they
 * are written anywhere: the transcript, the call's record, the live view, the log. The core owns the
 * shape; `server.ts` wires in the redactor of the configuration (src/privacy/redaction.ts).
 */
import type { CallActivity, CallActivityObserver } from './call-activity.js';

export type Redact = (text: string) => string;

/** No redaction: the words as they are. */
export const keepWords: Redact = (text) => text;

/** A live view that is only ever told redacted words. */
export function redactedActivity(observer: CallActivityObserver | undefined, redact: Redact): CallActivityObserver | undefined {
  if (!observer || redact === keepWords) return observer;
  const words = (text: string | undefined): string | undefined => (text === undefined ? undefined : redact(text));
  return {
    changed: (activity: CallActivity) => observer.changed({ ...activity, callerSaid: words(activity.callerSaid), agentSaid: words(activity.agentSaid) }),
    ended: (sessionId) => observer.ended(sessionId),
  };
}
