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

export const UserSpeakSchema = z
  .looseObject({
    type: z.literal('user_speak'),
    session: SessionSchema,
    text: text.optional(),
    // Older service versions called the recognised text `transcript`.
    transcript: text.optional(),
    barged_in: z.boolean().nullish(),
  })
  .refine((e) => e.text !== undefined || e.transcript !== undefined, {
    message: 'user_speak needs text (or transcript)',
    path: ['text'],
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

export const EventSchemas = {
  session_start: SessionStartSchema,
  user_speak: UserSpeakSchema,
  assistant_speak: AssistantSpeakSchema,
  assistant_speech_ended: AssistantSpeechEndedSchema,
  session_end: SessionEndSchema,
  user_speech_started: UserSpeechStartedSchema,
} as const;

export type EventType = keyof typeof EventSchemas;
export type SessionStartEvent = z.infer<typeof SessionStartSchema>;
export type UserSpeakEvent = z.infer<typeof UserSpeakSchema>;
export type AssistantSpeakEvent = z.infer<typeof AssistantSpeakSchema>;
export type AssistantSpeechEndedEvent = z.infer<typeof AssistantSpeechEndedSchema>;
export type SessionEndEvent = z.infer<typeof SessionEndSchema>;
export type UserSpeechStartedEvent = z.infer<typeof UserSpeechStartedSchema>;
export type VoiceEvent =
  | UserSpeechStartedEvent
  | SessionStartEvent
  | UserSpeakEvent
  | AssistantSpeakEvent
  | AssistantSpeechEndedEvent
  | SessionEndEvent;

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EventSchemas, type);
}

/** Just enough of any event to route it: newer event types still carry these. */
export const EnvelopeSchema = z.looseObject({
  type: z.string().min(1).max(100),
  session: z.looseObject({ id: z.string().trim().min(1).max(200) }),
});
