import { BargeInSchema, TtsSchema, VadSchema, type BargeIn, type Tts, type Vad } from '../protocol/actions.js';

/** The options a speak carries beyond its text; what front matter may set for how a line sounds. */
export interface SpeakStyle {
  tts?: Tts;
  barge_in?: BargeIn;
  vad?: Vad;
}

/** The front matter keys of a style, with the schemas the voice service's own fields have. */
export const STYLE_SHAPE = {
  tts: TtsSchema.optional(),
  barge_in: BargeInSchema.optional(),
  vad: VadSchema.optional(),
};

export const STYLE_KEYS: readonly string[] = Object.keys(STYLE_SHAPE);

/**
 * A goodbye or a hand-over the caller talks over would be cut off, and what
 * they said would reach a call that is already ending.
 */
export const NOT_INTERRUPTIBLE: SpeakStyle = freezeStyle({ barge_in: { strategy: 'none' } });

export const NO_STYLE: SpeakStyle = freezeStyle({});

/**
 * Later layers win, each option replaced whole: a file that sets barge_in
 * must not inherit, say, the global minimum_characters it did not ask for.
 */
export function layerStyles(...layers: readonly SpeakStyle[]): SpeakStyle {
  return freezeStyle(layers.reduce<SpeakStyle>((style, layer) => ({ ...style, ...styleFrom(layer) }), {}));
}

/** Only the options given: an option present but undefined would hide the one beneath it. */
export function styleFrom(options: SpeakStyle): SpeakStyle {
  const style: SpeakStyle = {};
  if (options.tts !== undefined) style.tts = options.tts;
  if (options.barge_in !== undefined) style.barge_in = options.barge_in;
  if (options.vad !== undefined) style.vad = options.vad;
  return style;
}

/** Deeply frozen: one style object is shared by every call that uses the same prompts. */
export function freezeStyle(style: SpeakStyle): SpeakStyle {
  const tts = style.tts;
  if (tts?.provider === 'eleven_labs' && typeof tts.voice === 'object') Object.freeze(tts.voice);
  for (const option of [style.tts, style.barge_in, style.vad]) if (option !== undefined) Object.freeze(option);
  return Object.freeze(style);
}
