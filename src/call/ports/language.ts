/**
 * What the call core needs to tell which language a caller speaks. The core owns the shape; the
 * detector (src/language/) is given to it, so the core never depends on a detection library.
 */
export interface DetectedLanguage {
  /** One of the candidates asked about. */
  readonly language: string;
  /** 0..1: how clearly the words are that language rather than another candidate. */
  readonly confidence: number;
}

export interface LanguageDetector {
  /** How sure a detection must be unless the prompts say otherwise. */
  readonly minConfidence: number;
  /** The language of `text` among `candidates` (base codes: `de`, `tr`); undefined when the words say too little. */
  detect(text: string, candidates: readonly string[]): DetectedLanguage | undefined;
}
