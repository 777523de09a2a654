/**
 * prompts/vocabulary.txt (and a language folder's own): the words the recogniser is told to expect
 * — product names, street names, the business's own name — one per line. The production service
 * takes them as `configure_transcription`'s `custom_vocabulary`, within its limits.
 */
import type { PromptProblem } from './prompt-problem.js';

export const VOCABULARY_FILE = 'vocabulary.txt';

/** The voice service's limits on `custom_vocabulary` (its configure_transcription documentation). */
export const VOCABULARY_MAX_TERMS = 100;
export const VOCABULARY_MAX_CHARS = 200;

/** One term per line; `#` starts a comment; blank lines are skipped. Terms beyond the limits are left out, and said. */
export function parseVocabulary(text: string, file: string): { terms: readonly string[]; problems: PromptProblem[] } {
  const problems: PromptProblem[] = [];
  const terms: string[] = [];
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const term = raw.replace(/(^|\s)#.*$/, '').replace(/\s+/g, ' ').trim();
    if (term === '') continue;
    const line = index + 1;
    if (term.length > VOCABULARY_MAX_CHARS) {
      problems.push({ file, severity: 'warning', message: `line ${line}: a term is at most ${VOCABULARY_MAX_CHARS} characters (the voice service's limit); this one has ${term.length} and is left out` });
      continue;
    }
    const key = term.toLocaleLowerCase();
    if (seen.has(key)) {
      problems.push({ file, severity: 'warning', message: `line ${line}: "${term}" is listed already` });
      continue;
    }
    seen.add(key);
    terms.push(term);
  }
  if (terms.length > VOCABULARY_MAX_TERMS) {
    problems.push({
      file,
      severity: 'warning',
      message: `has ${terms.length} terms; the voice service takes at most ${VOCABULARY_MAX_TERMS}: the first ${VOCABULARY_MAX_TERMS} are used`,
    });
    terms.length = VOCABULARY_MAX_TERMS;
  }
  return { terms: Object.freeze(terms), problems };
}

/**
 * A language's vocabulary: its own terms first, then the default folder's (names are the same in
 * every language), within the service's limit.
 */
export function joinVocabularies(own: readonly string[], shared: readonly string[]): readonly string[] {
  const seen = new Set(own.map((t) => t.toLocaleLowerCase()));
  const joined = [...own, ...shared.filter((t) => !seen.has(t.toLocaleLowerCase()))];
  return Object.freeze(joined.slice(0, VOCABULARY_MAX_TERMS));
}
