// Placeholder until the detection lands.
export interface DetectedLanguage { language: string; confidence: number }
export const DEFAULT_MIN_CONFIDENCE = 0.5;
export function detectLanguage(_text: string, _among: readonly string[]): DetectedLanguage | undefined {
  return undefined;
}
