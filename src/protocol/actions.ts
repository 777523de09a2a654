import { z } from 'zod';

/**
 * Actions Hotline sends. Strict objects: what leaves Hotline is exactly what
 * the spec names, so a typo can never reach the voice service.
 */

const sessionId = z.string().min(1);

export const SpeakActionSchema = z.strictObject({
  type: z.literal('speak'),
  session_id: sessionId,
  text: z.string().min(1),
  // Shape not defined by the spec; passed through when configured.
  tts: z.record(z.string(), z.unknown()).optional(),
});

export const AudioActionSchema = z.looseObject({
  type: z.literal('audio'),
  session_id: sessionId,
});

export const HangupActionSchema = z.strictObject({
  type: z.literal('hangup'),
  session_id: sessionId,
});

export const TransferActionSchema = z.strictObject({
  type: z.literal('transfer'),
  session_id: sessionId,
  target: z.string().min(1),
});

export const ActionSchema = z.discriminatedUnion('type', [
  SpeakActionSchema,
  AudioActionSchema,
  HangupActionSchema,
  TransferActionSchema,
]);

export type SpeakAction = z.infer<typeof SpeakActionSchema>;
export type HangupAction = z.infer<typeof HangupActionSchema>;
export type TransferAction = z.infer<typeof TransferActionSchema>;
export type Action = z.infer<typeof ActionSchema>;
