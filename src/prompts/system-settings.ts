import { isScalar, type Document } from 'yaml';
import { z } from 'zod';
import { freezeStyle, STYLE_SHAPE, styleFrom, type SpeakStyle } from './speak-style.js';

/** A named transfer destination, with what the callee's phone shows and how long it rings. */
export interface TransferTargetSettings {
  number: string;
  callerIdName?: string;
  callerIdNumber?: string;
  timeoutSeconds?: number;
}

/** Caller id and ring timeout for every transfer whose target does not set its own. */
export interface TransferSettings {
  callerIdName?: string;
  callerIdNumber?: string;
  timeoutSeconds?: number;
}

export interface SilenceSettings {
  /** 0: the caller's silence is never asked about. */
  timeoutSeconds: number;
  /** How often "are you still there?" is asked before Hotline says goodbye. */
  reprompts: number;
}

export interface KeypadSettings {
  /** undefined: no key ends the input, only the pause or max_digits. */
  endKey: '#' | '*' | undefined;
  /** 0: a pause never ends the input, only the end key or max_digits. */
  pauseMs: number;
  maxDigits: number;
}

export const AUDIO_NAMES = ['transfer', 'hold'] as const;
export type AudioName = (typeof AUDIO_NAMES)[number];

/** What system.md's front matter may set for the calls that use it. */
export interface PromptSettings {
  model?: string;
  temperature?: number;
  /** Named transfer destinations the model may choose from. */
  transferTargets: Record<string, TransferTargetSettings>;
  transfer: TransferSettings;
  /** Speak options for every line, unless the line's own file or a built-in default says otherwise. */
  style: SpeakStyle;
  /** Whether lines are sent as SSML rather than plain text. */
  ssml: boolean;
  silence: SilenceSettings;
  keypad: KeypadSettings;
}

/** Clip paths as written in system.md, relative to the prompts folder; not yet read. */
export type AudioPaths = Partial<Record<AudioName, string>>;

export const DEFAULT_SETTINGS: PromptSettings = freezeSettings({
  transferTargets: {},
  transfer: {},
  style: {},
  ssml: false,
  silence: { timeoutSeconds: 0, reprompts: 2 },
  keypad: { endKey: '#', pauseMs: 3000, maxDigits: 20 },
});

// Unquoted, a phone number is a YAML integer; its text as written is recovered later.
const NOT_A_NUMBER = 'must be a phone number';
const phoneNumber = z.union([z.string().trim().min(1), z.int().nonnegative({ error: NOT_A_NUMBER })], { error: NOT_A_NUMBER });

/** What the phone a call is transferred to shows, and how long it rings: set for all transfers or per target. */
const CALLER_ID = {
  caller_id_name: z.string({ error: 'must be the name the callee sees, such as "Hotline"' }).trim().min(1).optional(),
  caller_id_number: phoneNumber.optional(),
  // The voice service rings a transfer target for 5 to 120 seconds.
  timeout_seconds: z.int().min(5).max(120).optional(),
};

const transferTarget = z.union([phoneNumber, z.strictObject({ number: phoneNumber, ...CALLER_ID })], {
  error: 'must be a phone number, or { number, caller_id_name, caller_id_number, timeout_seconds }',
});

const clipPath = z.string({ error: 'must name a WAV file in the prompts folder, such as audio/transfer-chime.wav' }).trim().min(1);

export const SYSTEM_SCHEMA = z.object({
  model: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  transfer_targets: z.record(z.string().trim().min(1), transferTarget).optional(),
  transfer: z.strictObject(CALLER_ID).optional(),
  ...STYLE_SHAPE,
  ssml: z.boolean().optional(),
  silence: z
    .strictObject({
      timeout_seconds: z.int().min(0).max(60).optional(),
      reprompts: z.int().min(0).max(5).optional(),
    })
    .optional(),
  keypad: z
    .strictObject({
      end_key: z
        .enum(['#', '*', 'none'], { error: 'must be "#", "*" or "none", in quotes (an unquoted # starts a YAML comment)' })
        .optional(),
      pause_ms: z
        .int()
        .refine((ms) => ms === 0 || (ms >= 500 && ms <= 15_000), {
          error: 'must be 0 (only the end key or max_digits ends the input) or 500 to 15000',
        })
        .optional(),
      max_digits: z.int().min(1).max(64).optional(),
    })
    .optional(),
  // Not strict: a clip name Hotline does not play is warned about, not fatal.
  audio: z.object({ transfer: clipPath.optional(), hold: clipPath.optional() }).optional(),
});

