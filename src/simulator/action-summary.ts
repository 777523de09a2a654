/**
 * One-line summaries of what an action asks of the service beyond its words:
 * a speak's options, an audio clip's length, a transfer's number and caller
 * id. Shared by the simulator's screen and the scenarios' failure messages, so
 * both say the same thing the same way. Lenient: an action that breaks the
 * schema is still summarised (its wrong value shown as sent), since that is
 * exactly when someone needs to read it.
 */
import { BargeInSchema, TtsSchema, VadSchema } from '../protocol/actions.js';

/** Any action as received: the fields are whatever Hotline sent. */
export type ActionFields = { type: string; [field: string]: unknown };

const SEPARATOR = ' · ';

/** The words a speak says: its text, or its SSML without the markup. */
export function spokenText(action: ActionFields): string {
  if (typeof action.text === 'string') return action.text;
  if (typeof action.ssml === 'string') return action.ssml.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  return '';
}

/** How long a clip plays: base64 of 16 kHz mono 16-bit PCM, 32 bytes a millisecond (the WAV header is too small to count). */
export function clipDurationMs(base64: string): number {
  return Math.round((base64.length * 3) / 4 / 32);
}

/** `[barge_in: none · voice: azure de-DE-KatjaNeural · timeout 8 s · vad 800 ms · ssml]`, or '' without options. */
export function describeSpeakOptions(action: ActionFields): string {
  const parts: string[] = [];
  if (action.barge_in !== undefined) parts.push(`barge_in: ${describeBargeIn(action.barge_in)}`);
  if (action.tts !== undefined) parts.push(`voice: ${describeTts(action.tts)}`);
  if (action.user_input_timeout_seconds !== undefined) {
    const seconds = action.user_input_timeout_seconds;
    parts.push(typeof seconds === 'number' ? `timeout ${seconds} s` : `timeout ${JSON.stringify(seconds)}`);
  }
  if (action.vad !== undefined) parts.push(`vad ${describeVad(action.vad)}`);
  if (action.ssml !== undefined) parts.push('ssml');
  return parts.length === 0 ? '' : `[${parts.join(SEPARATOR)}]`;
}

/** `none`, `minimum_characters 12`, `immediate after 500 ms`. */
export function describeBargeIn(value: unknown): string {
  const parsed = BargeInSchema.safeParse(value);
  if (!parsed.success) return JSON.stringify(value);
  const { strategy, minimum_characters: minimum, allow_after_ms: after } = parsed.data;
  return [strategy, minimum === undefined ? '' : ` ${minimum}`, after === undefined ? '' : ` after ${after} ms`].join('');
}

function describeTts(value: unknown): string {
  const parsed = TtsSchema.safeParse(value);
  if (!parsed.success) return JSON.stringify(value);
  const { provider, language } = parsed.data;
  const voice = typeof parsed.data.voice === 'object' ? parsed.data.voice.name : parsed.data.voice;
  // An Azure voice name begins with its language; saying it twice adds nothing.
  const showLanguage = language !== undefined && !(voice ?? '').startsWith(language);
  return [provider, voice, showLanguage ? language : undefined].filter((part) => part !== undefined).join(' ');
}

function describeVad(value: unknown): string {
  const parsed = VadSchema.safeParse(value);
  return parsed.success ? `${parsed.data.end_of_turn_silence_ms} ms` : JSON.stringify(value);
}

/** `clip 1250 ms [barge_in: none]` */
export function describeAudio(action: ActionFields): string {
  const clip = typeof action.audio === 'string' && action.audio !== '' ? `clip ${clipDurationMs(action.audio)} ms` : 'clip (no audio)';
  return action.barge_in === undefined ? clip : `${clip} [barge_in: ${describeBargeIn(action.barge_in)}]`;
}

/** `→ 4930999999 · caller id "Hotline" 4915112345678 · rings 30 s`; the number dialled in brackets when it differs from target. */
export function describeTransfer(action: ActionFields): string {
  const target = typeof action.target === 'string' ? action.target : undefined;
  const number = typeof action.target_phone_number === 'string' ? action.target_phone_number : undefined;
  let where = target ?? number ?? '(no target)';
  if (target !== undefined && number !== undefined && number !== target) where = `${target} (dials ${number})`;
  const parts = [`→ ${where}`];
  const name = action.caller_id_name;
  const callerNumber = action.caller_id_number;
  if (name !== undefined || callerNumber !== undefined) {
    const shown = [name === undefined ? undefined : JSON.stringify(name), callerNumber === undefined ? undefined : String(callerNumber)];
    parts.push(`caller id ${shown.filter((part) => part !== undefined).join(' ')}`);
  }
  if (action.timeout !== undefined) {
    parts.push(typeof action.timeout === 'number' ? `rings ${action.timeout} s` : `rings ${JSON.stringify(action.timeout)}`);
  }
  return parts.join(SEPARATOR);
}

/** `→ 4915112345678 · "Find us at 12 Market Street…"`: whom a text message goes to, and what it says. */
export function describeSms(action: ActionFields): string {
  const to = typeof action.phone_number === 'string' ? action.phone_number : JSON.stringify(action.phone_number ?? '(no number)');
  const message = typeof action.message === 'string' ? JSON.stringify(action.message) : '(no message)';
  return `→ ${to}${SEPARATOR}${message}`;
}
