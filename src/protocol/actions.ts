import { z } from 'zod';

/**
 * Actions Hotline sends. Strict objects: what leaves Hotline is exactly what
 * the voice service accepts — the spec's fields, and the production service's
 * own (sipgate AI Flow: its SDK, its n8n nodes and its documentation) — so a
 * typo can never reach the service.
 */

const sessionId = z.string().min(1);
const nonEmpty = z.string().min(1);

/** The voice a speak is read in. Azure names a voice and its language; ElevenLabs a voice id, or `{name}`. */
export const TtsSchema = z.discriminatedUnion('provider', [
  z.strictObject({ provider: z.literal('azure'), language: nonEmpty.optional(), voice: nonEmpty.optional() }),
  z.strictObject({
    provider: z.literal('eleven_labs'),
    voice: z.union([nonEmpty, z.strictObject({ name: nonEmpty })]).optional(),
    language: nonEmpty.optional(),
  }),
]);

/**
 * Whether the caller's voice stops the playback: `none` never (a legal notice,
 * a goodbye), `manual` only through Hotline's `barge_in` action, `immediate`
 * at the first sound, `minimum_characters` once that much was recognised.
 */
export const BargeInSchema = z.strictObject({
  strategy: z.enum(['none', 'manual', 'minimum_characters', 'immediate']),
  minimum_characters: z.int().min(1).max(1000).optional(),
  /** The speech cannot be interrupted during its first this-many milliseconds. */
  allow_after_ms: z.int().min(0).max(600_000).optional(),
});

/** How long the caller's silence ends their turn, for the answer to this speak. */
export const VadSchema = z.strictObject({
  end_of_turn_silence_ms: z.int().min(150).max(2000),
});

/** The options of a speak (and, for barge_in, of an audio) beyond what is said. */
export const SpeakOptionsSchema = z.strictObject({
  tts: TtsSchema.optional(),
  barge_in: BargeInSchema.optional(),
  vad: VadSchema.optional(),
  /** The service reports user_input_timeout when the caller says nothing this long after the playback. */
  user_input_timeout_seconds: z.number().positive().max(3600).optional(),
});

export const SpeakActionSchema = z
  .strictObject({
    type: z.literal('speak'),
    session_id: sessionId,
    // The spec's one field; the production service also takes SSML in `ssml` instead.
    text: nonEmpty.optional(),
    ssml: nonEmpty.optional(),
    ...SpeakOptionsSchema.shape,
  })
  .refine((a) => (a.text === undefined) !== (a.ssml === undefined), { message: 'a speak carries either text or ssml' });

/** A pre-recorded clip: base64 of a 16 kHz mono 16-bit PCM WAV file. */
export const AudioActionSchema = z.strictObject({
  type: z.literal('audio'),
  session_id: sessionId,
  audio: nonEmpty,
  barge_in: BargeInSchema.optional(),
});

export const HangupActionSchema = z.strictObject({
  type: z.literal('hangup'),
  session_id: sessionId,
});

/**
 * The spec names `target`; the production service's SDK requires
 * `target_phone_number` with the caller id to show (`caller_id_name`,
 * `caller_id_number`) and takes a ring `timeout` in seconds. Hotline sends both.
 */
export const TransferActionSchema = z
  .strictObject({
    type: z.literal('transfer'),
    session_id: sessionId,
    target: nonEmpty.optional(),
    target_phone_number: nonEmpty.optional(),
    caller_id_name: nonEmpty.optional(),
    caller_id_number: nonEmpty.optional(),
    timeout: z.int().min(5).max(120).optional(),
  })
  .refine((a) => a.target !== undefined || a.target_phone_number !== undefined, {
    message: 'a transfer names target or target_phone_number',
  })
  .refine((a) => a.target_phone_number === undefined || (a.caller_id_name !== undefined && a.caller_id_number !== undefined), {
    message: 'target_phone_number needs caller_id_name and caller_id_number',
  });

/** Stops the playback in progress (production service); usually followed by a new speak. */
export const BargeInActionSchema = z.strictObject({
  type: z.literal('barge_in'),
  session_id: sessionId,
});

/**
 * Production service: how the caller's speech is recognised from here on. Each field given replaces
 * the call's setting whole; its documentation's limits: 1–4 BCP-47 languages, at most 100
 * vocabulary terms of at most 200 characters.
 */
export const ConfigureTranscriptionActionSchema = z.strictObject({
  type: z.literal('configure_transcription'),
  session_id: sessionId,
  provider: z.enum(['AZURE', 'DEEPGRAM', 'ELEVEN_LABS']).optional(),
  languages: z.array(nonEmpty).min(1).max(4).optional(),
  custom_vocabulary: z.array(nonEmpty.max(200)).min(1).max(100).optional(),
  vad: VadSchema.optional(),
});

/** Production service (enabled by its support): a text message to a number. */
export const SendSmsActionSchema = z.strictObject({
  type: z.literal('send_sms'),
  session_id: sessionId,
  phone_number: nonEmpty,
  message: nonEmpty,
});

export const ActionSchema = z.discriminatedUnion('type', [
  SpeakActionSchema,
  AudioActionSchema,
  HangupActionSchema,
  TransferActionSchema,
  BargeInActionSchema,
  ConfigureTranscriptionActionSchema,
  SendSmsActionSchema,
]);

/** One answer to the service: an action, or (production service, opt-in) several, carried out in order. */
export const AnswerSchema = z.union([ActionSchema, z.array(ActionSchema).min(1).max(16)]);

export type Tts = z.infer<typeof TtsSchema>;
export type BargeIn = z.infer<typeof BargeInSchema>;
export type Vad = z.infer<typeof VadSchema>;
export type SpeakOptions = z.infer<typeof SpeakOptionsSchema>;
export type SpeakAction = z.infer<typeof SpeakActionSchema>;
export type AudioAction = z.infer<typeof AudioActionSchema>;
export type HangupAction = z.infer<typeof HangupActionSchema>;
export type TransferAction = z.infer<typeof TransferActionSchema>;
export type BargeInAction = z.infer<typeof BargeInActionSchema>;
export type Action = z.infer<typeof ActionSchema>;
export type Answer = z.infer<typeof AnswerSchema>;
