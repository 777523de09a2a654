/**
 * The `language:` of a scenario or an eval: the language its call must be in, as Hotline's record
 * of the call says at its end (a prompts language folder's tag). Shared by both: the tag as it is
 * written, the settings it needs, and the check of the record.
 */
import { z } from 'zod';
import { prepareLanguageDetection } from '../language/detect.js';
import { baseLanguage, languageName, normaliseTag } from '../language/language-tag.js';

/** A language as a prompts folder is named (`de`, `tr`, `pt-BR`); `DE` or `pt_br` are taken and spelled so. */
export const LanguageTagSchema = z.string().transform((raw, ctx) => {
  const tag = normaliseTag(raw);
  if (tag !== undefined) return tag;
  ctx.addIssue({ code: 'custom', message: `"${raw}" is no language: write it as its prompts folder is named, e.g. de, tr, ar or pt-BR` });
  return z.NEVER;
});

/** The settings a call's language needs on: a language per call, and the recogniser told of it. */
export const LANGUAGE_SETTINGS = ['LANGUAGES', 'CONFIGURE_TRANSCRIPTION'] as const;

const OFF = new Set(['false', '0', 'no']);

/** The settings of `env` that would keep a call from its language, each with why. */
export function languageSettingProblems(env: Readonly<Record<string, string>>): { name: string; message: string }[] {
  return LANGUAGE_SETTINGS.filter((name) => OFF.has(env[name]?.trim().toLowerCase() ?? '')).map((name) => ({
    name,
    message: `${name} is on for a call with a language (language: is given): remove this setting, or the language`,
  }));
}

/** `de` (German), for messages. */
export function describeLanguage(tag: string): string {
  const name = languageName(tag);
  return name === tag ? tag : `${tag} (${name})`;
}

/**
 * Whether a call in `recorded` is in the `expected` language: the same tag, or the same language
 * when no region is expected (`de` holds for a call in `de-AT`, `de-AT` not for one in `de`).
 */
export function isInLanguage(recorded: string | undefined, expected: string): boolean {
  if (recorded === undefined) return false;
  const tag = normaliseTag(recorded) ?? recorded;
  return tag === expected || (!expected.includes('-') && baseLanguage(tag) === expected);
}

/** What the record says of the call's language, for a check's detail or a failure. */
export function recordedLanguage(recorded: string | undefined): string {
  return recorded === undefined
    ? "the call's record has no language: the prompts folder has no language folders (prompts/de/ …), or LANGUAGES is off"
    : `the call's record says ${describeLanguage(recorded)}`;
}

/** Undefined when the call was in the expected language; else what was expected and what was found. */
export function languageProblem(recorded: string | undefined, expected: string): string | undefined {
  if (isInLanguage(recorded, expected)) return undefined;
  return `expected the call in ${describeLanguage(expected)}, but ${recordedLanguage(recorded)}`;
}

/**
 * Resolves once a caller's words can be told apart by their language: a call that starts before
 * the detector's data is loaded would not be switched by a German caller's first words. False when
 * it cannot be loaded; the call is then played all the same.
 */
export async function languageDetectionReady(): Promise<boolean> {
  return prepareLanguageDetection().then(
    () => true,
    () => false,
  );
}
