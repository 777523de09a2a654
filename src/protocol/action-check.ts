import type { z } from 'zod';
import { ActionSchema, BargeInSchema, TtsSchema, VadSchema, type Action, type SpeakAction } from './actions.js';

export type ActionCheck = { success: true; data: Action } | { success: false; error: z.ZodError };

/**
 * ActionSchema's verdict on an action about to leave Hotline. Every sentence
 * of a streamed reply is a speak, and zod's run over one cost more than the
 * rest of the way from the LLM's token to the caller's socket: a speak is
 * checked here by hand, field by field as its schema does, and its voice,
 * barge-in and end-of-turn options once per object — they come from a
 * prompt's style, deeply frozen (prompts/speak-style.ts) and shared by every
 * speak that uses it. Anything else, and any speak that does not pass,
 * goes to the schema itself, so what is refused and why stays zod's.
 */
export function checkAction(action: Action): ActionCheck {
  if (action.type === 'speak' && speakPasses(action)) return { success: true, data: action };
  return ActionSchema.safeParse(action);
}

const SPEAK_KEYS = new Set(['type', 'session_id', 'text', 'ssml', 'tts', 'barge_in', 'vad', 'user_input_timeout_seconds']);
/** Frozen option objects their schema has passed: frozen, they cannot have changed since. */
const passedOptions = new WeakSet<object>();

function speakPasses(action: SpeakAction): boolean {
  for (const key in action) if (!SPEAK_KEYS.has(key)) return false;
  const { session_id: session, text, ssml, user_input_timeout_seconds: timeout } = action;
  if (typeof session !== 'string' || session === '') return false;
  // Either text or ssml, never both: the schema's refinement.
  if (text === undefined ? !isNonEmpty(ssml) : ssml !== undefined || !isNonEmpty(text)) return false;
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= 3600)) return false;
  return optionPasses(action.tts, TtsSchema) && optionPasses(action.barge_in, BargeInSchema) && optionPasses(action.vad, VadSchema);
}

function isNonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

function optionPasses(option: object | undefined, schema: z.ZodType): boolean {
  if (option === undefined) return true;
  if (passedOptions.has(option)) return true;
  if (!deeplyFrozen(option) || !schema.safeParse(option).success) return false;
  passedOptions.add(option);
  return true;
}

function deeplyFrozen(value: object): boolean {
  if (!Object.isFrozen(value)) return false;
  for (const inner of Object.values(value)) if (typeof inner === 'object' && inner !== null && !deeplyFrozen(inner)) return false;
  return true;
}