type SystemFrontMatter = z.infer<typeof SYSTEM_SCHEMA>;
type CallerIdFrontMatter = NonNullable<SystemFrontMatter['transfer']>;

/** Validated front matter to settings; `doc` gives back numbers as they were written. */
export function settingsFrom(data: SystemFrontMatter, doc: Document): { settings: PromptSettings; audio: AudioPaths } {
  const asWritten = (value: string | number, at: readonly string[]): string =>
    typeof value === 'string' ? value : numberAsWritten(doc, at, value);
  /** Only what was written: an absent caller id falls back to the global one, which an explicit undefined would hide. */
  const callerId = (written: CallerIdFrontMatter, at: readonly string[]): TransferSettings => {
    const transfer: TransferSettings = {};
    if (written.caller_id_name !== undefined) transfer.callerIdName = written.caller_id_name;
    if (written.caller_id_number !== undefined) transfer.callerIdNumber = asWritten(written.caller_id_number, [...at, 'caller_id_number']);
    if (written.timeout_seconds !== undefined) transfer.timeoutSeconds = written.timeout_seconds;
    return transfer;
  };
  const settings: PromptSettings = {
    transferTargets: {},
    transfer: data.transfer ? callerId(data.transfer, ['transfer']) : {},
    style: styleFrom(data),
    ssml: data.ssml ?? DEFAULT_SETTINGS.ssml,
    silence: {
      timeoutSeconds: data.silence?.timeout_seconds ?? DEFAULT_SETTINGS.silence.timeoutSeconds,
      reprompts: data.silence?.reprompts ?? DEFAULT_SETTINGS.silence.reprompts,
    },
    keypad: {
      endKey: endKey(data.keypad?.end_key),
      pauseMs: data.keypad?.pause_ms ?? DEFAULT_SETTINGS.keypad.pauseMs,
      maxDigits: data.keypad?.max_digits ?? DEFAULT_SETTINGS.keypad.maxDigits,
    },
  };
  if (data.model !== undefined) settings.model = data.model;
  if (data.temperature !== undefined) settings.temperature = data.temperature;
  for (const [name, target] of Object.entries(data.transfer_targets ?? {})) {
    const at = ['transfer_targets', name];
    settings.transferTargets[name.trim()] =
      typeof target === 'object'
        ? { number: asWritten(target.number, [...at, 'number']), ...callerId(target, at) }
        : { number: asWritten(target, at) };
  }
  const audio: AudioPaths = {};
  for (const name of AUDIO_NAMES) {
    const file = data.audio?.[name];
    if (file !== undefined) audio[name] = file;
  }
  return { settings: freezeSettings(settings), audio };
}

function endKey(written: '#' | '*' | 'none' | undefined): KeypadSettings['endKey'] {
  if (written === undefined) return DEFAULT_SETTINGS.keypad.endKey;
  return written === 'none' ? undefined : written;
}

/**
 * An unquoted phone number is a YAML integer, which would drop a leading 0
 * or +; the text as written keeps them.
 */
function numberAsWritten(doc: Document, at: readonly string[], value: number): string {
  const node = doc.getIn(at, true);
  const source = isScalar(node) ? node.source : undefined;
  return source !== undefined && /^\+?[0-9]+$/.test(source) ? source : String(value);
}

/** Settings are shared by every call that uses the same prompts: nothing may change them. */
function freezeSettings(settings: PromptSettings): PromptSettings {
  for (const target of Object.values(settings.transferTargets)) Object.freeze(target);
  Object.freeze(settings.transferTargets);
  Object.freeze(settings.transfer);
  freezeStyle(settings.style);
  Object.freeze(settings.silence);
  Object.freeze(settings.keypad);
  return Object.freeze(settings);
}
