/**
 * Whether an action is the one an expectation describes, and how to say what
 * was expected. Options are compared in part: only the fields a scenario
 * names count, so `barge_in: {strategy: none}` holds whatever else the speak's
 * barge_in says.
 */
import { spokenText } from '../simulator/action-summary.js';
import type { ReceivedAction } from '../testing/voice-service-client.js';
import { quote } from './action-log.js';
import { expressionOf } from './pattern.js';
import type { SpeakMatcher, TextMatcher, TransferMatcher } from './schema.js';

export function speakMatches(action: ReceivedAction, matcher: SpeakMatcher): boolean {
  if (!textMatches(spokenText(action), matcher)) return false;
  if (!ssmlMatches(action.ssml, matcher.ssml)) return false;
  if (matcher.barge_in !== undefined && !hasFields(action.barge_in, matcher.barge_in)) return false;
  if (matcher.vad !== undefined && !hasFields(action.vad, matcher.vad)) return false;
  if (matcher.tts !== undefined && !ttsMatches(action.tts, matcher.tts)) return false;
  const timeout = matcher.user_input_timeout_seconds;
  return timeout === undefined || action.user_input_timeout_seconds === timeout;
}

export function describeSpeakMatcher(matcher: SpeakMatcher): string {
  const parts = describeText(matcher);
  const { ssml } = matcher;
  if (ssml === true) parts.push('in SSML');
  else if (ssml === false) parts.push('in plain text');
  else if (ssml !== undefined) parts.push(`with SSML ${describeText(ssml).join(', ')}`);
  for (const key of ['barge_in', 'tts', 'vad', 'user_input_timeout_seconds'] as const) {
    if (matcher[key] !== undefined) parts.push(`with ${key} ${inline(matcher[key])}`);
  }
  return parts.length === 0 ? 'a speak' : `a speak ${parts.join(', ')}`;
}

export function transferMatches(action: ReceivedAction, matcher: TransferMatcher): boolean {
  return hasFields(action, matcher);
}

/** `a transfer to 4930999999 with caller_id_name "Hotline", timeout 30` */
export function describeTransferMatcher(matcher: TransferMatcher): string {
  const { target, ...fields } = matcher;
  const shown = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key} ${inline(value)}`);
  return ['a transfer', target === undefined ? '' : ` to ${target}`, shown.length === 0 ? '' : ` with ${shown.join(', ')}`].join('');
}

export function textMatches(text: string, matcher: TextMatcher): boolean {
  const lower = text.toLowerCase();
  if (!containsOf(matcher).every((part) => lower.includes(part.toLowerCase()))) return false;
  if (matcher.matches !== undefined && !expressionOf(matcher.matches).test(text)) return false;
  if (matcher.equals !== undefined && text.trim() !== matcher.equals.trim()) return false;
  return true;
}

/** `containing "a" and "b"`, `matching /x/`, `equal to "…"`: one part per field given. */
export function describeText(matcher: TextMatcher): string[] {
  const parts: string[] = [];
  const contains = containsOf(matcher);
  if (contains.length > 0) parts.push(`containing ${contains.map(quote).join(' and ')}`);
  if (matcher.matches !== undefined) parts.push(`matching ${matcher.matches.startsWith('/') ? matcher.matches : `/${matcher.matches}/`}`);
  if (matcher.equals !== undefined) parts.push(`equal to ${quote(matcher.equals)}`);
  return parts;
}

function containsOf(matcher: TextMatcher): string[] {
  if (matcher.contains === undefined) return [];
  return Array.isArray(matcher.contains) ? matcher.contains : [matcher.contains];
}

function ssmlMatches(ssml: unknown, matcher: SpeakMatcher['ssml']): boolean {
  if (matcher === undefined) return true;
  if (typeof matcher === 'boolean') return matcher === (ssml !== undefined);
  return typeof ssml === 'string' && textMatches(ssml, matcher);
}

function ttsMatches(tts: unknown, matcher: NonNullable<SpeakMatcher['tts']>): boolean {
  if (!isRecord(tts)) return false;
  const { voice, ...rest } = matcher;
  if (!hasFields(tts, rest)) return false;
  if (voice === undefined) return true;
  // ElevenLabs names a voice as `{name}` too.
  return tts.voice === voice || (isRecord(tts.voice) && tts.voice.name === voice);
}

/** Every field given (and defined) in `wanted` is the same in `actual`. */
function hasFields(actual: unknown, wanted: Record<string, unknown>): boolean {
  if (!isRecord(actual)) return false;
  return Object.entries(wanted).every(([key, value]) => value === undefined || actual[key] === value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a scenario would write it: `{strategy: none}`, `8`, `"Hotline"`. */
function inline(value: unknown): string {
  if (isRecord(value)) {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${fields.map(([key, v]) => `${key}: ${typeof v === 'string' ? v : inline(v)}`).join(', ')}}`;
  }
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
