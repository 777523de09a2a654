import { z } from 'zod';

/**
 * Events the voice service sends. Schemas are loose objects: a long-lived
 * client must accept fields that newer service versions add, and keep them.
 */

// Phone numbers are documented as digit strings; some senders use numbers.
const phoneNumber = z.union([z.string(), z.number()]).transform(String);

export const SessionSchema = z.looseObject({
  id: z.string().trim().min(1).max(200),
  account_id: z.union([z.string(), z.number()]).transform(String).optional(),
  phone_number: phoneNumber.optional(),
  // Lenient: an unknown direction is kept as text, not rejected.
  direction: z.string().optional(),
  from_phone_number: phoneNumber.optional(),
  to_phone_number: phoneNumber.optional(),
});
export type Session = z.infer<typeof SessionSchema>;

/** The longest recognised utterance accepted; a caller cannot say more in one turn. */
export const MAX_TEXT_CHARS = 10_000;
const text = z.string().max(MAX_TEXT_CHARS);

export const SessionStartSchema = z.looseObject({
  type: z.literal('session_start'),
  session: SessionSchema,
});

/**
 * The caller's words. Older service versions called the text `transcript`; the
 * production service also sends a bare `{type, session, barged_in: true}`
 * with no text at all (an interruption before anything was recognised): the
 * text is then ''.
 */
export const UserSpeakSchema = z
  .looseObject({
    type: z.literal('user_speak'),
    session: SessionSchema,
    text: text.optional(),
    transcript: text.optional(),
    barged_in: z.boolean().nullish(),
    /** The language the recogniser heard (BCP-47), where the service says; a wrong type is dropped, not refused. */
    language: z.string().trim().min(2).max(35).optional().catch(undefined),
  })
  .transform((e) => ({ ...e, text: e.text ?? e.transcript ?? '', barged_in: e.barged_in ?? false }));

export const AssistantSpeakSchema = z.looseObject({
  type: z.literal('assistant_speak'),
  session: SessionSchema,
  text: text.optional(),
  duration_ms: z.number().nonnegative().finite().optional(),
  speech_started_at: z.number().optional(),
});

export const AssistantSpeechEndedSchema = z.looseObject({
  type: z.literal('assistant_speech_ended'),
  session: SessionSchema,
});

export const SessionEndSchema = z.looseObject({
  type: z.literal('session_end'),
  session: SessionSchema,
  // The spec lists a reason; the production service's docs do not.
  reason: z.string().optional(),
});

/**
 * Not in the spec: the production service's WebSocket sends it when voice
 * activity starts, before the words are recognised. An early barge-in hint.
 */
export const UserSpeechStartedSchema = z.looseObject({
  type: z.literal('user_speech_started'),
  session: SessionSchema,
});

/**
 * Not in the spec: sent when a speak carried `user_input_timeout_seconds` and
 * the caller stayed silent after its playback.
 */
export const UserInputTimeoutSchema = z.looseObject({
  type: z.literal('user_input_timeout'),
  session: SessionSchema,
});

/** The keys of a phone keypad; A–D exist on some (and are sent upper-case here). */
export const DTMF_KEYS = '0123456789*#ABCD';
const DTMF_DIGIT_MESSAGE = 'digit must be one keypad key: 0-9, * or # (or A-D)';

/** One keypad key, sent as a string or (by some senders) a number; always a one-character string after parsing. */
export const DtmfDigitSchema = z
  .union([z.string().max(20), z.number()], { error: DTMF_DIGIT_MESSAGE })
  .transform((digit) => String(digit).trim().toUpperCase())
  .refine((digit) => digit.length === 1 && DTMF_KEYS.includes(digit), { error: DTMF_DIGIT_MESSAGE });

/** Not in the spec: the caller pressed a key on the keypad. */
export const DtmfReceivedSchema = z.looseObject({
  type: z.literal('dtmf_received'),
  session: SessionSchema,
  digit: DtmfDigitSchema,
});

/**
 * Not in the spec: the older form of an interruption, with the caller's words
 * in `text` (or `transcript`, as user_speak) or without any. Comes out with
 * `text` trimmed, '' when the caller's words are not known.
 */
export const UserBargeInSchema = z
  .looseObject({
    type: z.literal('user_barge_in'),
    session: SessionSchema,
    text: text.nullish(),
    transcript: text.nullish(),
  })
  .transform((e) => ({ ...e, text: (e.text ?? e.transcript ?? '').trim() }));

/** Not in the spec: a `send_sms` action failed. Whatever it carries is kept for the log. */
export const SmsFailedSchema = z.looseObject({
  type: z.literal('sms_failed'),
  session: SessionSchema,
});

export const EventSchemas = {
  session_start: SessionStartSchema,
  user_speak: UserSpeakSchema,
  assistant_speak: AssistantSpeakSchema,
  assistant_speech_ended: AssistantSpeechEndedSchema,
  session_end: SessionEndSchema,
  user_speech_started: UserSpeechStartedSchema,
  user_input_timeout: UserInputTimeoutSchema,
  dtmf_received: DtmfReceivedSchema,
  user_barge_in: UserBargeInSchema,
  sms_failed: SmsFailedSchema,
} as const;

export type EventType = keyof typeof EventSchemas;
export type SessionStartEvent = z.infer<typeof SessionStartSchema>;
export type UserSpeakEvent = z.infer<typeof UserSpeakSchema>;
export type AssistantSpeakEvent = z.infer<typeof AssistantSpeakSchema>;
export type AssistantSpeechEndedEvent = z.infer<typeof AssistantSpeechEndedSchema>;
export type SessionEndEvent = z.infer<typeof SessionEndSchema>;
export type UserSpeechStartedEvent = z.infer<typeof UserSpeechStartedSchema>;
export type UserInputTimeoutEvent = z.infer<typeof UserInputTimeoutSchema>;
export type DtmfReceivedEvent = z.infer<typeof DtmfReceivedSchema>;
export type UserBargeInEvent = z.infer<typeof UserBargeInSchema>;
export type SmsFailedEvent = z.infer<typeof SmsFailedSchema>;
export type VoiceEvent =
  | UserSpeechStartedEvent
  | SessionStartEvent
  | UserSpeakEvent
  | AssistantSpeakEvent
  | AssistantSpeechEndedEvent
  | SessionEndEvent
  | UserInputTimeoutEvent
  | DtmfReceivedEvent
  | UserBargeInEvent
  | SmsFailedEvent;

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EventSchemas, type);
}

/** Just enough of any event to route it: newer event types still carry these. */
export const EnvelopeSchema = z.looseObject({
  type: z.string().min(1).max(100),
  session: z.looseObject({ id: z.string().trim().min(1).max(200) }),
});
