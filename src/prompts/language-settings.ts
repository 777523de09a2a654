/**
 * prompts/languages.yaml: which language the prompts folder itself is in, whether a caller who
 * clearly speaks another configured language is switched to it, and which language each inbound
 * line (the number called) starts in. The language folders themselves (prompts/de/, prompts/tr/)
 * are found on disk; this file only routes calls to them, and may be absent.
 */
import { z } from 'zod';
import { parseYamlFile } from '../yaml-file.js';
import type { PromptProblem } from './prompt-problem.js';

export const LANGUAGES_FILE = 'languages.yaml';

export interface LanguageRouting {
  /** The language of the prompts folder itself. */
  readonly default: string;
  /** Switch a call to another configured language when the caller clearly speaks it. */
  readonly detect: boolean;
  /** How sure a detection must be to switch; undefined: the detector's own threshold. */
  readonly minConfidence: number | undefined;
  /** The number called (digits only) → the language its calls start in. */
  readonly lines: ReadonlyMap<string, string>;
  /** A language → the tag the recogniser is given, where it differs from the usual (de → de-AT). */
  readonly transcription: ReadonlyMap<string, string>;
}

export const NO_ROUTING: LanguageRouting = Object.freeze({
  default: 'en',
  detect: true,
  minConfidence: undefined,
  lines: new Map<string, string>(),
  transcription: new Map<string, string>(),
});

const tag = z.string({ error: 'must be a language, such as de or de-AT' }).trim().min(2);

const LanguagesSchema = z.strictObject({
  default: tag.optional(),
  detect: z.boolean({ error: 'must be true or false' }).optional(),
  min_confidence: z.number().min(0.1).max(1).optional(),
  lines: z.record(z.string(), tag, { error: 'must map numbers called to languages, such as "4930123456": de' }).optional(),
  transcription: z.record(z.string(), tag).optional(),
});

export interface ParsedRouting {
  readonly routing: LanguageRouting;
  readonly problems: PromptProblem[];
}

/**
 * The file's routing; a broken file routes nothing (every call in the default language) and says
 * why, with its line. `known(tag)` normalises a written language, undefined when it is none.
 */
export function parseLanguages(text: string, known: (tag: string) => string | undefined): ParsedRouting {
  const problems: PromptProblem[] = [];
  const problem = (line: number | undefined, message: string): void => {
    problems.push({ file: LANGUAGES_FILE, severity: 'error', message: line === undefined ? message : `line ${line}: ${message}` });
  };
  if (text.trim() === '') return { routing: NO_ROUTING, problems };
  const parsed = parseYamlFile(text, LanguagesSchema);
  if ('problems' in parsed) {
    for (const p of parsed.problems) problem(p.line, p.path ? `${p.path}: ${p.message}` : p.message);
    return { routing: NO_ROUTING, problems };
  }
  const { data, lineOf } = parsed;
  const language = (written: string, at: readonly PropertyKey[]): string | undefined => {
    const normal = known(written);
    if (normal === undefined) problem(lineOf(at), `"${written}" is not a language (write its two-letter code, such as de, tr or ar)`);
    return normal;
  };
  const lines = new Map<string, string>();
  for (const [number, written] of Object.entries(data.lines ?? {})) {
    const digits = number.replace(/[^0-9]/g, '');
    const normal = language(written, ['lines', number]);
    if (digits === '') problem(lineOf(['lines', number]), `"${number}" is not a phone number`);
    else if (normal !== undefined) lines.set(digits, normal);
  }
  const transcription = new Map<string, string>();
  for (const [of, written] of Object.entries(data.transcription ?? {})) {
    const from = language(of, ['transcription', of]);
    const to = language(written, ['transcription', of]);
    if (from !== undefined && to !== undefined) transcription.set(from, to);
  }
  const routing: LanguageRouting = Object.freeze({
    default: (data.default !== undefined ? language(data.default, ['default']) : undefined) ?? NO_ROUTING.default,
    detect: data.detect ?? NO_ROUTING.detect,
    minConfidence: data.min_confidence ?? NO_ROUTING.minConfidence,
    lines,
    transcription,
  });
  return { routing, problems };
}
