import { HANGUP, SPEAK, TRANSFER } from '../call/turn/tools.js';
import { DO_NOT_CALL } from '../campaigns/do-not-call-tool.js';
import { SEND_SMS } from './sms-tool.js';

/** What the model may call a function: OpenAI's rule. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The tools Hotline offers itself: the call's own, the campaigns' stop
 * list and the text messages. No business tool may take one of these names in any spelling: a
 * `do_not_call` file would replace the stop list, and a model offered both
 * `transfer` and `Transfer` may call either.
 */
export const RESERVED_TOOL_NAMES: readonly string[] = [SPEAK, TRANSFER, HANGUP, DO_NOT_CALL, SEND_SMS];

/**
 * Names are one tool's if they are equal ignoring case: a model that mixes
 * up `Lookup` and `lookup` calls the wrong system.
 */
export function nameKey(name: string): string {
  return name.toLowerCase();
}

/** The built-in tool `name` would shadow, if any. */
export function reservedName(name: string): string | undefined {
  return RESERVED_TOOL_NAMES.find((reserved) => nameKey(reserved) === nameKey(name));
}

/** Why `name` cannot name a business tool, or undefined if it can. */
export function toolNameProblem(name: string): string | undefined {
  if (!TOOL_NAME.test(name)) return `"${name}" is no tool name: use 1 to 64 letters, digits, _ and -`;
  const reserved = reservedName(name);
  if (reserved !== undefined) return `"${name}" is the name of one of Hotline's own tools (${RESERVED_TOOL_NAMES.join(', ')}), in any spelling`;
  return undefined;
}
