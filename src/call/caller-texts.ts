/**
 * The text messages of one call: the capability a tool is given (ToolRunContext.textCaller), owned
 * here so that a message can only ever reach the person on the line — the number is the call's,
 * never a tool's or the model's — and never more of them than the call may send. A failure the
 * service reports (its sms_failed) becomes a note the model is told, so that it says so.
 */
import type { Logger } from '../logger.js';
import { maskNumber } from '../phone/mask-number.js';
import type { Action } from '../protocol/actions.js';
import type { SmsFailedEvent } from '../protocol/events.js';
import type { CallerText, TextSent } from './ports/business-tools.js';
import type { Redact } from './ports/redaction.js';
import type { TranscriptLog } from './ports/transcript.js';

/** How the note the model is told of a failed text message begins: the demo model and the tests look for it. */
export const TEXT_FAILED_MARK = '[The text message to the caller could not be sent';

/** The longest reason from the service the model is told. */
const REASON_MAX_CHARS = 160;

export interface CallerTextsHost {
  readonly sessionId: string;
  /** How many the call may send; 0 sends none. */
  readonly max: number;
  readonly log: Logger;
  readonly transcript: TranscriptLog;
  /** What the transcript keeps of a message: personal data taken out, as of every word written. */
  readonly redact: Redact;
  /** The person on the line (the caller inbound, the person called outbound), once the call has begun. */
  party(): string | undefined;
  ended(): boolean;
  /** The call's own way out for actions. */
  send(action: Action): void;
}

export class CallerTexts {
  private sent = 0;
  private failures = 0;
  private lastTemplate: string | undefined;

  constructor(private readonly host: CallerTextsHost) {}

  /** True while the call may send one more: texts are on, the person's number is known, the maximum not reached. */
  get available(): boolean {
    return this.sent < this.host.max && !this.host.ended() && numberToText(this.host.party()) !== undefined;
  }

  /** Sends `text` to the person on the line, if the call may; says what became of it. */
  send(text: CallerText): TextSent {
    const { host } = this;
    const max = host.max;
    if (host.ended()) return { sent: false, reason: 'ended', max };
    const to = numberToText(host.party());
    if (to === undefined) return { sent: false, reason: 'no_number', max };
    if (this.sent >= max) return { sent: false, reason: 'limit', max };
    const message = text.message.trim();
    if (message === '') return { sent: false, reason: 'empty', max };
    this.sent++;
    this.lastTemplate = text.template;
    host.send({ type: 'send_sms', session_id: host.sessionId, phone_number: to, message });
    host.transcript.append({ role: 'event', text: 'sms_sent', template: text.template, to, message: host.redact(message) });
    // Masked, and without the message: a log is no place for either.
    host.log.info({ template: text.template, to: maskNumber(to), chars: message.length }, 'text message sent');
    return { sent: true, left: max - this.sent };
  }

  /**
   * The service could not send one: written down, and the note the model is to be told — undefined
   * when it is told already (the same failure again: events may be delivered twice), or this call sent none.
   */
  failed(event: SmsFailedEvent): string | undefined {
    const reason = reasonOf(event);
    this.host.log.warn({ reason, template: this.lastTemplate }, 'the service could not send a text message');
    this.host.transcript.append({
      role: 'event',
      text: 'sms_failed',
      ...(this.lastTemplate === undefined ? {} : { template: this.lastTemplate }),
      ...(reason === undefined ? {} : { reason: this.host.redact(reason) }),
    });
    // One note for each message this call sent: a failure of none it sent (a repeat, a stray event) is no news for the model.
    if (this.failures >= this.sent) return undefined;
    this.failures++;
    return textFailedNote(reason === undefined ? undefined : this.host.redact(reason));
  }
}

/** The note the model reads, not as the caller's words: it says so, and what to do. */
export function textFailedNote(reason: string | undefined): string {
  const why = reason === undefined ? '' : ` (the service said: ${reason.replace(/[[\]]/g, '')})`;
  return `${TEXT_FAILED_MARK}${why}. This note is from Hotline, not the caller's words: tell the caller in one short sentence that the text did not go through.]`;
}

/** The number a text goes to, as the service writes numbers (digits only, no '+'); undefined when there is none (withheld). */
export function numberToText(party: string | undefined): string | undefined {
  const digits = (party ?? '').trim().replace(/^\+/, '').replace(/[\s\-./()]/g, '');
  return /^\d{3,15}$/.test(digits) ? digits : undefined;
}

/** Whatever the service gave as the reason (its field is not documented), cut short; undefined without one. */
function reasonOf(event: SmsFailedEvent): string | undefined {
  const fields = event as Record<string, unknown>;
  for (const key of ['error', 'reason', 'message', 'error_message', 'detail']) {
    const value = fields[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().replace(/\s+/g, ' ').slice(0, REASON_MAX_CHARS);
  }
  return undefined;
}
